"""The bearer token ``serve --http`` requires: from the environment, a file, or generated once and kept.

Order: ``$MAGNOTIA_MCP_TOKEN``, then ``--token-file PATH`` (its first line), else the token
saved in the user's config folder (``platformdirs.user_config_dir("com.magnotia.mcp")/http-token``,
e.g. ``~/.config/com.magnotia.mcp/http-token`` on Linux), created with mode 0600 on first use.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import platformdirs

ENV_VAR = "MAGNOTIA_MCP_TOKEN"
FILE_NAME = "http-token"


class TokenError(Exception):
    """The token cannot be had: the message says why."""


def saved_token_path() -> Path:
    return Path(platformdirs.user_config_dir("com.magnotia.mcp", appauthor=False)) / FILE_NAME


def load_token(token_file: str | None) -> tuple[str, str, bool]:
    """(token, where it came from, whether it was generated and saved now)."""
    value = os.environ.get(ENV_VAR, "").strip()
    if value:
        return value, f"${ENV_VAR}", False
    if token_file is not None:
        try:
            value = Path(token_file).read_text(encoding="utf-8").strip().splitlines()[0].strip()
        except (OSError, UnicodeDecodeError, IndexError) as exc:
            raise TokenError(f"cannot read a token from --token-file {token_file}: {exc}") from None
        if not value:
            raise TokenError(f"--token-file {token_file} is empty")
        return value, token_file, False
    path = saved_token_path()
    try:
        value = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        value = ""
    except OSError as exc:
        raise TokenError(f"cannot read the saved token {path}: {exc.strerror}") from None
    if value:
        return value, str(path), False
    value = secrets.token_urlsafe(32)
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(value + "\n")
        os.chmod(path, 0o600)
    except OSError as exc:
        raise TokenError(f"cannot save a new token at {path}: {exc.strerror}") from None
    return value, str(path), True
