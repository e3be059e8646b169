"""The MCP hosts ``magnotia-mcp install`` knows, one record each (record.py says what a record holds).

Adding a host is one record here and one row in tests/support/hosts.py (docs/hosts.md, "Adding a
host"). The sources for every path are in the records and in docs/hosts.md's table.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

from magnotia_mcp.install import configfile
from magnotia_mcp.install.formats import JSON, JSONC, TOML, YAML
from magnotia_mcp.install.record import ConfigPath, EntryShape, Host, Slot

__all__ = ["HOSTS", "Host", "config_path", "entry_argv", "marker"]

COMMAND, ARGS, NAME = Slot.COMMAND, Slot.ARGS, Slot.NAME
PLAIN = EntryShape((("command", COMMAND), ("args", ARGS)))
# Cline keeps its settings in VS Code's storage for the extension.
_CLINE = "Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json"

HOSTS: dict[str, Host] = {
    h.key: h
    for h in (
        Host(
            "claude-desktop",
            "Claude Desktop",
            JSON,
            ("mcpServers",),
            ConfigPath(
                # No official Linux build: where community builds keep it.
                linux="$XDG/Claude/claude_desktop_config.json",
                macos="~/Library/Application Support/Claude/claude_desktop_config.json",
                windows="%APPDATA%/Claude/claude_desktop_config.json",
                sources=(
                    "https://modelcontextprotocol.io/quickstart/user",
                    "https://playwright.dev/mcp/clients/claude-desktop",
                ),
            ),
            PLAIN,
        ),
        Host(
            "claude-code",
            "Claude Code",
            JSON,
            ("mcpServers",),
            ConfigPath(
                linux="~/.claude.json",
                folder_env="CLAUDE_CONFIG_DIR",
                sources=("https://docs.anthropic.com/en/docs/claude-code/mcp",),  # user scope: top level
            ),
            EntryShape((("type", "stdio"), ("command", COMMAND), ("args", ARGS), ("env", {}))),
            marker=".claude",  # the file sits in the home folder itself
            cli="claude",
            max_bytes=configfile.MAX_BYTES_CLAUDE_CODE,  # it keeps project history in the same file
        ),
        Host(
            "cursor",
            "Cursor",
            JSON,
            ("mcpServers",),
            ConfigPath(
                linux="~/.cursor/mcp.json",
                sources=(
                    "https://docs.cursor.com/context/model-context-protocol",
                    "https://docs.neurolink.ink/docs/mcp/configuration",
                ),
            ),
            PLAIN,
        ),
        Host(
            "vscode",
            "VS Code",
            JSONC,
            ("servers",),
            ConfigPath(
                linux="$XDG/Code/User/mcp.json",
                macos="~/Library/Application Support/Code/User/mcp.json",
                windows="%APPDATA%/Code/User/mcp.json",
                sources=("https://code.visualstudio.com/docs/copilot/reference/mcp-configuration",),
            ),
            EntryShape((("type", "stdio"), ("command", COMMAND), ("args", ARGS))),
        ),
        Host(
            "windsurf",
            "Windsurf",
            JSON,
            ("mcpServers",),
            ConfigPath(
                linux="~/.codeium/windsurf/mcp_config.json",
                sources=("https://docs.windsurf.com/windsurf/cascade/mcp",),
            ),
            PLAIN,
        ),
        Host(
            "cline",
            "Cline (VS Code extension)",
            JSON,
            ("mcpServers",),
            ConfigPath(
                linux=f"$XDG/{_CLINE}",
                macos=f"~/Library/Application Support/{_CLINE}",
                windows=f"%APPDATA%/{_CLINE}",
                sources=(
                    "https://alperhankendi.github.io/Ctxo/docs/integrations/cline",
                    "https://docs.neurolink.ink/docs/mcp/configuration",
                ),
            ),
            PLAIN,
            marker="..",  # the settings folder appears on first use; the extension's storage before
        ),
        Host(
            "gemini-cli",
            "Gemini CLI",
            JSON,
            ("mcpServers",),
            ConfigPath(
                linux="~/.gemini/settings.json",
                sources=("https://github.com/google-gemini/gemini-cli/blob/main/docs/tools/mcp-server.md",),
            ),
            PLAIN,
        ),
        Host(
            "codex",
            "Codex CLI",
            TOML,
            ("mcp_servers",),
            ConfigPath(
                linux="~/.codex/config.toml",
                folder_env="CODEX_HOME",
                sources=(
                    "https://github.com/openai/codex/blob/main/docs/config.md",
                    "https://developers.openai.com/codex/mcp/",
                ),
            ),
            PLAIN,
        ),
        Host(
            "goose",
            "Goose",
            YAML,
            ("extensions",),
            ConfigPath(
                linux="$XDG/goose/config.yaml",
                windows="%APPDATA%/Block/goose/config/config.yaml",
                sources=("https://block.github.io/goose/docs/guides/config-files",),
            ),
            EntryShape(
                (
                    ("name", NAME),
                    ("type", "stdio"),
                    ("enabled", True),
                    ("cmd", COMMAND),
                    ("args", ARGS),
                    ("timeout", 300),
                )
            ),
        ),
        Host(
            "lm-studio",
            "LM Studio",
            JSON,
            ("mcpServers",),
            ConfigPath(
                linux="~/.lmstudio/mcp.json",
                sources=(
                    "https://lmstudio.ai/docs/app/mcp",
                    "https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/1371",
                ),
            ),
            PLAIN,
        ),
        Host(
            "zed",
            "Zed",
            JSONC,
            ("context_servers",),
            ConfigPath(
                linux="$XDG/zed/settings.json",
                windows="%APPDATA%/Zed/settings.json",
                sources=("https://zed.dev/docs/ai/mcp",),
            ),
            EntryShape((("command", COMMAND), ("args", ARGS), ("env", {}))),
        ),
    )
}


def entry_argv(host: Host, entry: Any) -> list[str] | None:
    """The command line an entry (as parsed from the host's file) starts, or None if it has none."""
    return host.shape.argv(entry)


def config_path(
    host: Host, platform: str = sys.platform, env: Mapping[str, str] = os.environ, home: str | None = None
) -> PurePath:
    """The user-level config file of host on platform, given the environment that OS sets."""
    return host.path.resolve(platform, env, home)


def marker(host: Host, path: PurePath, env: Mapping[str, str] = os.environ) -> PurePath:
    """The folder whose presence says the host is installed (Host.marker)."""
    return host.marker_of(path, env)
