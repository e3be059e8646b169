"""What an MCP Bundle host does with a bundle's manifest: the command, arguments and environment it starts.

A port of the reference implementation, ``getMcpConfigForManifest`` and
``replaceVariables`` in @anthropic-ai/mcpb (src/shared/config.ts): platform
overrides replace command, args or env as a whole; ``${__dirname}`` is the folder
the bundle was unpacked to; ``${user_config.KEY}`` is the user's value or the
option's default; an option that has neither stays in the string as written
(the server must take that as unset: src/magnotia_mcp/paths.py).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

_WHOLE_USER_CONFIG = re.compile(r"^\$\{(user_config\.[^}]+)\}$")


def replace_variables(value: Any, variables: dict[str, str | list[str]]) -> Any:
    """replaceVariables: strings get every known ${KEY}; a list item that is exactly one user_config may expand."""
    if isinstance(value, str):
        for key, replacement in variables.items():
            if isinstance(replacement, str):
                value = value.replace("${" + key + "}", replacement)
        return value
    if isinstance(value, list):
        out: list[Any] = []
        for item in value:
            whole = _WHOLE_USER_CONFIG.match(item) if isinstance(item, str) else None
            if whole:
                found = variables.get(whole.group(1))
                if isinstance(found, list):
                    out.extend(found)
                elif found:
                    out.append(found)
                else:
                    out.append(item)  # not set: kept as written
            else:
                out.append(replace_variables(item, variables))
        return out
    if isinstance(value, dict):
        return {k: replace_variables(v, variables) for k, v in value.items()}
    return value


def mcp_config(
    manifest: dict[str, Any], bundle_dir: Path, user_config: dict[str, Any], platform: str
) -> dict[str, Any]:
    """getMcpConfigForManifest for platform ("linux", "darwin", "win32"): {"command", "args", "env"}."""
    base = dict(manifest["server"]["mcp_config"])
    override = base.pop("platform_overrides", {}).get(platform)
    if override:
        for key in ("command", "args", "env"):
            if override.get(key):
                base[key] = override[key]
    for key, option in (manifest.get("user_config") or {}).items():
        if option.get("required") and user_config.get(key) in (None, ""):
            raise AssertionError(f"a host would not start the server: required setting {key} is missing")
    merged = {k: o["default"] for k, o in (manifest.get("user_config") or {}).items() if "default" in o}
    merged.update(user_config)
    variables: dict[str, str | list[str]] = {"__dirname": str(bundle_dir), "pathSeparator": os.sep, "/": os.sep}
    for key, value in merged.items():
        if isinstance(value, list):
            variables[f"user_config.{key}"] = [str(v) for v in value]
        elif isinstance(value, bool):
            variables[f"user_config.{key}"] = "true" if value else "false"
        else:
            variables[f"user_config.{key}"] = str(value)
    config: dict[str, Any] = replace_variables(base, variables)
    config.setdefault("args", [])
    config.setdefault("env", {})
    return config


def argv_env(config: dict[str, Any]) -> tuple[list[str], dict[str, str]]:
    """The process a host spawns: [command, *args] with the host's environment plus the manifest's env."""
    return [config["command"], *config["args"]], {**os.environ, **config["env"]}
