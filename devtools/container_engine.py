"""Which container engine runs here, and podman's private configuration (dev/CI only, not shipped).

``devtools/`` holds the tools developers and CI use around the project; none
of it reaches the package, the executable or the image. This module is the
shared base of ``container.py``: errors, logging, running commands, telling
docker from podman, and ``setup`` (podman with the settings these machines
need; the reasons are in docs/containers.md).

All podman state lives in a private folder (default ``build/containers``, or
``$MAGNOTIA_CONTAINER_STATE``) and is selected with ``CONTAINERS_CONF`` /
``CONTAINERS_STORAGE_CONF``, so nothing under /etc changes. Stdlib only,
Python 3.10+.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

APT_PACKAGES = ("podman", "buildah", "runc", "debootstrap")
# Commands whose absence means the matching Debian package is missing.
APT_COMMANDS = {"podman": "podman", "buildah": "buildah", "runc": "runc", "debootstrap": "debootstrap"}
# The official images' PATH, given to the stand-ins; also where to look for
# debootstrap and runc, which live in sbin (not on every user's PATH).
STANDIN_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


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
# Written by devtools/container.py; see docs/containers.md.
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
# Written by devtools/container.py.
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


APT_LOCK_WAIT = 900  # seconds apt waits for the dpkg lock another apt holds


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
        # Wait for another apt (unattended upgrades, a second CI clone on the machine) instead of failing at once.
        wait = ["-o", f"DPkg::Lock::Timeout={APT_LOCK_WAIT}"]
        run(["apt-get", *wait, "update"], env=apt_env)
        run(["apt-get", *wait, "install", "-y", *missing], env=apt_env)
    else:
        log("podman, buildah, runc and debootstrap are installed")
    env = engine_env("podman", state)
    run(["podman", "info", "--format", "{{.Host.OCIRuntime.Name}} {{.Store.GraphDriverName}}"], env=env)
    print(f"export CONTAINERS_CONF={state.containers_conf}")
    print(f"export CONTAINERS_STORAGE_CONF={state.storage_conf}")
    return 0
