"""Prompts a host shows as commands, and completion of their transcript ids.

Each prompt embeds the transcript as a resource (the same Markdown that
``resources/read`` returns) instead of pasting unbounded text into the
instruction, so the host can show, cache or trim it like any resource.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from magnotia_mcp.args.checks import time_range
from magnotia_mcp.budget import DEFAULT_TOKENS, clip
from magnotia_mcp.errors import InvalidArguments, InvalidParams, ResourceNotFound
from magnotia_mcp.resources import URI_TEMPLATE, display_name, read_markdown, transcript_uri
from magnotia_mcp.tokencost import estimate, json_text

if TYPE_CHECKING:
    from magnotia_mcp.store.pool import Store

JSON = dict[str, Any]
MAX_COMPLETIONS = 100
REVIEW_LIMIT = 20
PROMPT_TOKENS = 600  # what a prompt's own words and description may take of the budget, besides the transcript
LISTED_TITLE_TOKENS = 100  # a meeting's title in a review listing, at most

# A prompt argument of this name takes a transcript id, and completion offers them.
TRANSCRIPT_ID = "transcript_id"
_TRANSCRIPT_ARG = {
    "name": TRANSCRIPT_ID,
    "title": "Transcript",
    "description": "The transcript's id (type part of its title to complete it).",
    "required": True,
}


Builder = Callable[["Store", dict[str, str], bool], Awaitable[list[JSON]]]


class Prompt(NamedTuple):
    name: str
    title: str
    description: str
    arguments: list[JSON]
    build: Builder  # (store, arguments, resource links allowed) -> messages

    def definition(self, titles: bool) -> JSON:
        """The prompt as ``prompts/list`` shows it; titles only where the revision has them."""
        out: JSON = {"name": self.name}
        if titles:
            out["title"] = self.title
        out["description"] = self.description
        out["arguments"] = [{k: v for k, v in arg.items() if titles or k != "title"} for arg in self.arguments]
        return out

    def takes(self, argument: str) -> bool:
        return any(a["name"] == argument for a in self.arguments)


async def _transcript_message(store: Store, args: dict[str, str]) -> JSON:
    uri = transcript_uri(args["transcript_id"])
    try:
        contents = await read_markdown(store, uri, DEFAULT_TOKENS - PROMPT_TOKENS)
    except ResourceNotFound:
        raise InvalidParams(
            f"invalid params: Transcript {args['transcript_id']} not found; "
            "pick an id from list_transcripts or from completion"
        ) from None
    return {"role": "user", "content": {"type": "resource", "resource": contents}}


def _instruction(text: str) -> JSON:
    return {"role": "user", "content": {"type": "text", "text": text}}


def _about_one_transcript(instruction: str) -> Builder:
    """A prompt builder: the transcript embedded as a resource, then the instruction."""

    async def build(store: Store, args: dict[str, str], _links: bool) -> list[JSON]:
        return [await _transcript_message(store, args), _instruction(instruction)]

    return build


_summarize = _about_one_transcript(
    "Summarise the transcript above for someone who was not there: a two-sentence overview, then the "
    "key points, decisions and open questions as short bullet lists. Quote sparingly and keep names "
    "as written."
)
_action_items = _about_one_transcript(
    "List every action item in the transcript above as a checklist: what, who (if said), and by when "
    "(if said). Mark items that also appear under '## Tasks' as already tracked. Do not invent owners "
    "or dates."
)


async def _review_meetings(store: Store, args: dict[str, str], links: bool) -> list[JSON]:
    from magnotia_mcp.store.transcripts import list_transcripts  # on first use: initialize does not need it

    window = time_range({k: v for k, v in args.items() if k in ("since", "until") and v})
    async with store.reader() as db:
        page, more, _ = await list_transcripts(
            db, limit=REVIEW_LIMIT, since=window.since, until=window.until, source="meeting"
        )
    period = f"from {args['since']}" + (f" until {args['until']}" if args.get("until") else "")
    period += f" ({window.since} to {window.until or 'now'}, UTC)"
    if not page:
        return [_instruction(f"There are no Magnotia meetings {period}. Say so, and suggest a wider period.")]
    # As many of the meetings as fit in the budget, newest first, each title shortened if very long.
    k = len(page)
    while True:
        messages = _review_messages(page[:k], period, links, more is not None or k < len(page))
        cost = estimate(json_text(messages))
        if cost <= DEFAULT_TOKENS - PROMPT_TOKENS or k == 1:
            return messages
        k = max(1, min(k - 1, k * (DEFAULT_TOKENS - PROMPT_TOKENS) // cost))


def _review_messages(page: list[JSON], period: str, links: bool, more: bool) -> list[JSON]:
    def name(m: JSON) -> str:
        return clip(display_name(m), LISTED_TITLE_TOKENS)

    listing = "\n".join(f"- {name(m)} ({m['created_at']}, id {m['id']}): {m['preview']}" for m in page)
    note = f"\n(Only the {len(page)} most recent are listed; there are more.)" if more else ""
    # Before 2025-06-18 there are no resource links: do not point the model at ones it will not get.
    how = "get_transcript, or the linked resources" if links else "get_transcript with each id"
    messages = [
        _instruction(
            f"Review my meetings {period}.\n\n{listing}{note}\n\n"
            f"Read each one ({how}), then give: the themes across them, the "
            "decisions made, open questions, and what needs follow-up. Cite meetings by title and date."
        )
    ]
    if links:
        messages += [
            {
                "role": "user",
                "content": {
                    "type": "resource_link",
                    "uri": transcript_uri(m["id"]),
                    "name": name(m),
                    "mimeType": "text/markdown",
                },
            }
            for m in page
        ]
    return messages


PROMPTS: dict[str, Prompt] = {
    p.name: p
    for p in (
        Prompt(
            "summarize_transcript",
            "Summarise a transcript",
            "Summarise one dictation or meeting: overview, key points, decisions, open questions.",
            [_TRANSCRIPT_ARG],
            _summarize,
        ),
        Prompt(
            "action_items",
            "Action items from a transcript",
            "Pull the action items (what, who, when) out of one transcript.",
            [_TRANSCRIPT_ARG],
            _action_items,
        ),
        Prompt(
            "review_meetings",
            "Review a period's meetings",
            "Themes, decisions and follow-ups across the meetings of a period.",
            [
                {
                    "name": "since",
                    "title": "Since",
                    "description": "Start of the period: last week, this month, 7d, 2026-05, a date "
                    "(2026-05-01) or an RFC 3339 time.",
                    "required": True,
                },
                {
                    "name": "until",
                    "title": "Until",
                    "description": "End of the period (exclusive; a word such as yesterday counts to its "
                    "end); default: now.",
                    "required": False,
                },
            ],
            _review_meetings,
        ),
    )
}


async def get(store: Store, name: object, arguments: object, links: bool) -> JSON:
    if not isinstance(name, str) or name not in PROMPTS:
        raise InvalidParams(f"invalid params: unknown prompt {name!r}; this server has {', '.join(PROMPTS)}")
    prompt = PROMPTS[name]
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict) or not all(isinstance(v, str) for v in arguments.values()):
        raise InvalidParams("invalid params: prompt arguments must be an object of strings")
    known = {a["name"] for a in prompt.arguments}
    unknown = sorted(set(arguments) - known)
    if unknown:
        raise InvalidParams(f"invalid params: prompt {name} has no argument {unknown[0]!r}")
    for arg in prompt.arguments:
        if arg["required"] and not arguments.get(arg["name"]):
            raise InvalidParams(f"invalid params: prompt {name} needs the argument {arg['name']!r}")
    try:
        messages = await prompt.build(store, arguments, links)
    except InvalidArguments as exc:
        raise InvalidParams(f"invalid params: {exc.message}") from None
    return {"description": prompt.description, "messages": messages}


async def complete(store: Store, ref: object, argument: object) -> JSON:
    """Values for a prompt's transcript_id or the resource template's {id}."""
    from magnotia_mcp.store.transcripts import complete_transcript_ids  # on first use: initialize does not need it

    if not isinstance(ref, dict) or not isinstance(argument, dict):
        raise InvalidParams("invalid params: completion/complete needs ref and argument objects")
    name, value = argument.get("name"), argument.get("value", "")
    if not isinstance(name, str) or not isinstance(value, str):
        raise InvalidParams("invalid params: argument needs a string name and value")
    if ref.get("type") == "ref/prompt":
        ref_name = ref.get("name")
        prompt = PROMPTS.get(ref_name) if isinstance(ref_name, str) else None
        if prompt is None:
            raise InvalidParams(f"invalid params: unknown prompt {ref.get('name')!r}")
        wants_ids = name == TRANSCRIPT_ID and prompt.takes(name)
    else:
        wants_ids = ref.get("type") == "ref/resource" and ref.get("uri") == URI_TEMPLATE and name == "id"
    if not wants_ids:
        return {"completion": {"values": [], "total": 0, "hasMore": False}}
    async with store.reader() as db:
        ids = await complete_transcript_ids(db, value, MAX_COMPLETIONS + 1)
    values = ids[:MAX_COMPLETIONS]
    while len(values) > 1 and estimate(json_text(values)) > DEFAULT_TOKENS:  # ids the app did not make: any length
        values = values[: len(values) // 2]
    return {"completion": {"values": values, "hasMore": len(ids) > len(values)}}
