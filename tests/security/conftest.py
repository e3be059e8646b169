"""The attacker-style tests reuse tests/http's fixtures (the real server over real sockets)."""

from tests.http.conftest import launch, sample, served  # noqa: F401
