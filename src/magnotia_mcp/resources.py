"""Transcripts as MCP resources: ``magnotia://transcripts/{id}``, read as Markdown."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from magnotia_mcp.args import cursors
from magnotia_mcp.budget import DEFAULT_TOKENS, clip, prefix_within
from magnotia_mcp.errors import InvalidParams, NotFound, ResourceNotFound, named
from magnotia_mcp.text import window_end
from magnotia_mcp.tokencost import estimate, json_text

if TYPE_CHECKING:
    from magnotia_mcp.store.pool import Store

URI_PREFIX = "magnotia://transcripts/"
URI_TEMPLATE = URI_PREFIX + "{id}"
MIME = "text/markdown"
PAGE = 50
NAME_TOKENS = 200  # a title longer than this is shortened in names and headings
NOTE_TOKENS = 200  # room kept for the note that says where a cut transcript goes on

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


async def list_page(
    store: Store, cursor: object, budget: int = DEFAULT_TOKENS
) -> tuple[list[dict[str, Any]], str | None]:
    """A page of transcript resources (uri, name, title, description, mimeType), newest first."""
    from magnotia_mcp.store.transcripts import list_transcripts  # on first use: initialize does not need it

    if cursor is not None and not isinstance(cursor, str):
        raise InvalidParams("invalid params: cursor must be a string from nextCursor")
    try:
        after = cursors.decode("resources", cursor, 2) if cursor else None
    except Exception:
        raise InvalidParams("invalid params: cursor was not issued by this server; omit it to start over") from None
    async with store.reader() as db:
        page, key, _ = await list_transcripts(db, limit=PAGE, after=after)
    resources = [
        {
            "uri": transcript_uri(item["id"]),
            "name": clip(display_name(item), NAME_TOKENS),
            "title": clip(display_name(item), NAME_TOKENS),
            "description": f"{item['source']} of {item['created_at']}, {_duration(item['duration_ms'])}",
            "mimeType": MIME,
        }
        for item in page
    ]
    # As many as fit in the budget (both revisions' fields counted), the rest on the next page.
    k = len(resources)
    while k > 1 and estimate(json_text(resources[:k])) > budget:
        k = max(1, k * budget // estimate(json_text(resources[:k])))
    if k < len(resources):
        return resources[:k], cursors.encode("resources", (page[k - 1]["created_at"], page[k - 1]["id"]))
    return resources, (cursors.encode("resources", key) if key else None)


def transcript_id_from(uri: object) -> str:
    if not isinstance(uri, str):
        raise InvalidParams("invalid params: resources/read needs params.uri, a string")
    if not uri.startswith(URI_PREFIX) or len(uri) == len(URI_PREFIX) or "/" in uri[len(URI_PREFIX) :]:
        raise ResourceNotFound(
            f"Resource not found: {named(uri)} (this server has {URI_TEMPLATE})", {"uri": named(uri)}
        )
    return uri[len(URI_PREFIX) :]


async def read_markdown(store: Store, uri: object, budget: int = DEFAULT_TOKENS) -> dict[str, Any]:
    """The resource's contents entry: the transcript rendered as Markdown, as much as fits in budget."""
    from magnotia_mcp.store.transcripts import get_transcript  # on first use: initialize does not need it

    transcript_id = transcript_id_from(uri)
    async with store.reader() as db:
        try:
            # No character costs less than a third of a token: more than this cannot fit.
            t = await get_transcript(
                db,
                transcript_id=transcript_id,
                fmt="formatted",
                offset=0,
                max_chars=3 * budget + 3,
                include_segments=True,
            )
        except NotFound:
            raise ResourceNotFound(f"Resource not found: {named(str(uri))}", {"uri": named(str(uri))}) from None
    return {"uri": uri, "mimeType": MIME, "text": render(t, budget)}


def render(t: dict[str, Any], budget: int = DEFAULT_TOKENS) -> str:
    """The transcript as Markdown; when it does not all fit in budget, its start and how to read on."""
    head = _head(t)
    body, tasks = _body(t), _tasks(t)
    whole = t["next_offset"] is None
    text = "\n".join(head + body + tasks) + "\n"
    if whole and estimate(text) <= budget:
        return text
    room = budget - estimate("\n".join(head)) - NOTE_TOKENS
    shown: list[str] = []
    for line in body:
        cost = estimate(line) + 1
        if cost > room:
            if not shown:  # one line longer than the room: its start
                cut = prefix_within(line, room)
                shown.append(line[: window_end(line, 0, cut) if cut else 0])
            break
        shown.append(line)
        room -= cost
    segments = t.get("segments") or []
    if t["source"] == "meeting" and segments:
        # Whole lines shown: reading on from the end of the last of them starts with the next one.
        k = sum(1 for a, b in zip(shown, body, strict=False) if a == b)
        how = f"start_ms={segments[k - 1]['end_ms'] if k else 0}"
    else:
        how = f"offset={len(shown[0]) if shown else 0}"
    note = [
        "",
        f"*(Cut here to keep this within {budget} tokens. Read on with the get_transcript tool: "
        f"id={t['id']}, {how}; list_tasks with transcript_id={t['id']} lists its tasks.)*",
    ]
    return "\n".join(head + shown + note) + "\n"


def _head(t: dict[str, Any]) -> list[str]:
    lines = [
        f"# {clip(display_name(t), NAME_TOKENS)}",
        "",
        f"- Date: {t['created_at']}",
        f"- Source: {t['source']}",
        f"- Duration: {_duration(t['duration_ms'])}",
    ]
    if t["language"]:
        lines.append(f"- Language: {clip(t['language'], NAME_TOKENS)}")
    lines.append("")
    return lines


def _body(t: dict[str, Any]) -> list[str]:
    segments = t.get("segments") or []
    if t["source"] == "meeting" and segments:
        return [
            f"{_stamp(s['start_ms'])}{' ' + s['speaker'] + ':' if s['speaker'] else ''} {s['text']}" for s in segments
        ]
    return [t["text"]]


def _tasks(t: dict[str, Any]) -> list[str]:
    if not t["tasks"]:
        return []
    return ["", "## Tasks", ""] + [f"- [{'x' if k['status'] == 'done' else ' '}] {k['title']}" for k in t["tasks"]]
