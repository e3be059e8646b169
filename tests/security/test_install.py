"""``install``/``uninstall``/``doctor`` against a local attacker's (or an unlucky user's) config paths.

Each test runs the real command (tests/e2e/test_install.py's ``install_command``) in a throwaway
home holding real files, real symlinks, a real FIFO, a directory, a device node. A refusal must
exit 1, say why and what to do, and write nothing anywhere: the whole home and every folder a
link leads to are snapshotted (names, types, modes, owners, bytes, link targets) before and after.
A symlinked dotfile (stow, chezmoi, home-manager) pointing at a regular file keeps working: the
link stays and the file it leads to is edited in place.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import resource
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from devkit.storefactory import StoreBuilder
from tests.e2e.test_install import config_file, existing, host_argv, install_command, serves
from tests.support.hosts import EXISTING
from tests.support.server import Launcher

# A file that is none of JSON, TOML or YAML-as-Goose-writes-it: what a link to /etc/passwd reads.
PASSWD = "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"
FORMAT_HOSTS = ("cursor", "vscode", "codex", "goose")  # JSON, JSONC, TOML, YAML
SMALL_CAP = 8 * 1024 * 1024  # every host but Claude Code (docs/hosts.md)

Snapshot = dict[str, tuple[object, ...]]


def snapshot(*roots: Path) -> Snapshot:
    """Every entry under roots: type, mode, owner, size and bytes (regular files) or target (links)."""
    seen: Snapshot = {}
    for root in roots:
        for folder, dirs, files in os.walk(root):
            for name in [".", *dirs, *files]:
                path = Path(folder) / name
                st = os.lstat(path)
                facts: tuple[object, ...] = (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid)
                if stat.S_ISREG(st.st_mode):
                    facts += (hashlib.sha256(path.read_bytes()).hexdigest(),)
                elif stat.S_ISLNK(st.st_mode):
                    facts += (os.readlink(path),)
                elif stat.S_ISCHR(st.st_mode):
                    facts += (st.st_rdev,)
                seen[str(path)] = facts
    assert seen, roots
    return seen


@pytest.fixture
def elsewhere(tmp_path: Path) -> Path:
    """A folder outside the home, where links lead."""
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    return folder


@pytest.fixture
def store(new_store: Callable[..., StoreBuilder]) -> Path:
    builder = new_store("store")
    builder.transcript(title="Installed", raw_text="served through the host's own config")
    return builder.close()


@pytest.fixture
def device(elsewhere: Path) -> Path:
    """A character device of our own (the same numbers as /dev/null), so no test ever risks the real one."""
    node = elsewhere / "null"
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("mknod is not permitted here")
    return node


def run(
    argv: list[str], *args: str, umask: int | None = None, fsize: int | None = None
) -> subprocess.CompletedProcess[str]:
    """The command to its end (the timeout only stops a hung run; nothing asserts on time)."""

    def limits() -> None:
        if umask is not None:
            os.umask(umask)
        if fsize is not None:  # writes past fsize bytes fail with EFBIG instead of killing the process
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    return subprocess.run(
        [*argv, *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
        check=False,
        env=os.environ,
        preexec_fn=limits,
    )


def refused(done: subprocess.CompletedProcess[str], why: str) -> None:
    """Exit 1, no traceback, the reason and what to do next on stderr, nothing claimed on stdout."""
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert why.lower() in done.stderr.lower(), done.stderr
    assert "Nothing was changed" in done.stderr, done.stderr
    assert "added" not in done.stdout, done.stdout
    assert "removed" not in done.stdout, done.stdout


def host_folder(home: Path, host: str) -> Path:
    """The config file's folder, made so that the host counts as installed."""
    path = config_file(home, host)
    path.parent.mkdir(parents=True, exist_ok=True)
    if host == "claude-code":
        (home / ".claude").mkdir(exist_ok=True)
    return path


# -- what the config path is -----------------------------------------------------------------------------


@pytest.mark.parametrize("via_link", [False, True], ids=["file", "link"])
@pytest.mark.parametrize("host", FORMAT_HOSTS)
@pytest.mark.parametrize("action", ["install", "uninstall"])
def test_a_file_not_in_the_hosts_format_is_refused(
    action: str, host: str, via_link: bool, launcher: Launcher, home: Path, elsewhere: Path, store: Path
) -> None:
    """/etc/passwd's shape (or a link to a copy of it) is neither JSON, TOML nor Goose's YAML: refused."""
    if host == "codex" and sys.version_info < (3, 11):
        pytest.skip("TOML is edited only where tomllib (Python 3.11+) can check the edit")
    path = host_folder(home, host)
    if via_link:
        (elsewhere / "passwd").write_text(PASSWD, encoding="utf-8")
        path.symlink_to(elsewhere / "passwd")
    else:
        path.write_text(PASSWD, encoding="utf-8")
    before = snapshot(home, elsewhere)
    args = ["install", host, "--db", str(store)] if action == "install" else ["uninstall", host]
    done = run(install_command(launcher), *args)
    refused(done, "cannot edit")
    assert snapshot(home, elsewhere) == before


@pytest.mark.parametrize("action", ["install", "uninstall", "dry-run"])
def test_a_link_to_a_device_is_refused_and_the_device_untouched(
    action: str, launcher: Launcher, home: Path, elsewhere: Path, device: Path, store: Path
) -> None:
    path = host_folder(home, "cursor")
    path.symlink_to(device)
    before = snapshot(home, elsewhere)
    args = {
        "install": ["install", "cursor", "--db", str(store)],
        "uninstall": ["uninstall", "cursor"],
        "dry-run": ["install", "cursor", "--db", str(store), "--dry-run"],
    }[action]
    done = run(install_command(launcher), *args)
    refused(done, "character device")
    assert "regular file" in done.stderr
    assert stat.S_ISCHR(os.lstat(device).st_mode)
    assert snapshot(home, elsewhere) == before


def test_a_link_to_dev_null_is_refused_and_dev_null_stays_a_device(
    launcher: Launcher, home: Path, elsewhere: Path, store: Path
) -> None:
    dev_null = os.lstat("/dev/null")
    assert stat.S_ISCHR(dev_null.st_mode)
    path = host_folder(home, "goose")
    path.symlink_to("/dev/null")
    before = snapshot(home, elsewhere)
    for args in (["install", "goose", "--db", str(store)], ["uninstall", "goose"]):
        refused(run(install_command(launcher), *args), "character device")
        after = os.lstat("/dev/null")
        assert stat.S_ISCHR(after.st_mode)
        assert (after.st_ino, after.st_rdev, after.st_mode) == (dev_null.st_ino, dev_null.st_rdev, dev_null.st_mode)
    assert snapshot(home, elsewhere) == before


@pytest.mark.parametrize("via_link", [False, True], ids=["fifo", "link"])
@pytest.mark.parametrize("action", ["install", "uninstall", "dry-run"])
def test_a_fifo_is_refused_without_hanging(
    action: str, via_link: bool, launcher: Launcher, home: Path, elsewhere: Path, store: Path
) -> None:
    """Nobody writes to the FIFO: a reader that opened it would wait forever (the run's timeout would fire)."""
    path = host_folder(home, "goose")
    if via_link:
        os.mkfifo(elsewhere / "pipe")
        path.symlink_to(elsewhere / "pipe")
    else:
        os.mkfifo(path)
    before = snapshot(home, elsewhere)
    args = {
        "install": ["install", "goose", "--db", str(store)],
        "uninstall": ["uninstall", "goose"],
        "dry-run": ["install", "goose", "--db", str(store), "--dry-run"],
    }[action]
    refused(run(install_command(launcher), *args), "FIFO")
    assert snapshot(home, elsewhere) == before


@pytest.mark.parametrize("action", ["install", "uninstall", "config"])
def test_a_directory_is_refused_without_a_traceback(
    action: str, launcher: Launcher, home: Path, elsewhere: Path, store: Path
) -> None:
    path = host_folder(home, "codex")
    path.mkdir()
    args = {
        "install": ["install", "codex", "--db", str(store)],
        "uninstall": ["uninstall", "codex"],
        "config": ["install", "cursor", "--db", str(store), "--config", str(elsewhere)],
    }[action]
    before = snapshot(home, elsewhere)
    refused(run(install_command(launcher), *args), "a directory")
    assert snapshot(home, elsewhere) == before


@pytest.mark.parametrize("force", [False, True], ids=["installed", "force"])
def test_a_dangling_link_is_not_followed_to_create_a_file(
    force: bool, launcher: Launcher, home: Path, elsewhere: Path, store: Path
) -> None:
    path = config_file(home, "cursor")
    path.parent.mkdir(parents=True)
    path.symlink_to(elsewhere / "planted.json")
    before = snapshot(home, elsewhere)
    done = run(install_command(launcher), "install", "cursor", "--db", str(store), *(["--force"] if force else []))
    refused(done, "does not exist")
    assert "remove the link" in done.stderr
    assert not (elsewhere / "planted.json").exists()
    assert snapshot(home, elsewhere) == before


def test_a_link_loop_is_refused(launcher: Launcher, home: Path, elsewhere: Path, store: Path) -> None:
    path = host_folder(home, "gemini-cli")
    path.symlink_to(elsewhere / "a")
    (elsewhere / "a").symlink_to(path)
    before = snapshot(home, elsewhere)
    for args in (["install", "gemini-cli", "--db", str(store)], ["uninstall", "gemini-cli"]):
        refused(run(install_command(launcher), *args), "cannot be followed")
    assert snapshot(home, elsewhere) == before


@pytest.mark.parametrize("dry_run", [False, True], ids=["write", "dry-run"])
def test_force_does_not_create_folders_through_a_dangling_link(
    dry_run: bool, launcher: Launcher, home: Path, elsewhere: Path, store: Path
) -> None:
    (home / ".cursor").symlink_to(elsewhere / "made-for-you")
    before = snapshot(home, elsewhere)
    args = ["install", "cursor", "--db", str(store), "--force", *(["--dry-run"] if dry_run else [])]
    done = run(install_command(launcher), *args)
    refused(done, "does not exist")
    assert snapshot(home, elsewhere) == before


def test_force_creates_folders_and_file_for_the_owner_only(launcher: Launcher, home: Path, store: Path) -> None:
    """Under umask 000 the new folders are 0700 and the new file 0600, not world-writable."""
    done = run(install_command(launcher), "install", "cline", "--db", str(store), "--force", umask=0)
    assert done.returncode == 0, done.stdout + done.stderr
    path = config_file(home, "cline")
    made = [p for p in path.parents if p.is_relative_to(home) and p != home]
    assert len(made) == 6, made  # .config/Code/User/globalStorage/saoudrizwan.claude-dev/settings
    assert {p: stat.S_IMODE(p.stat().st_mode) for p in made} == dict.fromkeys(made, 0o700)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    serves(host_argv("cline", path))


def test_an_oversized_config_is_refused(launcher: Launcher, home: Path, elsewhere: Path, store: Path) -> None:
    path = host_folder(home, "cursor")
    padding = SMALL_CAP - len('{"pad": "", "mcpServers": {}}') + 1
    path.write_text('{"pad": "' + "x" * padding + '", "mcpServers": {}}', encoding="utf-8")
    assert path.stat().st_size == SMALL_CAP + 1
    before = snapshot(home, elsewhere)
    done = run(install_command(launcher), "install", "cursor", "--db", str(store))
    refused(done, "8 MiB")
    assert snapshot(home, elsewhere) == before


# -- symlinked dotfiles keep working -----------------------------------------------------------------------


@pytest.mark.parametrize("host", FORMAT_HOSTS)
def test_a_stow_style_link_keeps_working(
    host: str, launcher: Launcher, home: Path, elsewhere: Path, store: Path
) -> None:
    """A relative link into a dotfiles folder: the link stays, the file it leads to is edited there."""
    if host == "codex" and sys.version_info < (3, 11):
        pytest.skip("TOML is edited only where tomllib (Python 3.11+) can check the edit")
    path = host_folder(home, host)
    dotfile = elsewhere / "dotfiles" / host / path.name
    dotfile.parent.mkdir(parents=True)
    before = existing(host).encode()
    dotfile.write_bytes(before)
    dotfile.chmod(0o640)
    link = os.path.relpath(dotfile, path.parent)
    path.symlink_to(link)

    done = run(install_command(launcher), "install", host, "--db", str(store))
    assert done.returncode == 0, done.stdout + done.stderr
    assert os.readlink(path) == link
    assert stat.S_IMODE(dotfile.stat().st_mode) == 0o640
    serves(host_argv(host, path))
    backups = list(dotfile.parent.glob(f"{dotfile.name}.*.bak"))
    assert [b.read_bytes() for b in backups] == [before]
    assert stat.S_IMODE(backups[0].stat().st_mode) == 0o640
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]  # nothing beside the link

    gone = run(install_command(launcher), "uninstall", host)
    assert gone.returncode == 0, gone.stdout + gone.stderr
    assert os.readlink(path) == link
    assert dotfile.read_bytes() == before


# -- backups and the rewritten file -----------------------------------------------------------------------


def test_a_planted_link_at_the_backup_name_receives_nothing(
    launcher: Launcher, home: Path, elsewhere: Path, store: Path
) -> None:
    """Dangling links planted at every backup name the next minute could pick: the backup goes elsewhere."""
    path = host_folder(home, "claude-code")
    path.write_text(EXISTING["claude-code"], encoding="utf-8")
    path.chmod(0o600)
    now = int(time.time())
    planted = {}
    for second in range(now - 1, now + 61):
        name = f"{path.name}.{time.strftime('%Y%m%d-%H%M%S', time.localtime(second))}.bak"
        (path.parent / name).symlink_to(elsewhere / f"stolen-{second}")
        planted[name] = elsewhere / f"stolen-{second}"
    done = run(install_command(launcher), "install", "claude-code", "--db", str(store), umask=0)
    assert done.returncode == 0, done.stdout + done.stderr
    assert list(elsewhere.iterdir()) == []
    for name, target in planted.items():
        assert os.readlink(path.parent / name) == str(target)
    backups = [p for p in path.parent.glob(f"{path.name}.*.bak") if p.name not in planted]
    assert len(backups) == 1, backups
    backup = backups[0]
    assert backup.name.removesuffix(".bak").rsplit("-", 1)[0] + ".bak" in planted  # it had to step past one
    assert stat.S_ISREG(os.lstat(backup).st_mode)
    assert stat.S_IMODE(backup.stat().st_mode) == 0o600
    assert backup.read_text(encoding="utf-8") == EXISTING["claude-code"]


@pytest.mark.parametrize("where", ["backup", "new file"])
def test_no_file_is_ever_wider_than_the_original_even_when_a_write_fails(
    where: str, launcher: Launcher, home: Path, elsewhere: Path, store: Path
) -> None:
    """umask 000 and a file-size limit that makes the backup's (or the new file's) write fail midway.

    Whatever the run leaves behind shows the mode it was created with: nothing in the home may be
    wider than the original 0600, and a failed run is a refusal that leaves the home as it was.
    """
    path = host_folder(home, "cursor")
    text = EXISTING["json"] if where == "backup" else "{}\n"
    path.write_text(text, encoding="utf-8")
    path.chmod(0o600)
    limit = len(text) - 1 if where == "backup" else len(text) + 1
    before = snapshot(home, elsewhere)
    done = run(install_command(launcher), "install", "cursor", "--db", str(store), umask=0, fsize=limit)
    modes = {str(p): stat.S_IMODE(p.lstat().st_mode) for p in path.parent.iterdir()}
    assert all(mode & ~0o600 == 0 for mode in modes.values()), modes
    refused(done, "File too large")
    assert snapshot(home, elsewhere) == before


def test_backup_and_new_file_keep_the_originals_mode_and_owner(
    launcher: Launcher, home: Path, elsewhere: Path, store: Path
) -> None:
    if os.geteuid() != 0:
        pytest.skip("giving the original another owner needs root")
    path = host_folder(home, "windsurf")
    path.write_text(EXISTING["json"], encoding="utf-8")
    os.chown(path, 4321, 4322)
    path.chmod(0o604)
    done = run(install_command(launcher), "install", "windsurf", "--db", str(store), umask=0)
    assert done.returncode == 0, done.stdout + done.stderr
    (backup,) = path.parent.glob(f"{path.name}.*.bak")
    for written in (path, backup):
        st = written.stat()
        assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (4321, 4322, 0o604), written
    assert sorted(p.name for p in path.parent.iterdir()) == sorted([path.name, backup.name])  # no temp left


# -- Claude Code with its CLI on PATH, and doctor ----------------------------------------------------------


@pytest.fixture
def claude_stand_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: Path) -> Path:
    """A `claude` on PATH that only records that it was started (the real CLI: tests/e2e/test_install.py).

    Returns the file it writes when run; a refusal must come before the CLI is ever started.
    """
    bindir = tmp_path / "claude-bin"
    bindir.mkdir()
    called = tmp_path / "claude-was-run"
    script = bindir / "claude"
    script.write_text(f'#!/bin/sh\necho "$@" >> "{called}"\n', encoding="utf-8")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}:/usr/bin:/bin")
    (home / ".claude").mkdir()
    return called


@pytest.mark.parametrize("kind", ["device", "fifo", "dangling", "not json"])
@pytest.mark.parametrize("action", ["install", "uninstall"])
def test_claude_code_with_its_cli_refuses_the_same_files(
    kind: str,
    action: str,
    claude_stand_in: Path,
    launcher: Launcher,
    home: Path,
    elsewhere: Path,
    device: Path,
    store: Path,
) -> None:
    path = home / ".claude.json"
    if kind == "device":
        path.symlink_to(device)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "dangling":
        path.symlink_to(elsewhere / "gone.json")
    else:
        path.write_text(PASSWD, encoding="utf-8")
    before = snapshot(home, elsewhere)
    args = ["install", "claude-code", "--db", str(store)] if action == "install" else ["uninstall", "claude-code"]
    done = run(install_command(launcher), *args)
    why = {"device": "character device", "fifo": "FIFO", "dangling": "does not exist", "not json": "cannot edit"}
    refused(done, why[kind])
    assert not claude_stand_in.exists()
    assert snapshot(home, elsewhere) == before


def test_doctor_neither_hangs_on_a_fifo_nor_fails_on_a_directory(
    launcher: Launcher, home: Path, elsewhere: Path, store: Path
) -> None:
    os.mkfifo(host_folder(home, "goose"))
    host_folder(home, "codex").mkdir()
    host_folder(home, "cursor").write_text(json.dumps({"mcpServers": {}}), encoding="utf-8")
    before = snapshot(home, elsewhere)
    done = run([*install_command(launcher), "doctor", "--db", str(store)])
    assert "Traceback" not in done.stderr, done.stderr
    assert re.search(r"^  goose: .*cannot read: .*FIFO", done.stdout, re.M), done.stdout
    assert re.search(r"^  codex: .*cannot read: .*a directory", done.stdout, re.M), done.stdout
    assert snapshot(home, elsewhere) == before
