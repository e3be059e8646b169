"""The hosts the tests expect ``install`` to know: one row per host, which every per-host test uses.

A row says, independently of src/magnotia_mcp/install/hosts.py, what docs/hosts.md says: where
the host keeps its user config on each OS (written as the docs write it: ``~``, ``$XDG``,
``%APPDATA%``, ``/`` between parts), how the host parses the file, where its servers are, which
folder says it is installed, and a user's file before an install. tests/unit/install/test_hosts.py
checks every record against its row on Linux, macOS and Windows; tests/e2e/test_install.py installs
into, starts and uninstalls from every row's file. Adding a host: one record there, one row here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePath, PurePosixPath, PureWindowsPath

# What a user's file holds before the install: other servers, other settings, comments where allowed.
EXISTING = {
    "json": '{\n  "theme": "dark",\n  "mcpServers": {\n    "other": {\n      "command": "other-server",\n'
    '      "args": ["--flag"]\n    }\n  },\n  "zoom": 1.5\n}\n',
    "vscode": '// my MCP servers\n{\n\t"servers": {\n\t\t"other": { "type": "stdio", "command": "other-server" }, '
    '// keep me\n\t},\n\t/* inputs */\n\t"inputs": [],\n}\n',
    "zed": '// Zed settings\n{\n  "theme": "One Dark", // the theme\n  "context_servers": {\n    "other": {\n'
    '      "command": "other-server",\n      "args": []\n    }\n  }\n}\n',
    "claude-code": '{\n  "numStartups": 3,\n  "mcpServers": {\n    "other": {\n      "type": "stdio",\n'
    '      "command": "other-server",\n      "args": [],\n      "env": {}\n    }\n  },\n  "projects": {}\n}\n',
    "codex": '# my codex config\nmodel = "o3"\n\n[mcp_servers.other]\ncommand = "other-server" # inline comment\n'
    "args = []\n",
    "goose": "# goose\nGOOSE_PROVIDER: openai\nextensions:\n  developer:\n    bundled: true\n    enabled: true\n"
    "    name: developer\n    timeout: 300\n    type: builtin\nGOOSE_MODEL: gpt-4o\n",
}
COMMENTS = ("jsonc", "toml", "yaml")  # the formats whose comments an install must keep


@dataclass(frozen=True)
class HostCase:
    key: str  # the install name
    reads: str  # how the host parses its file: json, jsonc, toml, yaml
    servers: str  # the key of its map of servers
    linux: str  # its user config as docs/hosts.md writes it
    macos: str = ""  # "": as on Linux
    windows: str = ""  # "": as on Linux (~ is %USERPROFILE%)
    marker: str = ""  # the folder that says it is installed; "": the config file's folder
    existing: str = EXISTING["json"]  # a user's file before the install
    stdio_type: bool = False  # its entries must say "type": "stdio"
    other: str = "other-server"  # what of the existing file's other server an install must keep

    def written(self, system: str) -> str:
        return {"linux": self.linux, "macos": self.macos or self.linux, "windows": self.windows or self.linux}[system]


_CLINE = "Code/User/globalStorage/saoudrizwan.claude-dev"
CASES = (
    HostCase(
        "claude-desktop",
        "json",
        "mcpServers",
        "$XDG/Claude/claude_desktop_config.json",
        macos="~/Library/Application Support/Claude/claude_desktop_config.json",
        windows="%APPDATA%/Claude/claude_desktop_config.json",
    ),
    HostCase(
        "claude-code",
        "json",
        "mcpServers",
        "~/.claude.json",
        marker="~/.claude",
        existing=EXISTING["claude-code"],
        stdio_type=True,
    ),
    HostCase("cursor", "json", "mcpServers", "~/.cursor/mcp.json"),
    HostCase(
        "vscode",
        "jsonc",
        "servers",
        "$XDG/Code/User/mcp.json",
        macos="~/Library/Application Support/Code/User/mcp.json",
        windows="%APPDATA%/Code/User/mcp.json",
        existing=EXISTING["vscode"],
        stdio_type=True,
    ),
    HostCase("windsurf", "json", "mcpServers", "~/.codeium/windsurf/mcp_config.json"),
    HostCase(
        "cline",
        "json",
        "mcpServers",
        f"$XDG/{_CLINE}/settings/cline_mcp_settings.json",
        macos=f"~/Library/Application Support/{_CLINE}/settings/cline_mcp_settings.json",
        windows=f"%APPDATA%/{_CLINE}/settings/cline_mcp_settings.json",
        marker=f"$XDG/{_CLINE}",
    ),
    HostCase("gemini-cli", "json", "mcpServers", "~/.gemini/settings.json"),
    HostCase("codex", "toml", "mcp_servers", "~/.codex/config.toml", existing=EXISTING["codex"]),
    HostCase(
        "goose",
        "yaml",
        "extensions",
        "$XDG/goose/config.yaml",
        windows="%APPDATA%/Block/goose/config/config.yaml",
        existing=EXISTING["goose"],
        other="bundled: true",
    ),
    HostCase("lm-studio", "json", "mcpServers", "~/.lmstudio/mcp.json"),
    HostCase(
        "zed",
        "jsonc",
        "context_servers",
        "$XDG/zed/settings.json",
        windows="%APPDATA%/Zed/settings.json",
        existing=EXISTING["zed"],
    ),
)
BY_KEY = {case.key: case for case in CASES}
KEYS = tuple(BY_KEY)


def expand(written: str, system: str, home: str, xdg: str, appdata: str) -> PurePath:
    """A path as the docs write it, on that OS, given its home, $XDG_CONFIG_HOME and %APPDATA%."""
    base, *parts = written.split("/")
    path_type: type[PurePath] = PureWindowsPath if system == "windows" else PurePosixPath
    return path_type({"~": home, "$XDG": xdg, "%APPDATA%": appdata}[base], *parts)


def linux_path(home: Path, written: str) -> Path:
    """A Linux path of a row under a test's home ($XDG_CONFIG_HOME is home/.config)."""
    return Path(expand(written, "linux", str(home), str(home / ".config"), str(home / "AppData" / "Roaming")))
