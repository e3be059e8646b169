"""magnotia-mcp: a read-only MCP server over the Magnotia desktop app's store."""

__version__ = "0.1.0"
__all__ = ["__version__"]
