"""Help where words fail (issue 21, item 5): what the store holds, when a search finds little.

Search matches words, not meanings: a question worded unlike the meeting, or asked in
another language than the meeting was held in, finds nothing or only hits that share a word
or two. Such an answer gets a ``hint``: what the store holds that could help (its transcripts'
languages with counts, its time span, whether a semantic index exists) and the next calls worth
trying. An answer with good matches is unchanged.

What the store holds is read once per store generation, only when a search first needs it, and
kept: a search that finds good matches never pays for it, and ``initialize`` (answered before the
store is opened) names the languages only once they are known, without reading anything.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # only for annotations: the reader pulls in asyncio and sqlite3
    from magnotia_mcp.search.querylang import Query
    from magnotia_mcp.store.reader import Reader

JSON = dict[str, Any]

# English names of the primary language subtags a speech model records (BCP 47).
NAMES = {
    "ar": "Arabic", "ca": "Catalan", "cs": "Czech", "da": "Danish", "de": "German", "el": "Greek",
    "en": "English", "es": "Spanish", "fi": "Finnish", "fr": "French", "he": "Hebrew", "hi": "Hindi",
    "hu": "Hungarian", "it": "Italian", "ja": "Japanese", "ko": "Korean", "nb": "Norwegian", "nl": "Dutch",
    "no": "Norwegian", "pl": "Polish", "pt": "Portuguese", "ro": "Romanian", "ru": "Russian", "sv": "Swedish",
    "tr": "Turkish", "uk": "Ukrainian", "zh": "Chinese",
}  # fmt: skip
# search.stemming's language names, as tags: a transcript with no recorded language is guessed among these.
_TAGS = {"english": "en", "portuguese": "pt", "spanish": "es", "german": "de", "french": "fr"}
SAMPLE = 5000  # the newest live transcripts whose languages are counted (all of them in most stores)
GUESS_SAMPLE = 200  # transcripts without a recorded language whose language is guessed (the newest)
GUESS_CHARS = 300  # of each one's text, after its title
WEAK_SHARE = 0.5  # hits matching at most this share of a query's words (of two or more) are weak
TASKS_COUNTED = 10  # tasks matching the query, counted up to this many
_WORD = re.compile(r"\w+")

# (store path, file identity) -> (generation, what it holds); and the last one read, for initialize.
_HOLDS: dict[tuple[str, object], tuple[int, JSON]] = {}
_latest: list[JSON] = []


def found_little(query: Query, hits: list[JSON]) -> str | None:
    """ "nothing", "partial" (every hit matches at most half of the query's words), or None: good matches."""
    if not hits:
        return "nothing"
    clauses = len(query.clauses)
    best = max(query.clauses_matched(hit["matched_terms"]) for hit in hits)
    return "partial" if clauses >= 2 and best <= WEAK_SHARE * clauses else None


async def holdings(db: Reader) -> JSON:
    """What the live store holds (languages with counts, time span), read once per store generation."""
    key = (str(db.path), db.info.identity)
    cached = _HOLDS.get(key)
    if cached is not None and cached[0] == db.generation:
        return cached[1]
    from magnotia_mcp.store import transcripts

    rows, first_at, last_at = await transcripts.languages(db, SAMPLE)
    counts: dict[tuple[str | None, bool], int] = {}
    for r in rows:
        if r["language"] is not None:
            counts[(r["language"], False)] = r["transcripts"]
    unlabelled = sum(r["transcripts"] for r in rows if r["language"] is None)
    if unlabelled:
        heads = await transcripts.unlabelled_heads(db, GUESS_SAMPLE, GUESS_CHARS)
        for tag in map(_guess, heads):
            counts[(tag, tag is not None)] = counts.get((tag, tag is not None), 0) + 1
        if unlabelled > len(heads):
            counts[(None, False)] = counts.get((None, False), 0) + unlabelled - len(heads)
    languages = [
        {"language": tag, "name": _name(tag), "transcripts": n, **({"guessed": True} if guessed else {})}
        for (tag, guessed), n in sorted(counts.items(), key=lambda item: (-item[1], str(item[0][0])))
    ]
    counted = sum(r["transcripts"] for r in rows)
    held: JSON = {
        "transcripts": counted,
        "newest_only": counted == SAMPLE,  # a bigger store: the languages of its newest SAMPLE
        "languages": languages,
        "first_at": first_at,
        "last_at": last_at,
        "semantic_index": False,  # set by the search that used one
    }
    _HOLDS[key] = (db.generation, held)
    _latest[:] = [held]
    return held


async def tasks_matching(db: Reader, text: str, found: str) -> int | None:
    """For an answer that found nothing: how many tasks list_tasks would give for the query (title or notes),
    counted up to TASKS_COUNTED; else None.

    A question whose answer may be a task (a due date, a to-do) otherwise costs a model a list_tasks call to be
    sure. Not for weak hits, which a model reads first: counting scans every task (a few ms for 7,000).
    """
    from magnotia_mcp.store.tasks import count_matching
    from magnotia_mcp.tools.tasks import query_words

    words = query_words(text) if found == "nothing" else None
    return None if words is None else await count_matching(db, words, TASKS_COUNTED)


def hint(found: str, query: Query, held: JSON, filtered: bool, tasks: int | None) -> JSON:
    """The hint for an answer that found little: what happened, what the store holds, what to try next.

    tasks: how many tasks match the query (``tasks_matching``).
    """
    n = len(query.clauses)
    if query.empty:
        said = "The query has only words search ignores (what, did, we, about, the...)."
    elif found == "nothing":
        said = "No transcript matches these words" + (" within the filters." if filtered else ".")
    else:
        said = f"Every hit matches at most half of the {n} words: weak matches."
    if tasks == 0:
        said += " No task matches them either."
    elif tasks is not None:
        many = "1 task matches" if tasks == 1 else f"{tasks}{' or more' * (tasks >= TASKS_COUNTED)} tasks match"
        said += f" {many} them: list_tasks with this query."
    if held["semantic_index"]:
        said += " The semantic index found nothing close in meaning either."
    else:
        said += " Search matches words, not meanings (no semantic index: the user can build one, magnotia-mcp index)."
    tries = ["other words the speakers would have said (synonyms, names, numbers), joined with OR"]
    languages = [lang for lang in held["languages"] if lang["language"] is not None]
    if len({lang["name"] for lang in languages}) > 1:
        tries.append(f"translations: the transcripts are in {_listed(languages)}; add those languages' words with OR")
    span = f"{_day(held['first_at'])} to {_day(held['last_at'])}" if held["first_at"] else "nothing yet"
    if filtered:
        tries.append(f"wider filters (since/until, source, speaker): the store spans {span}")
    else:
        tries.append(f"a time filter (since/until; the store spans {span})")
    return {"found": found, "message": said, "store": held, "try": tries}


def languages_sentence() -> str:
    """For the server's instructions: the languages of the store once known, else how languages work here."""
    named = [lang for lang in _latest[0]["languages"] if lang["language"] is not None] if _latest else []
    if len({lang["name"] for lang in named}) > 1:
        return f" The transcripts are in {_listed(named)}: search in each language a meeting may have been held in."
    if named:
        return f" The transcripts are in {named[0]['name']}."
    return " Transcripts may be in several languages (a search that finds little says which)."


def _guess(text: str) -> str | None:
    from magnotia_mcp.search.folding import fold
    from magnotia_mcp.search.stemming import guess_language

    language = guess_language(_WORD.findall(fold(text)))
    return _TAGS.get(language) if language else None


def _name(tag: str | None) -> str:
    if tag is None:
        return "not recorded"
    return NAMES.get(tag.split("-")[0].lower(), tag)


def _listed(languages: list[JSON]) -> str:
    """ "English (2), Portuguese (2)": counts by name (a recorded pt-BR and a guessed pt are one language)."""
    counts: dict[str, int] = {}
    for lang in languages:
        counts[lang["name"]] = counts.get(lang["name"], 0) + lang["transcripts"]
    named = sorted(counts.items(), key=lambda item: -item[1])
    parts = [f"{name} ({n})" for name, n in named[:6]]
    return ", ".join(parts) + (f" and {len(named) - 6} more" if len(named) > 6 else "")


def _day(stamp: str) -> str:
    return stamp[:10]


def short(hint: JSON) -> JSON:
    """The hint without what the store holds and what to try: for a max_tokens too small for all of it."""
    return {"found": hint["found"], "message": hint["message"]}
