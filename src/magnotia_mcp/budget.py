"""How many tokens an answer costs the model, estimated from above, and fitting answers to a budget.

Hosts refuse or spill large tool results by *tokens*: Claude Code warns from
10,000 and refuses over 25,000 (``MAX_MCP_OUTPUT_TOKENS``), and a character
limit means very different token counts in English, Chinese or emoji. Every
answer is therefore held to a budget of estimated tokens (``DEFAULT_TOKENS``,
at most ``MAX_TOKENS``), counted on what a host shows the model: one copy of the
answer, the larger of the text content and the compact JSON of
``structuredContent`` (Claude Code 2.1.332 gives the model only
``JSON.stringify(structuredContent)`` when there is one; Claude.ai and ChatGPT
read the text). Counting both, as this once did, cut answers to a third of what
the model could take.

The estimate (``tokencost``) is an upper bound within about 14% by two real tokenizers, so an answer cut
for its budget holds most of what the model could take.
"""

from __future__ import annotations

from typing import Any

from magnotia_mcp.text import item_line, result_text
from magnotia_mcp.tokencost import (
    NO_PARTS,
    UNIT,
    Parts,
    estimate,
    json_text,
    parts,
    plus,
    seam,
    string_cost,
    tokens,
)

DEFAULT_TOKENS = 8_000  # under the 10,000 at which Claude Code starts to warn
MAX_TOKENS = 20_000  # under the 25,000 it refuses by default, with room for its own count
MIN_TOKENS = 1_000  # room for a transcript's details and some text


def prefix_within(text: str, tokens: int, inner: Parts | None = None) -> int:
    """How many characters of text, from its start, fit in tokens (their JSON form costed).

    Linear: the text is costed in blocks of about 1,024 characters, each ended at a ``seam`` (so that
    their counts add up), and only the block where the budget runs out is bisected. Each block's cost is
    rounded up, so the prefix may leave up to a token a block unused. inner, the text's string_parts when
    already counted, answers at once for a text that fits with room for that rounding.
    """
    if tokens <= 0:
        return 0
    block, used, at = 1024, 0, 0
    if inner is not None:
        blocks = -(-len(text) // block)  # each block's cost rounded up to a whole token: less than one more
        if -(-inner[0] // UNIT) + blocks <= tokens:
            return len(text)
    while at < len(text):
        end = seam(text, at + block)
        cost = string_cost(text[at:end])
        if used + cost > tokens:
            lo, hi = 0, end - at  # lo fits, hi does not
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if used + string_cost(text[at : at + mid]) <= tokens:
                    lo = mid
                else:
                    hi = mid
            return at + lo
        used += cost
        at = end
    return len(text)


def clip(value: str, tokens: int, mark: str = "…") -> str:
    """value cut to cost at most tokens, ended with mark when cut."""
    if string_cost(value) <= tokens:
        return value
    return value[: prefix_within(value, tokens - string_cost(mark))] + mark


def answer_cost(result: dict[str, Any], copies: int) -> int:
    """Tokens a tool result costs the model: its text content or, when also sent (copies=2), its
    structuredContent, whichever costs more (a host shows the model one of them)."""
    cost = estimate(result_text(result))
    return max(cost, estimate(json_text(result))) if copies > 1 else cost


def cost_with_string(result: dict[str, Any], copies: int, key: str, inner: Parts) -> int:
    """answer_cost(result, copies), with the string under key counted beforehand (inner: its string_parts).

    Exact, not a bound: the answer without that string is counted, and the string's counts added
    (it appears once in the text content and once in structuredContent).
    """
    frame = {**result, key: ""}
    cost = tokens(plus(parts(result_text(frame)), inner))
    return max(cost, tokens(plus(parts(json_text(frame)), inner))) if copies > 1 else cost


class PageCost:
    """answer_cost of results whose list under key holds the first k items of page, each item encoded once.

    Exact: a list of k items in the text content is the empty list's ``[]`` opened onto lines of its
    own (``OPENED``), the items' lines and k - 1 line separators; in structuredContent, the items'
    compact JSON and k - 1 commas. Each item is encoded once, as its line of the text content: its
    compact JSON counts the same but for the line's indent (the spaces after its separators cost
    nothing, ``_SPACES_FREE``), and result_text reuses the lines (``Answer``). The count of k items is
    the count of the nearest k counted before, with the items between joined and counted in one pass
    added or taken off (``parts`` adds up over concatenation: per-item counting cost more than the
    encoding itself). Only the rest of the answer is encoded again for each k. A page read in chunks
    is counted as it grows (``extend``), so each item is counted about once in all.
    """

    __slots__ = ("_copies", "_key", "_known", "_text")

    def __init__(self, page: list[Any], key: str, copies: int) -> None:
        self._key, self._copies = key, copies
        self._text: list[str] = []
        self._known: dict[int, Parts] = {}  # the text of items(k) counted so far, by k
        self.extend(page)

    @property
    def counted(self) -> int:
        """How many items have been counted."""
        return len(self._text)

    def lines(self, k: int) -> list[str]:
        """The first k items' lines, as result_text writes them."""
        return self._text[:k]

    def extend(self, items: list[Any]) -> None:
        """Count items after those counted before."""
        self._text += map(item_line, items)

    def items(self, k: int) -> tuple[Parts, Parts]:
        """The first k items' counts, text and compact, with their k - 1 separators (k <= counted).

        From the nearest k counted before, up or down (counts add up, so they subtract too): only the items between
        are counted, so a page counted as it is read, then probed near its end, counts each item about once.
        """
        if k == 0:
            return NO_PARTS, NO_PARTS
        text = self._known.get(k)
        if text is None:
            assert k <= self.counted, (k, self.counted)  # a count kept for more items than counted would go stale
            below = max((j for j in self._known if j < k), default=0)
            above = min((j for j in self._known if j > k), default=None)
            if above is not None and above - k < k - below:
                lo, hi, base, sign = k, above, self._known[above], -1
            else:
                lo, hi, base, sign = below, k, self._known[below] if below else NO_PARTS, 1
            text = plus(base, parts(",\n".join(self._text[lo:hi])), sign)
            if lo:  # the separator between the items below lo and those counted here
                text = plus(text, _LINE_SEPARATOR, sign)
            self._known[k] = text
        # The same items compact: no indents, and "," where the lines have ",\n".
        compact = plus(plus(text, _INDENT, -k), _NEWLINE, 1 - k)
        return text, compact

    def own(self) -> int:
        """What the items counted so far cost by themselves (separators not counted)."""
        k = self.counted
        text, compact = self.items(k)
        if k > 1:
            text, compact = plus(text, _LINE_SEPARATOR, 1 - k), plus(compact, _COMMA, 1 - k)
        return max(tokens(text), tokens(compact) if self._copies > 1 else 0)

    def over(self, budget: int) -> bool:
        """Whether the items counted so far cost more than budget by themselves."""
        return self.own() > budget

    def more(self, budget: int) -> int:
        """About how many more items like those counted it takes for all of them to cost more than budget (0: they do).

        A tenth and two more than their mean cost says: items differ, and reading a few too many costs less than
        reading again for the last few.
        """
        own = self.own()
        if own > budget:
            return 0
        return -(-(budget - own) * self.counted * 11 // (max(own, 1) * 10)) + 2

    def __call__(self, result: dict[str, Any], k: int) -> int:
        frame = {**result, self._key: []}
        text = parts(result_text(frame))
        items_text, items_compact = self.items(k) if k else (NO_PARTS, NO_PARTS)
        if k:
            text = plus(plus(text, OPENED), items_text)
        if self._copies <= 1:
            return tokens(text)
        compact = parts(json_text(frame))
        if k:
            compact = plus(compact, items_compact)
        return max(tokens(text), tokens(compact))


class Answer(dict[str, Any]):
    """A tool's answer whose page of items (under ``page[0]``) has its text content lines made already
    (``page[1]``, one an item: budget.PageCost made them to count them), for result_text to reuse."""

    __slots__ = ("page",)

    def __init__(self, answer: dict[str, Any], key: str, lines: list[str]) -> None:
        super().__init__(answer)
        self.page = (key, lines)


# The items fit_page counts at first when none were counted as the page was read.
FIRST_COUNTED = 16
OPENED = parts("\n\n  ")  # result_text opens a list's "[]" to "[\n" items "\n  ]"
_LINE_SEPARATOR = parts(",\n")
_COMMA = parts(",")
_NEWLINE = parts("\n")
_INDENT = parts(item_line(None)[:-4])  # item_line's indent
# A line of the text content is its item's compact JSON with a space after each separator: counted alike
# only while a lone space costs nothing (tokens carry their leading space).
_SPACES_FREE = parts(" ") == NO_PARTS
assert _SPACES_FREE, "PageCost counts an item's compact JSON from its line: a space must cost nothing"


def squeeze(result: dict[str, Any], fits: Any, strings: frozenset[str], lists: frozenset[str]) -> bool:
    """Shrink result in place until fits(result); returns whether it shrank anything.

    Only strings under a key in strings (and the strings in a list under such a key)
    are clipped, and only lists under a key in lists are shortened from the end: ids,
    offsets and cursors are never touched. Long strings are halved first (down to
    LEGIBLE tokens, an eighth at a time), then the longest list by halves, then strings below that.
    """
    shrank = False
    while not fits(result):
        found: list[tuple[Any, Any, int]] = []
        _walk(result, strings, lists, found)
        texts = [f for f in found if isinstance(f[0][f[1]], str)]
        longest = max((cost for _, _, cost in texts), default=0)
        rows = [f for f in found if not isinstance(f[0][f[1]], str) and f[0][f[1]]]
        if longest > LEGIBLE or (not rows and longest > 2):
            cap = max(longest // 8, 1 if longest <= LEGIBLE else LEGIBLE)  # a few rounds, not a dozen
            for holder, key, cost in texts:
                if cost > cap:
                    holder[key] = clip(holder[key], cap)
        elif rows:
            holder, key, _ = max(rows, key=lambda f: f[2])
            holder[key] = holder[key][: len(holder[key]) // 2]
        else:
            return shrank
        shrank = True
    return shrank


LEGIBLE = 64  # tokens: strings are not cut shorter than this while a list can give way instead


def _walk(value: Any, strings: frozenset[str], lists: frozenset[str], found: list[Any]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, str) and key in strings:
                found.append((value, key, string_cost(item)))
            elif isinstance(item, list):
                if key in lists and item:
                    found.append((value, key, estimate(json_text(item))))
                if key in strings:
                    found += [(item, k, string_cost(s)) for k, s in enumerate(item) if isinstance(s, str)]
                for element in item:
                    _walk(element, strings, lists, found)
            elif isinstance(item, dict):
                _walk(item, strings, lists, found)


# What may be shortened inside a listed item that alone would not fit: text for reading, never ids or times.
ITEM_STRINGS = frozenset({"title", "preview", "notes", "snippet", "speakers", "speaker", "matched_terms", "name"})
ITEM_LISTS = frozenset({"speakers", "moments", "matched_terms"})


def fit_page(
    result: dict[str, Any],
    items: str,
    budget: int,
    copies: int,
    cursor_after: Any,
    what: str,
    total: int | None = None,
    cost: PageCost | None = None,
) -> dict[str, Any]:
    """result with its page of items cut to what fits in budget, with a cursor to the rest and a note.

    cursor_after(item) is the next_cursor that continues after item. The page keeps
    at least one item (shortened to fit if it alone is too large), so paging always
    moves on. total: how many items the page has when result holds only the first of
    them, because those alone already cost more than budget (the rest need not be made).
    cost: the page's items counted already (while it was read), if they were.
    """
    result["max_tokens"] = budget
    page = result[items]
    full, cursor = len(page) if total is None else total, result.get("next_cursor")
    if not page:  # nothing to cut: what else the answer holds keeps within budget itself
        return result
    # Each item encoded once, and only as many as may fit (a 100-task page that holds 45 encodes about 50),
    # whether the page fits whole or the most that fit is searched for.
    if cost is None:
        cost = PageCost(page[:FIRST_COUNTED], items, copies)
    while cost.counted < len(page) and not cost.over(budget):  # counted (in part) as the page was read, or here
        cost.extend(page[cost.counted : cost.counted + max(cost.more(budget), 1)])
    reach = len(page) if cost.counted == len(page) and not cost.over(budget) else max(cost.counted - 1, 1)
    whole = cost(result, reach)
    if full == len(page) == reach and whole <= budget:
        return Answer(result, items, cost.lines(len(page)))

    def trial(k: int) -> dict[str, Any]:
        trimmed = {**result, items: page[:k]}
        if k < full:
            trimmed["next_cursor"] = cursor_after(page[k - 1])
            trimmed["note"] = (
                f"Only {k} of the {full} {what} asked for fit within max_tokens={budget}; "
                "pass next_cursor to get the rest."
            )
        return trimmed

    # Find the most items that fit; one always goes, shortened if need be. Items cost about alike, so the
    # first probes go where the page's cost puts the boundary: most pages take two trials, not log2(n).
    guess = reach * budget // max(whole, 1)
    probes, lo, hi = [guess, guess + 1, guess - 1], 1, reach
    fits: dict[int, bool] = {}
    while lo < hi:
        ahead = [p for p in probes if lo < p <= hi]
        mid, probes = (ahead[0], ahead[1:]) if ahead else ((lo + hi + 1) // 2, [])
        fits[mid] = cost(trial(mid), mid) <= budget
        if fits[mid]:
            lo = mid
        else:
            hi = mid - 1
    out = trial(lo)
    if not fits.get(lo, False) and cost(out, lo) > budget:
        out[items] = [dict(page[0])]
        squeeze(out, lambda r: answer_cost(r, copies) <= budget, ITEM_STRINGS, ITEM_LISTS)
        out["note"] = (out.get("note", "") + f" Long text in the first {what[:-1]} was shortened to fit.").strip()
        return out  # its one item changed: its line is made anew
    if lo == full and "next_cursor" in result:
        out["next_cursor"] = cursor
    return Answer(out, items, cost.lines(lo))
