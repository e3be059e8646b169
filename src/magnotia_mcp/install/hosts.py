"""The MCP hosts ``magnotia-mcp install`` knows: where each keeps its config per OS, its format, its entry.

Sources for every path are in docs/hosts.md. Paths are computed from an OS name and
an environment (not from the running OS), so the table can be checked for macOS and
Windows anywhere.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePath, PurePosixPath, PureWindowsPath
from typing import Any

JSON, JSONC, TOML, YAML = "json", "jsonc", "toml", "yaml"


@dataclass(frozen=True)
class Host:
    key: str  # the name on the command line
    title: str
    format: str  # json, jsonc, toml, yaml
    servers: tuple[str, ...]  # the keys leading to the map of servers
    cli: str | None = None  # the host's own CLI, used when it is on PATH

    def entry(self, argv: list[str], name: str) -> dict[str, Any]:
        """Our entry, in the shape this host reads."""
        command, args = argv[0], argv[1:]
        if self.key == "vscode":
            return {"type": "stdio", "command": command, "args": args}
        if self.key == "claude-code":
            return {"type": "stdio", "command": command, "args": args, "env": {}}
        if self.key == "zed":
            return {"command": command, "args": args, "env": {}}
        if self.key == "goose":
            return {"name": name, "type": "stdio", "enabled": True, "cmd": command, "args": args, "timeout": 300}
        return {"command": command, "args": args}


HOSTS: dict[str, Host] = {
    h.key: h
    for h in (
        Host("claude-desktop", "Claude Desktop", JSON, ("mcpServers",)),
        Host("claude-code", "Claude Code", JSON, ("mcpServers",), cli="claude"),
        Host("cursor", "Cursor", JSON, ("mcpServers",)),
        Host("vscode", "VS Code", JSONC, ("servers",)),
        Host("windsurf", "Windsurf", JSON, ("mcpServers",)),
        Host("cline", "Cline (VS Code extension)", JSON, ("mcpServers",)),
        Host("gemini-cli", "Gemini CLI", JSON, ("mcpServers",)),
        Host("codex", "Codex CLI", TOML, ("mcp_servers",)),
        Host("goose", "Goose", YAML, ("extensions",)),
        Host("lm-studio", "LM Studio", JSON, ("mcpServers",)),
        Host("zed", "Zed", JSONC, ("context_servers",)),
    )
}


def entry_argv(host: Host, entry: Any) -> list[str] | None:
    """The command line an entry (as parsed from the host's file) starts, or None if it has none."""
    if not isinstance(entry, dict):
        return None
    command = entry.get("cmd" if host.key == "goose" else "command")
    args = entry.get("args") or []
    if not isinstance(command, str) or not isinstance(args, list):
        return None
    return [command, *(str(a) for a in args)]


def _platform_name(platform: str) -> str:
    if platform.startswith("win") or platform == "cygwin":
        return "windows"
    return "macos" if platform == "darwin" else "linux"


def config_path(
    host: Host, platform: str = sys.platform, env: Mapping[str, str] = os.environ, home: str | None = None
) -> PurePath:
    """The user-level config file of host on platform, given the environment that OS sets."""
    system = _platform_name(platform)
    path_type: type[PurePath] = PureWindowsPath if system == "windows" else PurePosixPath
    if home is None:
        home = env.get("USERPROFILE", "") if system == "windows" else env.get("HOME", "")
        home = home or os.path.expanduser("~")
    h = path_type(home)
    appdata = path_type(env.get("APPDATA") or str(h / "AppData" / "Roaming"))
    xdg = path_type(env.get("XDG_CONFIG_HOME") or str(h / ".config"))
    support = h / "Library" / "Application Support"
    key = host.key
    if key == "claude-desktop":
        base = {"windows": appdata, "macos": support, "linux": xdg}[system]
        return base / "Claude" / "claude_desktop_config.json"
    if key == "claude-code":
        config_dir = env.get("CLAUDE_CONFIG_DIR")
        return (path_type(config_dir) if config_dir else h) / ".claude.json"
    if key == "cursor":
        return h / ".cursor" / "mcp.json"
    if key in ("vscode", "cline"):
        base = {"windows": appdata, "macos": support, "linux": xdg}[system]
        user = base / "Code" / "User"
        if key == "vscode":
            return user / "mcp.json"
        return user / "globalStorage" / "saoudrizwan.claude-dev" / "settings" / "cline_mcp_settings.json"
    if key == "windsurf":
        return h / ".codeium" / "windsurf" / "mcp_config.json"
    if key == "gemini-cli":
        return h / ".gemini" / "settings.json"
    if key == "codex":
        codex_home = env.get("CODEX_HOME")
        return (path_type(codex_home) if codex_home else h / ".codex") / "config.toml"
    if key == "goose":
        if system == "windows":
            return appdata / "Block" / "goose" / "config" / "config.yaml"
        return xdg / "goose" / "config.yaml"
    if key == "lm-studio":
        return h / ".lmstudio" / "mcp.json"
    if key == "zed":
        if system == "windows":
            return appdata / "Zed" / "settings.json"
        return xdg / "zed" / "settings.json"
    raise KeyError(key)


def marker(host: Host, path: PurePath, env: Mapping[str, str] = os.environ) -> PurePath:
    """The folder whose presence says the host is installed: its config file's folder, but

    Claude Code keeps its file in the home folder itself (its marker is ~/.claude, or
    $CLAUDE_CONFIG_DIR), and Cline's settings folder appears on first use (its marker is
    the extension's storage folder).
    """
    if host.key == "claude-code":
        return path.parent if env.get("CLAUDE_CONFIG_DIR") else path.parent / ".claude"
    if host.key == "cline":
        return path.parent.parent
    return path.parent
