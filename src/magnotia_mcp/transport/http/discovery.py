"""What a host refused for want of the token is told: by the 401, and by whatever it probes for OAuth next.

An MCP client that gets 401 takes the server for an OAuth one: it looks for protected-resource
metadata (RFC 9728), authorization server metadata (RFC 8414, OpenID Connect), and then
registers itself (RFC 7591, ``POST /register`` when no metadata names a registration endpoint).
This server has none of that: it takes a static bearer token. So each of those answers says so
and what to do, in the field the client shows:

- the metadata paths: 404 (there is no such metadata, so clients go on to the next step), with
  a JSON body ``{"error", "error_description"}`` for a person reading it;
- ``POST /register``: 400 ``invalid_client_metadata`` (an RFC 7591 error) whose
  ``error_description`` is the fix: the MCP TypeScript SDK makes it the error's message, and
  Claude Code shows the body ("Dynamic Client Registration rejected (HTTP 400): ...");
- the 401 itself: the fix in its JSON-RPC error message and, for a wrong token, in the
  ``WWW-Authenticate`` ``error_description`` (RFC 6750; with no token at all that RFC asks
  for no error details in the header).

Every text here is fixed: nothing about the token, the store or the machine. The caller answers
only after the Host and Origin checks, and only when a token is required.
"""

from __future__ import annotations

import json

from magnotia_mcp.errors import InvalidRequest
from magnotia_mcp.protocol import jsonrpc

# No paths in it: Claude Code shows "[redacted]" for anything that looks like one.
FIX = (
    "this server takes a static bearer token, not OAuth: set the header "
    "Authorization: Bearer TOKEN in this server's entry in your MCP client, TOKEN being the server's token "
    "(run magnotia-mcp doctor on the server's machine to see it)"
)
# Where clients look for OAuth metadata (RFC 9728 at the resource's path and at the root; RFC 8414
# and OpenID at the root, and with the issuer path inserted or appended).
METADATA = (
    "/.well-known/oauth-protected-resource",
    "/.well-known/oauth-authorization-server",
    "/.well-known/openid-configuration",
)
REGISTER = "/register"

Answer = tuple[int, bytes, list[tuple[bytes, bytes]]]


def _oauth_error(error: str) -> bytes:
    return json.dumps({"error": error, "error_description": FIX}).encode()


def answer(method: str, path: str) -> Answer | None:
    """The answer to a probe for OAuth (status, JSON body, extra headers); None for a path that is none."""
    if path == REGISTER:
        if method == "POST":
            return 400, _oauth_error("invalid_client_metadata"), []
        return 405, _oauth_error("invalid_request"), [(b"allow", b"POST")]
    if any(path == base or path.startswith(base + "/") for base in METADATA) or (
        path.endswith("/.well-known/openid-configuration")
    ):
        return 404, _oauth_error("not_found"), []
    return None


def unauthorized(token_given: bool) -> tuple[bytes, list[tuple[bytes, bytes]]]:
    """The 401's body and WWW-Authenticate header, for a request with a wrong token or with none."""
    what = "wrong bearer token" if token_given else "missing bearer token"
    body = jsonrpc.encode(jsonrpc.error(None, InvalidRequest(f"{what}: {FIX}")))
    challenge = b"Bearer"
    if token_given:
        challenge += b' error="invalid_token", error_description="' + FIX.encode() + b'"'
    return body, [(b"www-authenticate", challenge)]


__all__ = ["FIX", "answer", "unauthorized"]
