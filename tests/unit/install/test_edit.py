"""Install edits in every format: a Windows path with spaces and backslashes survives a round trip,
config paths per OS, and the edits keep everything but our entry."""

from __future__ import annotations

import json
from pathlib import PureWindowsPath

import pytest

from magnotia_mcp.install import edit, jsonc, toml_table, yaml_block
from magnotia_mcp.install.hosts import HOSTS, config_path
from tests.support.hosts import KEYS

tomllib = pytest.importorskip("tomllib", reason="Python 3.11+: TOML is edited only where tomllib can check it")

STORE = r"C:\Users\Ana Maria\AppData\Roaming\com.magnotia.app\magnotia.db"
EXE = r"C:\Program Files\Magnotia MCP\magnotia-mcp.exe"
ARGV = [EXE, "--db", STORE]


@pytest.mark.parametrize("host", KEYS)
def test_a_windows_path_with_spaces_and_backslashes_round_trips_in_every_format(host: str) -> None:
    h = HOSTS[host]
    text = edit.with_entry(h, None, "magnotia", h.entry(ARGV, "magnotia"))
    assert edit.configured_argv(h, text, "magnotia") == ARGV
    if h.format.name == "toml":
        assert tomllib.loads(text)["mcp_servers"]["magnotia"]["args"] == ["--db", STORE]
        assert r"C:\\Users\\Ana Maria" in text
    elif h.format.name in ("json", "jsonc"):
        parsed = json.loads(text)
        for key in h.servers:
            parsed = parsed[key]
        assert parsed["magnotia"]["args"] == ["--db", STORE]
    else:
        assert f"cmd: {json.dumps(EXE)}" in text  # a YAML double-quoted scalar is a JSON string


def test_toml_strings_escape_quotes_and_control_characters() -> None:
    odd = 'a "quoted"\tpath\\with\x7fdel'
    assert tomllib.loads(f"x = {toml_table.toml_string(odd)}")["x"] == odd


def test_config_paths_per_os_from_the_environment_each_sets() -> None:
    win = {"APPDATA": r"C:\Users\Ana Maria\AppData\Roaming", "USERPROFILE": r"C:\Users\Ana Maria"}
    desktop = config_path(HOSTS["claude-desktop"], "win32", win)
    assert desktop == PureWindowsPath(r"C:\Users\Ana Maria\AppData\Roaming\Claude\claude_desktop_config.json")
    assert str(config_path(HOSTS["cursor"], "win32", win)) == r"C:\Users\Ana Maria\.cursor\mcp.json"
    assert str(config_path(HOSTS["goose"], "win32", win)).endswith(r"Roaming\Block\goose\config\config.yaml")
    assert str(config_path(HOSTS["zed"], "win32", win)) == r"C:\Users\Ana Maria\AppData\Roaming\Zed\settings.json"
    mac = {"HOME": "/Users/ana"}
    assert str(config_path(HOSTS["claude-desktop"], "darwin", mac)) == (
        "/Users/ana/Library/Application Support/Claude/claude_desktop_config.json"
    )
    assert (
        str(config_path(HOSTS["vscode"], "darwin", mac)) == "/Users/ana/Library/Application Support/Code/User/mcp.json"
    )
    assert str(config_path(HOSTS["goose"], "darwin", mac)) == "/Users/ana/.config/goose/config.yaml"
    linux = {"HOME": "/home/ana", "XDG_CONFIG_HOME": "/home/ana/cfg", "CODEX_HOME": "/srv/codex"}
    assert str(config_path(HOSTS["vscode"], "linux", linux)) == "/home/ana/cfg/Code/User/mcp.json"
    assert str(config_path(HOSTS["codex"], "linux", linux)) == "/srv/codex/config.toml"
    assert (
        str(config_path(HOSTS["claude-code"], "linux", {"HOME": "/h", "CLAUDE_CONFIG_DIR": "/c"})) == "/c/.claude.json"
    )


ENTRY = {"command": "magnotia-mcp", "args": ["--db", STORE]}


@pytest.mark.parametrize(
    ("text", "comments"),
    [
        ('{\n  "a": 1\n}\n', False),
        ('{\r\n    "mcpServers": {\r\n        "x": {}\r\n    }\r\n}\r\n', False),
        ('{"a":1,"mcpServers":{}}', False),
        ('{\n\t"mcpServers": {\n\t\t"x": 1, // c\n\t},\n}\n', True),
        ("// top\n{\n  // only a comment\n}\n", True),
        ('{\n  "mcpServers": {\n    /* before */\n    "x": [1, 2]\n  }\n}', True),
    ],
)
def test_json_edits_keep_every_other_byte(text: str, comments: bool) -> None:
    root = jsonc.parse(text, comments=comments)
    new = jsonc.set_member(text, root, ("mcpServers",), "magnotia", ENTRY)
    after = jsonc.parse(new, comments=comments)
    node = jsonc.lookup(after, ("mcpServers", "magnotia"))
    assert node is not None
    assert node.value == ENTRY
    if "\r\n" in text:
        assert "\n" not in new.replace("\r\n", "")
    back = jsonc.remove_member(new, after, ("mcpServers",), "magnotia")
    had_map = jsonc.lookup(root, ("mcpServers",)) is not None
    assert back == text if had_map else jsonc.parse(back, comments=comments).value == {**root.value, "mcpServers": {}}


def test_strict_json_refuses_comments_and_trailing_commas() -> None:
    for text in ('{"a": 1,}', '{// c\n"a": 1}'):
        with pytest.raises(jsonc.NotEditable):
            jsonc.parse(text, comments=False)


@pytest.mark.parametrize(
    "key", ["plain", 'a \\"quoted\\" \\\\ back', "\\u00e9t\\u00e9 \\ud83d\\ude00 \\ud800", "tab\\tnew\\nline", ""]
)
def test_keys_decode_as_json_says_and_keep_their_span(key: str) -> None:
    text = '{"' + key + '": 1, "after": 2}'
    root = jsonc.parse(text, comments=True)
    assert root.value == json.loads(text)
    first, second = root.members
    assert text[first.key_start] == '"'
    assert text[second.key_start :].startswith('"after"')


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{"a\x01b": 1}', "Invalid control character at: line 1 column 4 (char 3)"),
        ('{"a\\qb": 1}', "Invalid \\escape: line 1 column 4 (char 3)"),
        ('{"a\\u12": 1}', "Invalid \\uXXXX escape: line 1 column 5 (char 4)"),
        ('{\n  "open', "Unterminated string starting at: line 2 column 3 (char 4)"),
        ('{"x\x01', "Invalid control character at: line 1 column 4 (char 3)"),
    ],
)
def test_a_bad_string_is_refused_saying_what_and_where(text: str, why: str) -> None:
    with pytest.raises(jsonc.NotEditable) as refused:
        jsonc.parse(text, comments=True)
    assert why in str(refused.value)


def test_a_codex_table_elsewhere_in_the_file_is_replaced_in_place() -> None:
    text = '[mcp_servers.magnotia]\ncommand = "old"\n\n# about b\n[b]\nx = 1\n'
    new = toml_table.set_table(text, "magnotia", ENTRY)
    assert new.endswith("\n# about b\n[b]\nx = 1\n")
    assert tomllib.loads(new)["mcp_servers"]["magnotia"] == ENTRY


def test_a_goose_entry_with_deeper_indentation_keeps_the_files_style() -> None:
    text = "extensions:\n    dev:\n        enabled: true\n"
    new = yaml_block.set_block(text, "magnotia", {"cmd": "x", "args": []})
    assert "\n    magnotia:\n        cmd: " in new
    assert yaml_block.remove_block(new, "magnotia") == text
