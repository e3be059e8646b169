"""serve --http refuses a bearer token others could guess, read, replace or redirect (issue 18, finding 5).

Each test starts the real server (``serve --http``) with a throwaway config folder and real files, and
reads what a user sees: whether it listened, its exit code and its one line on stderr. A server that
listens is stopped again. The token itself must never be in what the server prints on a refusal.
The owner and mode checks are POSIX only (Windows has neither; the server skips them there).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from devkit.storefactory import StoreBuilder
from tests.support.links import chain_through_open_folder
from tests.support.server import Launcher

READY = re.compile(r"listening on (http://\S+/mcp)")
GENERATE = "python3 -c 'import secrets; print(secrets.token_urlsafe(32))'"
SAVED = Path("com.magnotia.mcp") / "http-token"
POSIX = pytest.mark.skipif(sys.platform == "win32", reason="owners and modes are POSIX; Windows skips these checks")


@dataclass
class Outcome:
    listened: bool
    code: int
    stderr: str


@pytest.fixture(autouse=True)
def _local(launcher: Launcher) -> None:
    if not launcher.local:
        pytest.skip("these files are made on this machine, for a server that runs here")


@pytest.fixture
def db(tmp_path: Path) -> Path:
    builder = StoreBuilder(tmp_path / "store" / "magnotia.db")
    builder.transcript(title="Kept", raw_text="hello")
    return builder.close()


@pytest.fixture
def config(tmp_path: Path) -> Path:
    """XDG_CONFIG_HOME for the server: where its saved token lives (not created yet)."""
    return tmp_path / "config"


def environment(config: Path, token: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "MAGNOTIA_MCP_TOKEN"}
    env["XDG_CONFIG_HOME"] = str(config)
    if token is not None:
        env["MAGNOTIA_MCP_TOKEN"] = token
    return env


def serve(launcher: Launcher, db: Path, config: Path, *extra: str, token: str | None = None) -> Outcome:
    """Start serve --http; stop it once it says it listens. Reads stderr to its end: no waiting on a clock."""
    argv = launcher.argv(db, ["serve", "--http", "127.0.0.1:0", *extra])
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=environment(config, token),
    )
    assert proc.stderr is not None
    lines: list[str] = []
    listened = False
    for raw in proc.stderr:
        lines.append(raw.decode("utf-8", "replace"))
        if READY.search(lines[-1]) and not listened:
            listened = True
            proc.terminate()
    return Outcome(listened, proc.wait(), "".join(lines))


def refused(outcome: Outcome, *needles: str, secret: str | None = None) -> str:
    """The refusal: exit 2, never listened, one line on stderr holding every needle and not the secret."""
    assert not outcome.listened, "serve --http started:\n" + outcome.stderr
    assert outcome.code == 2, outcome.stderr
    lines = outcome.stderr.strip().splitlines()
    assert len(lines) == 1, outcome.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    if secret is not None:
        assert secret not in outcome.stderr
    return lines[0]


def doctor(db: Path, config: Path, token: str | None = None) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "magnotia_mcp", "--db", str(db), "doctor", "--json"]
    return subprocess.run(
        argv, capture_output=True, text=True, encoding="utf-8", timeout=60, check=False, env=environment(config, token)
    )


def write_private(path: Path, text: str, mode: int = 0o600) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    path.write_text(text, encoding="utf-8")
    path.chmod(mode)
    return path


# -- how long ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("token", ["x", secrets.token_urlsafe(32)[:31]], ids=["one-character", "31-characters"])
def test_a_token_from_the_environment_shorter_than_32_characters_is_refused(
    launcher: Launcher, db: Path, config: Path, token: str
) -> None:
    secret = token if len(token) > 1 else None  # one character is in any message
    refused(serve(launcher, db, config, token=token), "$MAGNOTIA_MCP_TOKEN", "at least 32", GENERATE, secret=secret)
    assert not (config / SAVED).exists()


def test_a_32_character_token_is_accepted(launcher: Launcher, db: Path, config: Path) -> None:
    token = secrets.token_urlsafe(32)[:32]
    outcome = serve(launcher, db, config, token=token)
    assert outcome.listened, outcome.stderr
    assert token not in outcome.stderr


def test_a_token_with_a_space_or_a_non_ascii_character_is_refused(launcher: Launcher, db: Path, config: Path) -> None:
    for token in ["correct horse battery staple and more words", "é" * 40]:
        refused(serve(launcher, db, config, token=token), "$MAGNOTIA_MCP_TOKEN", "visible ASCII", secret=token)


def test_a_short_token_in_a_token_file_is_refused(launcher: Launcher, db: Path, tmp_path: Path, config: Path) -> None:
    path = write_private(tmp_path / "secret" / "token", "tooshort\n")
    refused(
        serve(launcher, db, config, "--token-file", str(path)), str(path), "at least 32", GENERATE, secret="tooshort"
    )


# -- a --token-file others can read or replace ----------------------------------------------------------------------


@POSIX
@pytest.mark.parametrize("mode", [0o644, 0o604, 0o606])
def test_a_token_file_other_users_can_read_or_write_is_refused(
    launcher: Launcher, db: Path, tmp_path: Path, config: Path, mode: int
) -> None:
    token = secrets.token_urlsafe(32)
    path = write_private(tmp_path / "secret" / "token", token + "\n", mode)
    refused(serve(launcher, db, config, "--token-file", str(path)), str(path), f"chmod 600 {path}", secret=token)


@POSIX
def test_a_token_file_in_a_folder_others_can_write_is_refused(
    launcher: Launcher, db: Path, tmp_path: Path, config: Path
) -> None:
    token = secrets.token_urlsafe(32)
    path = write_private(tmp_path / "shared" / "token", token + "\n")
    path.parent.chmod(0o777)
    refused(
        serve(launcher, db, config, "--token-file", str(path)),
        str(path.parent),
        f"chmod go-w {path.parent}",
        secret=token,
    )


@POSIX
def test_a_token_file_in_a_sticky_shared_folder_like_tmp_is_accepted(
    launcher: Launcher, db: Path, tmp_path: Path, config: Path
) -> None:
    """In a sticky folder (/tmp) only a file's owner may rename or remove it: the file's own checks suffice."""
    token = secrets.token_urlsafe(32)
    path = write_private(tmp_path / "sticky" / "token", token + "\n")
    path.parent.chmod(0o1777)
    outcome = serve(launcher, db, config, "--token-file", str(path))
    assert outcome.listened, outcome.stderr


@POSIX
@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a file to another user needs root")
def test_a_token_file_owned_by_another_user_is_refused(
    launcher: Launcher, db: Path, tmp_path: Path, config: Path
) -> None:
    token = secrets.token_urlsafe(32)
    path = write_private(tmp_path / "secret" / "token", token + "\n")
    os.chown(path, 65534, 65534)
    refused(serve(launcher, db, config, "--token-file", str(path)), str(path), "another user", secret=token)


@POSIX
@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a file to another group needs root")
def test_a_token_file_its_group_may_read_is_refused_unless_the_group_is_the_users_own(
    launcher: Launcher, db: Path, tmp_path: Path, config: Path
) -> None:
    """Debian's ssh rule: with per-user groups (umask 002) a group-readable file is private; with a shared one, not."""
    token = secrets.token_urlsafe(32)
    path = write_private(tmp_path / "secret" / "token", token + "\n", 0o640)
    os.chown(path, 0, 65534)  # nogroup: not root's own group
    refused(serve(launcher, db, config, "--token-file", str(path)), str(path), f"chmod 600 {path}", secret=token)
    grp, pwd = pytest.importorskip("grp"), pytest.importorskip("pwd")
    if [p.pw_name for p in pwd.getpwall() if p.pw_gid == 0] != ["root"] or grp.getgrgid(0).gr_mem:
        pytest.skip("group 0 has members other than root here")
    os.chown(path, 0, 0)  # root's own group: only root is in it
    outcome = serve(launcher, db, config, "--token-file", str(path))
    assert outcome.listened, outcome.stderr


def test_a_token_file_through_a_symlink_is_followed(launcher: Launcher, db: Path, tmp_path: Path, config: Path) -> None:
    """Kubernetes and Compose mount secrets behind symlinks: --token-file names the file the user chose."""
    token = secrets.token_urlsafe(32)
    path = write_private(tmp_path / "secret" / "..data" / "token", token + "\n")
    link = tmp_path / "secret" / "token"
    link.symlink_to(path)
    outcome = serve(launcher, db, config, "--token-file", str(link))
    assert outcome.listened, outcome.stderr
    assert token not in outcome.stderr


@POSIX
def test_a_link_in_the_middle_of_a_token_files_chain_kept_in_an_open_folder_is_refused(
    launcher: Launcher, db: Path, tmp_path: Path, config: Path
) -> None:
    """--token-file names a link (in the user's own folder) to a link in an open folder, which leads to the user's own
    token: neither the folder named nor the token's is open, but anyone may repoint the middle link at a token of
    their own and so choose the server's token."""
    token = secrets.token_urlsafe(32)
    path = write_private(tmp_path / "secret" / "token", token + "\n")
    named, shared = chain_through_open_folder(tmp_path, path, "token")
    refused(
        serve(launcher, db, config, "--token-file", str(named)),
        f"the folder {shared} (mode 0777)",
        f"chmod go-w {shared}",
        secret=token,
    )
    shared.chmod(0o755)
    outcome = serve(launcher, db, config, "--token-file", str(named))
    assert outcome.listened, outcome.stderr


# -- a --token-file that is not a file -----------------------------------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_as_token_file_is_refused_without_waiting_for_a_writer(
    launcher: Launcher, db: Path, tmp_path: Path, config: Path
) -> None:
    fifo = tmp_path / "secret" / "token"
    fifo.parent.mkdir(mode=0o700)
    os.mkfifo(fifo, 0o600)
    # Nothing ever opens the FIFO for writing: a server that waits for a writer never gets here.
    refused(serve(launcher, db, config, "--token-file", str(fifo)), str(fifo), "not a regular file")


def test_a_directory_as_token_file_is_refused(launcher: Launcher, db: Path, tmp_path: Path, config: Path) -> None:
    folder = tmp_path / "secret"
    folder.mkdir(mode=0o700)
    refused(serve(launcher, db, config, "--token-file", str(folder)), str(folder), "not a regular file")


def test_a_huge_token_file_is_refused_unread(launcher: Launcher, db: Path, tmp_path: Path, config: Path) -> None:
    token = secrets.token_urlsafe(32)
    path = write_private(tmp_path / "secret" / "token", token + "\n" + "#" * (1 << 20))
    refused(serve(launcher, db, config, "--token-file", str(path)), str(path), "4096 bytes", secret=token)


# -- the token serve --http generates and keeps --------------------------------------------------------------------


@POSIX
def test_the_generated_token_and_every_folder_made_for_it_are_private(
    launcher: Launcher, db: Path, config: Path
) -> None:
    outcome = serve(launcher, db, config)
    assert outcome.listened, outcome.stderr
    saved = config / SAVED
    assert stat.S_IMODE(saved.lstat().st_mode) == 0o600
    assert stat.S_IMODE(saved.parent.stat().st_mode) == 0o700
    # XDG_CONFIG_HOME did not exist either: made 0700, as the XDG base directory spec asks.
    assert stat.S_IMODE(config.stat().st_mode) == 0o700
    assert len(saved.read_text(encoding="utf-8").strip()) >= 32


@pytest.mark.skipif(not hasattr(os, "symlink") or sys.platform == "win32", reason="POSIX symlinks")
def test_a_dangling_symlink_planted_at_the_saved_token_is_refused_and_nothing_is_made_where_it_points(
    launcher: Launcher, db: Path, tmp_path: Path, config: Path
) -> None:
    (config / SAVED).parent.mkdir(parents=True, mode=0o700)
    config.chmod(0o700)
    target = tmp_path / "attacker" / "stolen-token"
    target.parent.mkdir()
    (config / SAVED).symlink_to(target)
    refused(serve(launcher, db, config), str(config / SAVED), "symbolic link", f"rm {config / SAVED}")
    assert not target.exists()
    assert (config / SAVED).is_symlink()


@pytest.mark.skipif(not hasattr(os, "symlink") or sys.platform == "win32", reason="POSIX symlinks")
def test_a_symlink_at_the_saved_token_is_not_followed_even_to_a_good_token(
    launcher: Launcher, db: Path, tmp_path: Path, config: Path
) -> None:
    token = secrets.token_urlsafe(32)
    elsewhere = write_private(tmp_path / "elsewhere" / "token", token + "\n")
    (config / SAVED).parent.mkdir(parents=True, mode=0o700)
    config.chmod(0o700)
    (config / SAVED).symlink_to(elsewhere)
    refused(serve(launcher, db, config), str(config / SAVED), "symbolic link", secret=token)


@POSIX
def test_a_saved_token_other_users_can_read_is_refused_and_doctor_says_so(
    launcher: Launcher, db: Path, config: Path
) -> None:
    token = secrets.token_urlsafe(32)
    saved = write_private(config / SAVED, token + "\n", 0o644)
    config.chmod(0o700)
    refused(serve(launcher, db, config), str(saved), f"chmod 600 {saved}", secret=token)
    done = doctor(db, config)
    assert done.returncode == 1, done.stdout + done.stderr
    report = json.loads(done.stdout)["http"]
    assert report["token"] is None
    assert f"chmod 600 {saved}" in report["problem"]
    assert token not in done.stdout + done.stderr


@POSIX
def test_a_saved_token_folder_others_can_write_is_refused_and_nothing_is_made(
    launcher: Launcher, db: Path, config: Path
) -> None:
    folder = (config / SAVED).parent
    folder.mkdir(parents=True)
    config.chmod(0o700)
    folder.chmod(0o777)
    refused(serve(launcher, db, config), str(folder), f"chmod go-w {folder}")
    assert not (config / SAVED).exists()


def test_a_saved_token_too_short_is_refused(launcher: Launcher, db: Path, config: Path) -> None:
    write_private(config / SAVED, "Zq9shortZq9\n")
    config.chmod(0o700)
    refused(serve(launcher, db, config), str(config / SAVED), "at least 32", secret="Zq9shortZq9")


def test_an_empty_saved_token_is_replaced_by_a_new_one(launcher: Launcher, db: Path, config: Path) -> None:
    """A start that stopped between making the file and writing it leaves it empty: the next start makes one."""
    write_private(config / SAVED, "")
    config.chmod(0o700)
    outcome = serve(launcher, db, config)
    assert outcome.listened, outcome.stderr
    assert len((config / SAVED).read_text(encoding="utf-8").strip()) >= 32


def test_doctor_reports_a_short_token_from_the_environment_without_showing_it(db: Path, config: Path) -> None:
    done = doctor(db, config, token="shorty")
    assert done.returncode == 1, done.stdout + done.stderr
    report = json.loads(done.stdout)["http"]
    assert "at least 32" in report["problem"]
    assert "shorty" not in done.stdout + done.stderr
    text = subprocess.run(
        [sys.executable, "-m", "magnotia_mcp", "--db", str(db), "doctor"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
        check=False,
        env=environment(config, "shorty"),
    )
    assert "PROBLEM" in text.stdout, text.stdout
    assert "at least 32" in text.stdout, text.stdout
    assert "shorty" not in text.stdout + text.stderr
