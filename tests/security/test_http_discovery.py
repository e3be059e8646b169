"""A host set up without the token is told the fix, by the server's 401 and by whatever it probes for OAuth next.

After a 401, an MCP client looks for OAuth: protected-resource metadata (RFC 9728), authorization
server metadata (RFC 8414, OpenID), then dynamic client registration (RFC 7591, ``POST /register``).
Claude Code 2.1.332, seen on the wire, probes exactly ``PROBED`` below and then shows the body
of the registration's refusal. Every answer must say what to do (send the static token; doctor
shows it), reveal nothing secret, and stay behind the Host and Origin checks.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.http.conftest import TOKEN, HttpServer
from tests.http.test_host_configs import claude_binary, run_claude
from tests.http.test_security import LIST_TASKS, post
from tests.support.server import Launcher

WELL_KNOWN = (
    "/.well-known/oauth-protected-resource/mcp",
    "/.well-known/oauth-protected-resource",
    "/.well-known/oauth-authorization-server",
    "/.well-known/openid-configuration",
)
# What Claude Code 2.1.332 registers itself as (its POST /register body, seen on the wire).
REGISTRATION = {
    "client_name": "Claude Code (magnotia)",
    "redirect_uris": ["http://localhost:3118/callback"],
    "grant_types": ["authorization_code", "refresh_token"],
    "response_types": ["code"],
    "token_endpoint_auth_method": "none",
    "application_type": "native",
}


def tells_the_fix(text: str) -> bool:
    return "Authorization: Bearer" in text and "magnotia-mcp doctor" in text


def test_every_oauth_probe_answers_with_the_fix(served: HttpServer) -> None:
    for path in WELL_KNOWN:
        status, headers, body = post(served, b"", token=None, path=path, method="GET", headers={"Accept": "*/*"})
        assert status == 404, (path, status)  # RFC 9728 / 8414: no such metadata; the body says why
        assert headers["content-type"] == "application/json"
        answer = json.loads(body)
        assert tells_the_fix(answer["error_description"]), (path, answer)
        assert TOKEN.encode() not in body
    status, headers, body = post(served, REGISTRATION, token=None, path="/register")
    assert status == 400, status
    answer = json.loads(body)
    assert answer["error"] == "invalid_client_metadata", answer  # an RFC 7591 error: SDKs show its description
    assert tells_the_fix(answer["error_description"]), answer
    assert TOKEN.encode() not in body
    assert not any(TOKEN in line for line in served.stderr)


def test_the_probes_are_behind_the_host_and_origin_checks(served: HttpServer) -> None:
    for path in (*WELL_KNOWN, "/register"):
        for refused in ({"Host": "evil.example"}, {"Origin": "http://evil.example"}):
            status, _, body = post(served, REGISTRATION, token=None, path=path, headers=refused)
            assert status == 403, (path, refused, status)
            assert b"doctor" not in body


def test_without_a_token_to_ask_for_the_probes_are_ordinary_404s(launch: Callable[..., HttpServer]) -> None:
    """--no-auth: no host is refused, and the text about a token would be wrong; the paths are unknown."""
    server = launch(["--no-auth"])
    for path in (*WELL_KNOWN, "/register"):
        status, _, body = post(server, REGISTRATION, token=None, path=path)
        assert status == 404, (path, status)
        assert b"doctor" not in body


def test_a_401_says_what_to_send(served: HttpServer) -> None:
    status, headers, body = post(served, LIST_TASKS, token=None)
    assert status == 401
    assert tells_the_fix(json.loads(body)["error"]["message"])
    assert headers["www-authenticate"].startswith("Bearer")  # no error code without a credential (RFC 6750)
    status, headers, body = post(served, LIST_TASKS, token="wrong")
    assert status == 401
    challenge = headers["www-authenticate"]
    assert challenge.startswith('Bearer error="invalid_token", error_description="'), challenge
    assert tells_the_fix(challenge)
    assert tells_the_fix(json.loads(body)["error"]["message"])
    assert TOKEN not in challenge
    assert TOKEN.encode() not in body


def test_claude_code_added_without_the_header_shows_the_fix(
    launcher: Launcher, launch: Callable[..., HttpServer], tmp_path: Path
) -> None:
    """``claude mcp add --transport http`` without ``--header``, or with a wrong token: list and get say what to do."""
    binary = claude_binary()
    if binary is None:
        pytest.skip(
            "Claude Code is not installed: nox -s test installs it when npm is here (npm ci --prefix tests/clients)"
        )
    home = tmp_path / "claude-home"
    (home / ".claude").mkdir(parents=True)
    bindir = tmp_path / "claude-bin"
    bindir.mkdir()
    (bindir / "claude").symlink_to(binary)
    server = launch([], {"MAGNOTIA_MCP_TOKEN": TOKEN})
    add = [str(bindir / "claude"), "mcp", "add", "--scope", "user", "--transport", "http", "magnotia", server.url]
    added = run_claude(add, home, bindir)
    assert added.returncode == 0, added.stdout + added.stderr
    listed = run_claude([str(bindir / "claude"), "mcp", "list"], home, bindir)
    line = next((ln for ln in listed.stdout.splitlines() if ln.startswith("magnotia:")), "")
    assert "Failed to connect" in line, listed.stdout + listed.stderr
    assert tells_the_fix(line), line
    got = run_claude([str(bindir / "claude"), "mcp", "get", "magnotia"], home, bindir)
    issue = next((ln for ln in got.stdout.splitlines() if ln.strip().startswith("Issue:")), "")
    assert tells_the_fix(issue), got.stdout + got.stderr
    assert TOKEN not in listed.stdout + got.stdout

    # A wrong token: Claude Code then shows the 401's body (it tries no OAuth when the header is set).
    assert run_claude([str(bindir / "claude"), "mcp", "remove", "magnotia", "-s", "user"], home, bindir).returncode == 0
    added = run_claude([*add, "--header", "Authorization: Bearer not-the-token"], home, bindir)
    assert added.returncode == 0, added.stdout + added.stderr
    got = run_claude([str(bindir / "claude"), "mcp", "get", "magnotia"], home, bindir)
    issue = next((ln for ln in got.stdout.splitlines() if ln.strip().startswith("Issue:")), "")
    assert "401" in issue, got.stdout + got.stderr
    assert tells_the_fix(issue), issue
    assert TOKEN not in got.stdout
