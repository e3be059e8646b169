"""A transcript window fitted to the token budget: the longest that fits, cut in memory in one search.

A window is read once, as max_chars (or the times) asked. When its answer is over
budget it is cut there, never read again: its text to a shorter prefix on a safe
boundary, its segments to those that still overlap that prefix (the store says
how many characters of the window each one needs: ``windows.reach``).

The cut is the longest that fits: one more character (or cluster) would be over.
It is found on a model of the answer's cost in which every piece is encoded once:
the text's counts in blocks ended at seams, added up to any prefix (``parts`` adds up
over such pieces), each segment's counts added up to any number of them, and the rest
of the answer (details, note) counted again only when its numbers change. The model
is exact: it equals the budget's own count (``cost_with_string``) at every cut, which
tests/unit/test_window_fit.py holds it to, so its cut is not counted again. Only a
window of which not even one character fits by the model is searched on the count.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable
from typing import Any

from magnotia_mcp.budget import OPENED, Answer, PageCost, answer_cost, cost_with_string, prefix_within, squeeze
from magnotia_mcp.text import result_text, window_end
from magnotia_mcp.tokencost import NO_PARTS, Parts, json_text, parts, plus, seam, string_parts, tokens

# What may give way in a transcript's details when they alone would fill the budget.
_DETAILS = frozenset({"title", "speakers", "speaker"})  # never "text": windows must rebuild the whole
_DETAIL_LISTS = frozenset({"tasks", "speakers", "segments"})

_BLOCK = 512  # characters of text counted together: a prefix costs its whole blocks and one part block


def fit_window(result: dict[str, Any], needs: list[int], budget: int, copies: int, by_time: bool) -> dict[str, Any]:
    """result (a window as read, and per segment the characters that show it) cut to fit budget.

    The answer says whether it was cut and how to read on (truncated, next_max_chars, note).
    """
    result["max_tokens"] = budget
    asked_end = result["offset"] + len(result["text"])  # the window max_chars (and the times) asked for
    shortened = _shorten_details(result, budget, copies)
    _say(result, asked_end, budget, by_time, shortened)
    text = result["text"]
    inner = string_parts(text)  # counted once: a lower bound below, exact in the count after it
    if not _surely_over(result, inner, budget) and cost_with_string(result, copies, "text", inner) <= budget:
        return result
    cut = _Cut(result, needs, budget, copies, lambda r: _say(r, asked_end, budget, by_time, shortened))
    chars = cut.longest()
    if chars:
        return cut.final(window_end(text, 0, chars))
    # Not even one character (or cluster) fits with its segments: a window holds at least that, or reading
    # would not go on, so the segments and details give way instead.
    out = cut.answer(window_end(text, 0, 1)) if len(text) > 1 else result
    segments = list(out.get("segments") or ())
    shortened |= squeeze(out, lambda r: answer_cost(r, copies) <= budget, _DETAILS, _DETAIL_LISTS)
    _say(out, asked_end, budget, by_time, shortened)
    _say_segments_left(out, segments)
    return out


def _surely_over(result: dict[str, Any], text: Parts, budget: int) -> bool:
    """Whether the window's text (text: its string_parts) and its segments' texts alone cost more than budget
    (every copy holds them).

    Cheap (one count of what the segments say): it spares counting a long window's whole answer, hundreds of segments
    encoded twice, to learn what these already say: it does not fit.
    """
    said = "".join(s["text"] for s in result.get("segments") or ())
    return tokens(plus(text, parts(said))) > budget


class _Cut:
    """The window's answers cut to a prefix of its text, their cost modelled and counted (see the module docstring)."""

    def __init__(
        self,
        result: dict[str, Any],
        needs: list[int],
        budget: int,
        copies: int,
        say: Callable[[dict[str, Any]], None],
    ) -> None:
        self._result, self._needs, self._budget, self._copies, self._say = result, needs, budget, copies, say
        self._text: str = result["text"]
        self._segments: list[dict[str, Any]] = result.get("segments") or []
        # Counts of the text's first i blocks, grown only as far as a probe reaches; the segments' lines,
        # each made (and counted) once as a probe first reaches it, and reused by the answer's text content.
        self._blocks: list[Parts] = [NO_PARTS]
        self._block_ends: list[int] = [0]
        self._lines = PageCost([], "segments", copies)
        # The rest of the answer (details, note), counted once: a cut changes only the values _said
        # gives (numbers and the note), whose counts are taken out here and added back for each cut.
        frame = self.answer(1)
        frame["text"] = ""
        if "segments" in frame:
            frame["segments"] = []
        said = self._said(1)
        self._frame_lines = plus(parts(result_text(frame)), said, -1)
        self._frame_compact = plus(parts(json_text(frame)), said, -1) if copies > 1 else NO_PARTS

    def answer(self, end: int) -> dict[str, Any]:
        """The answer with the window's first end characters, the segments they show, and what it says of them."""
        r = self._result
        out = {**r, "text": self._text[:end]}
        stop = r["offset"] + end
        out["next_offset"] = stop if stop < r["total_chars"] else None
        if "segments" in r:
            out["segments"] = self._segments[: bisect_right(self._needs, end)]
        self._say(out)
        return out

    def final(self, end: int) -> dict[str, Any]:
        """answer(end), with the lines its segments were counted by kept for its text content."""
        out = self.answer(end)
        k = len(out.get("segments") or ())
        if not k:
            return out
        self._segment_parts(k)
        return Answer(out, "segments", self._lines.lines(k))

    def _said(self, end: int) -> Parts:
        """The counts of what a cut of end characters says that another cut says otherwise: its numbers and note.

        Scalars are encoded alike in both copies of the answer, so one count serves both.
        """
        r = self._result
        out = {"offset": r["offset"], "text": self._text[:end]}
        self._say(out)
        stop = r["offset"] + end
        said = [stop if stop < r["total_chars"] else None, out["truncated"], out.get("next_max_chars"), out.get("note")]
        return parts(json_text(said))

    def longest(self) -> int:
        """The most characters of the window (max_chars of window_end: at a safe boundary) whose answer fits; 0: none.

        Never the whole window: that was counted already, and does not fit.
        """
        last = len(self._text) - 1
        if last < 1:
            return 0
        guess = self._guess()
        room = lambda n: self._budget - self._modelled(window_end(self._text, 0, n))  # noqa: E731
        found = _within_segment(room, self._text, self._needs, last, guess) if self._segments else 0
        if not found:  # the guess is off by a few percent, as the segments' lengths vary: the first steps that size
            found = _largest(room, 1, last, guess, max(1, guess // 64))
        # The model adds up exactly what the budget's count counts (tests/unit/test_window_fit.py holds it to that
        # at every kind of cut), so its cut is the answer: counting it again cost a third of the fit. Only when
        # not even one character fits by the model does the count search by itself.
        if found:
            return found
        return _largest(self._room, 1, last, found)

    def _room(self, chars: int) -> int:
        answer = self.answer(window_end(self._text, 0, chars))
        return self._budget - cost_with_string(answer, self._copies, "text", string_parts(answer["text"]))

    def _modelled(self, end: int) -> int:
        """The answer's cost for a window of end characters, on the model."""
        text = plus(self._text_parts(end), self._said(end))
        k = bisect_right(self._needs, end) if self._segments else 0
        lines, compact = plus(self._frame_lines, text), plus(self._frame_compact, text)
        if k:
            items_lines, items_compact = self._segment_parts(k)
            lines, compact = plus(plus(lines, OPENED), items_lines), plus(compact, items_compact)
        if self._copies <= 1:
            return tokens(lines)
        return max(tokens(lines), tokens(compact))  # a host shows the model one copy: the larger counts

    def _text_parts(self, end: int) -> Parts:
        text, ends, blocks = self._text, self._block_ends, self._blocks
        while ends[-1] < end:  # blocks end at seams, so that their counts add up to the prefix's exactly
            at = ends[-1]
            stop = seam(text, at + _BLOCK)
            blocks.append(plus(blocks[-1], string_parts(text[at:stop])))
            ends.append(stop)
        whole = bisect_right(ends, end) - 1
        return plus(blocks[whole], string_parts(text[ends[whole] : end]))

    def _segment_parts(self, k: int) -> tuple[Parts, Parts]:
        """The counts of the first k segments as the answer lays them out: their lines with ",\n" between them
        in the text content, their compact JSON with "," between them in structuredContent (budget.PageCost).

        Each segment is encoded once, when a probe first reaches it; a probe counts only the segments between
        it and the nearest probe counted before.
        """
        counted = self._lines.counted
        if k > counted:
            self._lines.extend(self._segments[counted:k])
        return self._lines.items(k)

    def _guess(self) -> int:
        """Where the cut may be: the share of the budget left beside what the answer costs without text, scaled
        from a first block of text, then again from that guess (segments vary in length: the second is closer)."""
        last = len(self._text) - 1
        fixed, guess = self._modelled(0), min(last, _BLOCK)
        for _ in range(2):
            cost = self._modelled(window_end(self._text, 0, guess))
            if cost <= fixed:
                return last
            guess = max(1, min(last, guess * (self._budget - fixed) // (cost - fixed)))
        return guess


def _within_segment(room: Callable[[int], int], text: str, needs: list[int], last: int, guess: int) -> int:
    """_Cut.longest's search with segments (needs: the characters each needs to show): first how many of them fit,
    then how far into the text the last of them leaves room for. A segment's line costs as much as its text again,
    so the cost jumps where each begins: over those steps it is found among their starts, and between two, where
    the cost grows only with the text, in a few probes where the room left puts it. 0 when not even one fits."""
    starts = sorted({n for n in needs if 1 <= n <= last})
    if not starts:
        return 0
    left: dict[int, int] = {}

    def at_start(i: int) -> int:
        left[i] = room(starts[i])
        return left[i]

    k = _largest(at_start, 0, len(starts) - 1, max(bisect_right(starts, guess) - 1, 0))
    if k < 0:
        return 0
    start, end = starts[k], starts[k + 1] - 1 if k + 1 < len(starts) else last
    # What is left at the segment's start goes on its text (the rest of the answer moves by a token or two).
    reach = start + prefix_within(text[start : end + 1], left[k])
    return _largest(room, start + 1, end, reach) if end > start else start


def _largest(room: Callable[[int], int], lo: int, hi: int, guess: int, step: int = 1) -> int:
    """The largest n in lo..hi with room(n) >= 0 (the tokens left: falling as n grows), or lo - 1 if none.

    Probes guess first, then steps away from it that double (from step), then narrows the gap between the
    last n that fits and the first that does not where the room left says the boundary lies (the cost grows
    about evenly with n), halving it instead whenever that did not halve the gap (a segment's line makes a step).
    """
    good, bad = lo - 1, hi + 1  # room(good) >= 0 unless lo - 1; room(bad) < 0 unless hi + 1
    if hi < lo:
        return good
    left: dict[int, int] = {}

    def fits(n: int) -> bool:
        left[n] = room(n)
        return left[n] >= 0

    at = min(max(guess, lo), hi)
    if fits(at):
        good = at
        while good + step < bad:
            if not fits(good + step):
                bad = good + step
                break
            good, step = good + step, step * 2
    else:
        bad = at
        while bad - step > good:
            if fits(bad - step):
                good = bad - step
                break
            bad, step = bad - step, step * 2
    halve = False
    while bad - good > 1:
        gap = bad - good
        mid = (good + bad) // 2
        if not halve and good in left and bad in left:
            mid = min(max(good + gap * left[good] // (left[good] - left[bad]), good + 1), bad - 1)
        if fits(mid):
            good = mid
        else:
            bad = mid
        halve = 2 * (bad - good) > gap
    return good


def _say_segments_left(result: dict[str, Any], segments: list[dict[str, Any]]) -> None:
    """When segments had to be left out (an empty or one-character window), the note says where they go on.

    The text cannot move the window on here, so the segments' times are the only way to read the rest.
    """
    shown = len(result.get("segments") or ())
    if "segments" not in result or shown >= len(segments):
        return
    first = segments[shown]
    more = (
        f"Segments from seq {first['seq']} on were left out to fit: call get_transcript again with "
        f"start_ms={first['start_ms']} and include_segments=true to read on."
    )
    result["note"] = f"{result['note']} {more}" if result.get("note") else more


def _shorten_details(result: dict[str, Any], budget: int, copies: int) -> bool:
    """Huge details (a very long title, thousands of tasks or speakers) give way first, to half the budget."""
    segments = result.pop("segments", None)
    shrank = squeeze(result, lambda r: answer_cost({**r, "text": ""}, copies) <= budget // 2, _DETAILS, _DETAIL_LISTS)
    if segments is not None:
        result["segments"] = segments
    return shrank


def _say(result: dict[str, Any], asked_end: int, budget: int, by_time: bool, shortened: bool) -> None:
    """truncated, next_max_chars and note: whether the window was cut for the budget, and how to read on."""
    end = result["offset"] + len(result["text"])
    result["truncated"] = end < asked_end
    result.pop("next_max_chars", None)
    result.pop("note", None)
    notes = []
    if end < asked_end:
        result["next_max_chars"] = rest = asked_end - end
        how = (
            f"with offset={end}, max_chars={rest} to read the rest of the time window"
            if by_time
            else f"with offset={end} to read on (max_chars={rest} reads just the rest of this window)"
        )
        notes.append(
            f"Cut at character {end}, {rest} characters short of the window asked for, to keep this answer "
            f"within max_tokens={budget}: call get_transcript again {how}."
        )
    if shortened:
        notes.append(
            "Very long details (title, speakers, tasks or segments) were shortened to fit; list_tasks with "
            "this transcript_id lists every task."
        )
    if notes:
        result["note"] = " ".join(notes)
