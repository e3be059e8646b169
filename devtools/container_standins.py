"""Stand-ins for the Dockerfile's base images, made from Debian packages (dev/CI only, not shipped).

The project's machines reach Debian's mirror but no container registry, so
``podman build --pull=never`` needs local images under the official names
(e.g. ``docker.io/library/python:3.11-slim-bookworm``). This module builds
them with debootstrap, trims them to look like the official slim images and
imports them into podman's private store. Used by ``container.py base-images``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import tempfile
from pathlib import Path

from container_engine import STANDIN_PATH, ContainerError, State, detect_engine, engine_env, log, run

# What a Debian stand-in for an official python image needs: the interpreter,
# venv (with its bundled pip wheel), the shared libpython PyInstaller wants,
# and CA certificates. binutils is left out on purpose: the official image
# lacks it too, so the Dockerfile must install it where it needs it.
PYTHON_STANDIN_PACKAGES = ("python3", "python3-venv", "python3-pip", "libpython3.11", "ca-certificates")


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
