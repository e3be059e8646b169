"""Unit tests: one file per module of magnotia_mcp, calling it directly, in-process, no server process."""
