"""A copy of the server that another user can run, wherever the checkout and its virtualenv live.

Tests that drop privileges (uid 65534) must not start the server from the checkout:
in a private folder (root's home, a 0700 ``mktemp -d``) that user cannot read the
project's virtualenv or an editable install's sources. ``readable_copy`` builds, once
per run, a virtualenv in a world-readable temporary folder holding copies of the
installed ``magnotia-mcp`` distribution and everything it requires (or a copy of the
frozen executable), and returns a Launcher for it.

The copy's interpreter is the base interpreter of this run's virtualenv. If that sits
behind a directory other users cannot enter (pyenv under /root, say), ``reachable_steps``
gives the mount steps that open the way to it inside a private mount namespace only.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import shlex
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.support.server import Launcher

DISTRIBUTION = "magnotia-mcp"
PACKAGE = "magnotia_mcp"


def world_readable_dir(prefix: str) -> Path:
    """A new directory under the system's temporary folder that every user may read and enter."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    path.chmod(0o755)
    for parent in path.parents:  # /tmp itself must let others through
        if not os.stat(parent).st_mode & stat.S_IXOTH:
            raise RuntimeError(f"{parent} is closed to other users; set TMPDIR to a folder they can enter")
    return path


def _copy_distributions(site: Path) -> None:
    """Copy magnotia-mcp and every distribution it requires (recursively) into site."""
    done: set[str] = set()
    todo = [DISTRIBUTION]
    while todo:
        name = canonicalize_name(todo.pop())
        if name in done:
            continue
        done.add(name)
        dist = importlib.metadata.distribution(name)
        for file in dist.files or ():
            # Scripts live outside site-packages (../../bin); a .pth file would point back at the checkout.
            if file.parts[0] == ".." or file.suffix in (".pth", ".pyc"):
                continue
            source = Path(str(dist.locate_file(file)))
            if source.is_file():
                target = site / file
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target)
        for requirement in dist.requires or ():
            parsed = Requirement(requirement)
            if parsed.marker is None or parsed.marker.evaluate({"extra": ""}):
                todo.append(parsed.name)
    # An editable install lists no sources: copy the package the interpreter imports.
    spec = importlib.util.find_spec(PACKAGE)
    assert spec is not None, f"{PACKAGE} is not importable"
    assert spec.origin is not None, f"{PACKAGE} has no origin"
    shutil.copytree(
        Path(spec.origin).parent, site / PACKAGE, ignore=shutil.ignore_patterns("__pycache__"), dirs_exist_ok=True
    )


def readable_copy(launcher: Launcher, root: Path) -> Launcher:
    """A Launcher of the same kind whose server lives under root (which other users can read)."""
    if launcher.kind == "frozen":
        binary = root / Path(launcher.frozen_binary()).name
        shutil.copy2(launcher.frozen_binary(), binary)
        binary.chmod(0o755)
        return Launcher("frozen", str(binary))
    if launcher.kind not in ("package", "script"):
        raise ValueError(f"no local copy of a {launcher.kind} server")
    if Path(launcher.python).resolve() != Path(sys.executable).resolve():
        raise ValueError("the copy is made from this run's own environment")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout.strip()
    site = Path(purelib)
    _copy_distributions(site)
    for entry in importlib.metadata.distribution(DISTRIBUTION).entry_points:
        if entry.group == "console_scripts":
            script = venv / "bin" / entry.name
            script.write_text(
                f"#!{python}\nimport sys\nfrom {entry.module} import {entry.attr}\nsys.exit({entry.attr}())\n",
                encoding="utf-8",
            )
            script.chmod(0o755)
    # Compiled here, once: the other user may not write __pycache__ beside the sources.
    subprocess.run([str(python), "-m", "compileall", "-q", str(site)], check=True, timeout=300)
    for directory, _, files in os.walk(root):
        Path(directory).chmod(0o755)
        for name in files:
            path = Path(directory, name)
            if not path.is_symlink():
                path.chmod(path.stat().st_mode | 0o444)
    return Launcher(launcher.kind, python=str(python))


def blocked_ancestors(path: str) -> list[Path]:
    """Directories on path's way that other users cannot enter."""
    real = Path(os.path.realpath(path))
    return [p for p in reversed(real.parents) if not os.stat(p).st_mode & stat.S_IXOTH]


def interpreter_paths(launcher: Launcher) -> list[str]:
    """What the copy's server reads outside its own folder: the base interpreter and its standard library."""
    if launcher.kind == "frozen":
        return []
    return [os.path.realpath(launcher.python), sysconfig.get_paths()["stdlib"], sys.base_prefix]


def reachable_steps(paths: list[str], stage: Path) -> str | None:
    """Shell steps (run as root in a private mount namespace) that let other users reach paths.

    A directory on the way that is closed to others (e.g. /root holding pyenv) is covered
    with a tmpfs in the namespace only, with just the entries needed bound back in.
    None when that cannot be done (more than one closed directory on the way).
    """
    blocked = {b for p in paths for b in blocked_ancestors(p)}
    if not blocked:
        return ""
    if len(blocked) > 1:
        return None
    (closed,) = blocked
    behind = [Path(os.path.realpath(p)) for p in paths]
    children = sorted({p.relative_to(closed).parts[0] for p in behind if p.is_relative_to(closed)})
    stage.mkdir(parents=True, exist_ok=True)
    q = shlex.quote
    steps = f"mount --bind {q(str(closed))} {q(str(stage))}; mount -t tmpfs -o mode=755 tmpfs {q(str(closed))}; "
    for child in children:
        inside, saved = q(str(closed / child)), q(str(stage / child))
        make = "mkdir" if (stage / child).is_dir() or (closed / child).is_dir() else "touch"
        steps += f"{make} {inside}; mount --bind {saved} {inside}; "
    return steps


def why_no_read_only_mount() -> str | None:
    """Why a read-only bind mount in a private mount namespace cannot be made here, or None."""
    if sys.platform != "linux":
        return "read-only bind mounts in a private mount namespace need Linux"
    if os.geteuid() != 0:
        return "needs root to create a mount namespace (unshare -m) and bind-mount read-only"
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        return "needs unshare and mount (util-linux)"
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True, timeout=10, check=False)
    if probe.returncode != 0:
        return f"unshare -m is not permitted here: {probe.stderr.decode(errors='replace').strip()}"
    return None


def why_not_as_another_user() -> str | None:
    """Why this run's own interpreter and sources cannot be run as another user here (as_another_user), or None."""
    if sys.platform != "linux":
        return "running as another user this way needs Linux (a private mount namespace)"
    if os.geteuid() != 0:
        return "needs root to run a command as another user"
    if shutil.which("setpriv") is None or shutil.which("unshare") is None:
        return "needs setpriv and unshare (util-linux)"
    if len({closed for path in _this_run_paths() for closed in blocked_ancestors(path)}) > 1:
        return f"this run's interpreter and sources sit behind several closed directories: {_this_run_paths()}"
    return why_no_read_only_mount()


def as_another_user(argv: list[str], uid: int, stage: Path) -> list[str]:
    """argv, as a command that runs it as uid (its group the same number, no other groups) with this run's own
    interpreter and import path, made reachable for that user inside a private mount namespace (reachable_steps).

    For a command that only reads the checkout (it writes no __pycache__ there: it may not); stage is an empty
    folder of root's for the mount steps. Call why_not_as_another_user first.
    """
    steps = reachable_steps(_this_run_paths(), stage)
    assert steps is not None, why_not_as_another_user()
    drop = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
    return ["unshare", "-m", "sh", "-c", f'set -e; {steps}exec "$@"', "sh", *drop, *argv]


def _this_run_paths() -> list[str]:
    """What this run's interpreter reads: itself, its standard library, and every folder on its import path."""
    found = [os.path.realpath(sys.executable), sysconfig.get_paths()["stdlib"], sys.base_prefix]
    return found + [os.path.realpath(p) for p in sys.path if p and os.path.isdir(p)]
