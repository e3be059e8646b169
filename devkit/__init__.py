"""Shared by the tests and the benchmarks, never shipped: the store builder and the judged relevance set.

Neither tests/ nor benchmarks/ imports the other; both import this package from the repository root.
"""
