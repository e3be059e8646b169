"""Transcripts as MCP resources: ``magnotia://transcripts/{id}``, read as Markdown."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from magnotia_mcp import cursors
from magnotia_mcp.errors import InvalidParams, NotFound, ResourceNotFound

if TYPE_CHECKING:
    from magnotia_mcp.store.pool import Store

URI_PREFIX = "magnotia://transcripts/"
URI_TEMPLATE = URI_PREFIX + "{id}"
MIME = "text/markdown"
PAGE = 50

TEMPLATE = {
    "uriTemplate": URI_TEMPLATE,
    "name": "transcript",
    "title": "Magnotia transcript",
    "description": "One transcript as Markdown: title, date, source, duration, then the text "
    "([mm:ss] Speaker: lines for meetings). Ids come from list_transcripts or completion.",
    "mimeType": MIME,
}


def transcript_uri(transcript_id: str) -> str:
    return URI_PREFIX + transcript_id


def _duration(ms: int | None) -> str:
    if ms is None:
        return "unknown"
    seconds = ms // 1000
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


def _stamp(ms: int) -> str:
    seconds = ms // 1000
    return f"[{seconds // 60:02d}:{seconds % 60:02d}]"


def display_name(item: dict[str, Any]) -> str:
    return item["title"] or f"Untitled {item['source']} of {item['created_at'][:10]}"


async def list_page(store: Store, cursor: object) -> tuple[list[dict[str, Any]], str | None]:
    """A page of transcript resources (uri, name, title, description, mimeType), newest first."""
    from magnotia_mcp.store.transcripts import list_transcripts  # on first use: initialize does not need it

    if cursor is not None and not isinstance(cursor, str):
        raise InvalidParams("invalid params: cursor must be a string from nextCursor")
    try:
        after = cursors.decode("resources", cursor, 2) if cursor else None
    except Exception:
        raise InvalidParams("invalid params: cursor was not issued by this server; omit it to start over") from None
    async with store.reader() as db:
        page, key = await list_transcripts(db, limit=PAGE, after=after)
    resources = [
        {
            "uri": transcript_uri(item["id"]),
            "name": display_name(item),
            "title": display_name(item),
            "description": f"{item['source']} of {item['created_at']}, {_duration(item['duration_ms'])}",
            "mimeType": MIME,
        }
        for item in page
    ]
    return resources, (cursors.encode("resources", key) if key else None)


def transcript_id_from(uri: object) -> str:
    if not isinstance(uri, str):
        raise InvalidParams("invalid params: resources/read needs params.uri, a string")
    if not uri.startswith(URI_PREFIX) or len(uri) == len(URI_PREFIX) or "/" in uri[len(URI_PREFIX) :]:
        raise ResourceNotFound(f"Resource not found: {uri} (this server has {URI_TEMPLATE})", {"uri": uri})
    return uri[len(URI_PREFIX) :]


async def read_markdown(store: Store, uri: object) -> dict[str, Any]:
    """The resource's contents entry: the transcript rendered as Markdown."""
    from magnotia_mcp.store.transcripts import get_transcript  # on first use: initialize does not need it

    transcript_id = transcript_id_from(uri)
    async with store.reader() as db:
        try:
            t = await get_transcript(
                db, transcript_id=transcript_id, fmt="formatted", offset=0, max_chars=sys.maxsize, include_segments=True
            )
        except NotFound:
            raise ResourceNotFound(f"Resource not found: {uri}", {"uri": uri}) from None
    return {"uri": uri, "mimeType": MIME, "text": render(t)}


def render(t: dict[str, Any]) -> str:
    lines = [
        f"# {display_name(t)}",
        "",
        f"- Date: {t['created_at']}",
        f"- Source: {t['source']}",
        f"- Duration: {_duration(t['duration_ms'])}",
    ]
    if t["language"]:
        lines.append(f"- Language: {t['language']}")
    lines.append("")
    segments = t.get("segments") or []
    if t["source"] == "meeting" and segments:
        for s in segments:
            who = f" {s['speaker']}:" if s["speaker"] else ""
            lines.append(f"{_stamp(s['start_ms'])}{who} {s['text']}")
    else:
        lines.append(t["text"])
    if t["tasks"]:
        lines += ["", "## Tasks", ""]
        lines += [f"- [{'x' if k['status'] == 'done' else ' '}] {k['title']}" for k in t["tasks"]]
    return "\n".join(lines) + "\n"
