"""Every host record against its row in tests/support/hosts.py, on Linux, macOS and Windows.

The rows restate docs/hosts.md independently of the records, so a record that is incomplete
for an OS, points at another file, names the wrong format or servers map, or marks the wrong
folder fails here; a record without a row (or a row without a record) fails too.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from magnotia_mcp.cli import texts
from magnotia_mcp.install import edit
from magnotia_mcp.install.hosts import HOSTS, config_path, marker
from magnotia_mcp.install.record import SYSTEMS
from tests.support.hosts import BY_KEY, CASES, KEYS, HostCase, expand

ROOT = Path(__file__).resolve().parents[3]
# Each OS's environment as it sets it, and the platform name Python reports there.
ENVIRONMENTS = {
    "linux": ("linux", {"HOME": "/home/ana", "XDG_CONFIG_HOME": "/home/ana/cfg"}),
    "macos": ("darwin", {"HOME": "/Users/ana"}),
    "windows": (
        "win32",
        {"USERPROFILE": r"C:\Users\Ana Maria", "APPDATA": r"C:\Users\Ana Maria\AppData\Roaming", "HOME": "/nope"},
    ),
}
BASES = {  # ~, $XDG and %APPDATA% in those environments
    "linux": ("/home/ana", "/home/ana/cfg", "/home/ana/AppData/Roaming"),
    "macos": ("/Users/ana", "/Users/ana/.config", "/Users/ana/AppData/Roaming"),
    "windows": (r"C:\Users\Ana Maria", r"C:\Users\Ana Maria\.config", r"C:\Users\Ana Maria\AppData\Roaming"),
}


def test_every_record_has_a_test_row_and_every_row_a_record() -> None:
    assert list(HOSTS) == list(KEYS)


@pytest.mark.parametrize("case", CASES, ids=KEYS)
@pytest.mark.parametrize("system", SYSTEMS)
def test_each_host_keeps_its_config_where_the_docs_say_on_each_os(case: HostCase, system: str) -> None:
    platform, env = ENVIRONMENTS[system]
    expected = expand(case.written(system), system, *BASES[system])
    found = config_path(HOSTS[case.key], platform, env)
    assert (type(found), str(found)) == (type(expected), str(expected))  # Windows paths compare ignoring case


@pytest.mark.parametrize("case", CASES, ids=KEYS)
def test_each_host_is_found_installed_by_its_own_folder(case: HostCase) -> None:
    platform, env = ENVIRONMENTS["linux"]
    path = config_path(HOSTS[case.key], platform, env)
    expected = expand(case.marker, "linux", *BASES["linux"]) if case.marker else path.parent
    assert marker(HOSTS[case.key], path, env) == expected


@pytest.mark.parametrize("case", CASES, ids=KEYS)
def test_each_host_has_its_format_its_servers_map_and_sources(case: HostCase) -> None:
    host = HOSTS[case.key]
    assert (host.format.name, host.servers) == (case.reads, (case.servers,))
    assert host.format.accepts(host.servers)
    assert host.path.sources
    assert all(source.startswith("https://") for source in host.path.sources)


@pytest.mark.parametrize("case", CASES, ids=KEYS)
def test_each_hosts_entry_reads_back_as_the_command_it_was_given(case: HostCase) -> None:
    """Our entry in the host's shape, written in its format into its example file, starts the same argv."""
    if case.reads == "toml":
        pytest.importorskip("tomllib", reason="Python 3.11+: TOML is edited only where tomllib can check it")
    host = HOSTS[case.key]
    argv = ["/opt/magnotia mcp/bin/magnotia-mcp", "--db", "/data/magnotia.db"]
    text = edit.with_entry(host, case.existing, "magnotia", host.entry(argv, "magnotia"))
    assert edit.configured_argv(host, text, "magnotia") == argv
    assert edit.configured_argv(host, case.existing, "magnotia") is None
    assert edit.without_entry(host, text, "magnotia") == case.existing


def test_the_docs_table_and_the_help_name_every_host() -> None:
    table = (ROOT / "docs" / "hosts.md").read_text(encoding="utf-8")
    rows = set(re.findall(r"^\| [^|]+ \(`([a-z0-9-]+)`\) \|", table, re.M))
    assert rows == set(BY_KEY)
    assert [key for key in HOSTS if key not in texts.HOSTS.split(", ")] == []
