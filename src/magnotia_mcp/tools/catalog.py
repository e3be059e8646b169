"""The tools this server offers, by name, in the order ``tools/list`` shows them."""

from __future__ import annotations

from magnotia_mcp.tools.base import Tool
from magnotia_mcp.tools.search import SEARCH_TRANSCRIPTS
from magnotia_mcp.tools.tasks import LIST_TASKS
from magnotia_mcp.tools.transcripts import GET_TRANSCRIPT, LIST_TRANSCRIPTS

TOOLS: dict[str, Tool] = {t.name: t for t in (LIST_TRANSCRIPTS, GET_TRANSCRIPT, SEARCH_TRANSCRIPTS, LIST_TASKS)}
