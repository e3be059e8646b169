"""Moved to tests/support/textchecks.py; kept until tests/test_units.py imports it from there."""

from tests.support.textchecks import breaks_cluster

__all__ = ["breaks_cluster"]
