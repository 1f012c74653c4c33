"""A schema's pattern searches, with a deadline (`_schemas` says why), slow ones kept, and searched apart for a
thread that must not wait.

- **A check's budget.** One check of one value may spend `PATTERN_BUDGET_S` of CPU time in its searches (`budget`);
  a search past what is left counts as no match and is recorded, to be said at its violation (`with_unanswered`).
- **Slow searches are kept.** A search that ran out of time, or took `SLOW_SEARCH_S` or more, is kept with its
  outcome (`_known`): asked again, with the same budget or less, it is answered at once, spending what it spent.
  A document's edits check the same values again and again, and calls that give a tool the same literal value
  search it once.
- **Searched apart.** Inside `searching_apart` (a window's own checks), a search neither kept nor quick is not
  waited for: it is tried for `SLOW_SEARCH_S`, then left to `search_apart` (on a worker thread), and the check's
  answer is provisional, its violation saying the pattern is still being searched. Once `search_apart` has kept
  its outcome, the same check answers it at once, as a check outside would have.
"""

from __future__ import annotations

import functools
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Collection, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, Final, Literal

import jsonschema._keywords
import jsonschema._legacy_keywords
import jsonschema._utils
import regex
from attrs import frozen
from jsonschema.exceptions import ValidationError

PATTERN_BUDGET_S: Final = 0.5  # all the pattern searches of one check of one value, together
SLOW_SEARCH_S: Final = 0.01  # a search this long is kept; searching apart, one not known is tried this long
_KEPT: Final = 4096  # slow searches kept, the least recently asked dropped first

_TIMED_OUT: Final = "the pattern took too long"
_APART: Final = "the pattern is still being searched"

Search = tuple[str, int, str]  # a pattern, its flags and the string searched
How = Literal["tried", "untried", "apart"]  # a search without an answer: out of time, never tried, searched apart


@frozen
class _Known:
    """A kept search: its match (None: none), the CPU time it spent, and whether that used all of its `limit`."""

    match: Any
    spent: float
    limit: float
    timed_out: bool


_known: OrderedDict[Search, _Known] = OrderedDict()
_known_lock = threading.Lock()  # `search_apart` keeps from a worker thread


def _recall(search: Search) -> _Known | None:
    with _known_lock:
        known = _known.get(search)
        if known is not None:
            _known.move_to_end(search)
        return known


def _keep(search: Search, known: _Known) -> None:
    with _known_lock:
        _known[search] = known
        _known.move_to_end(search)
        while len(_known) > _KEPT:
            _known.popitem(last=False)


class _Clock(threading.local):
    left: float | None = None  # of the budget of the check under way (None: outside any check)
    unanswered: list[tuple[str, str, How]] | None = None  # (pattern, text, how) of the searches without an answer
    apart: set[Search] | None = None  # searching apart (`searching_apart`): the searches left to `search_apart`
    searching: Collection[Search] = ()  # searches `search_apart` has under way: left to it without a try


_clock = _Clock()


class budget:
    """The pattern budget of one check; yields the (pattern, text, how) searches that found no answer."""

    def __enter__(self) -> list[tuple[str, str, How]]:
        self.outer = (_clock.left, _clock.unanswered)
        _clock.left = PATTERN_BUDGET_S
        _clock.unanswered = []
        return _clock.unanswered

    def __exit__(self, *_: object) -> None:
        _clock.left, _clock.unanswered = self.outer


@contextmanager
def searching_apart(searching: Collection[Search] = ()) -> Iterator[set[Search]]:
    """Inside (on this thread), a search neither kept nor found within `SLOW_SEARCH_S` is not waited for: it is added
    to the set yielded, for `search_apart`, and the check it was part of is provisional (its violation says the
    pattern is still being searched). A search in `searching` (under way apart already) is not tried at all, only
    added."""
    outer = (_clock.apart, _clock.searching)
    _clock.apart, _clock.searching = set(), searching
    try:
        yield _clock.apart
    finally:
        _clock.apart, _clock.searching = outer


def search_apart(searches: Iterable[Search]) -> None:
    """Search each with the whole budget of a check and keep its outcome, so that a check answers it at once: for
    the searches `searching_apart` left, on a thread that may wait for them."""
    for search in searches:
        _run(search, PATTERN_BUDGET_S, keep=True)


@functools.lru_cache(maxsize=4096)
def _compiled(pattern: str, flags: int) -> Any:
    return regex.compile(pattern, flags)


def _run(search: Search, limit: float, keep: bool = False) -> tuple[Any, float, bool]:
    """The search, run for at most `limit`: its match (None: none), the CPU time it spent, and whether it ran out of
    time; kept when slow (or `keep`). Only the search itself is timed, in CPU time (`regex` searches in this
    thread), so a loaded machine does not make a quick pattern look slow."""
    pattern, flags, string = search
    compiled = _compiled(pattern, flags)
    started = time.thread_time()
    try:
        match, timed_out = compiled.search(string, timeout=limit, concurrent=True), False
    except TimeoutError:
        match, timed_out = None, True
    spent = time.thread_time() - started
    if keep or timed_out or spent >= SLOW_SEARCH_S:
        _keep(search, _Known(match, spent, limit, timed_out))
    return match, spent, timed_out


def _search(pattern: str, string: str, flags: int = 0) -> Any:
    """`re.search` as jsonschema calls it, through `regex` with what is left of the budget (a kept search answered at
    once); a search that runs out of time counts as no match and is recorded."""
    search = (pattern, flags, string)
    left = PATTERN_BUDGET_S if _clock.left is None else _clock.left
    if left <= 0:
        return _unanswered(pattern, string, "untried")
    known = _recall(search)
    if known is not None and known.timed_out and known.limit < left:
        known = None  # it ran out of less time than this check has left: its answer is not known
    apart = _clock.apart
    if known is None and apart is not None and (search in apart or search in _clock.searching):
        apart.add(search)
        return _unanswered(pattern, string, "apart")
    if known is None:
        limit = left if apart is None else min(left, SLOW_SEARCH_S)
        match, spent, timed_out = _run(search, limit)
        if timed_out and apart is not None and limit < left:  # only its try ran out: searched apart
            apart.add(search)
            _spend(spent)
            return _unanswered(pattern, string, "apart")
    else:
        match, spent, timed_out = known.match, known.spent, known.timed_out
    if timed_out or spent > left:
        _spend(min(spent, left))
        return _unanswered(pattern, string, "tried")
    _spend(spent)
    return match


def _spend(spent: float) -> None:
    if _clock.left is not None:
        _clock.left -= spent


def _unanswered(pattern: str, string: str, how: How) -> None:
    if _clock.unanswered is not None:
        _clock.unanswered.append((pattern, string, how))
    return None


class _Patterns:
    """Stands in for the `re` module inside jsonschema's keywords: `search` has a deadline."""

    search = staticmethod(_search)

    def __getattr__(self, name: str) -> Any:
        return getattr(re, name)


# jsonschema offers no way to choose its regular expression engine; these are the modules whose `re.search`
# applies a schema's patterns (tests/engine/protocol/test_schemas.py fails if a new version searches elsewhere).
for _module in (jsonschema._keywords, jsonschema._utils, jsonschema._legacy_keywords):
    setattr(_module, "re", _Patterns())  # noqa: B010 (the attribute is a module global, named on purpose)


def with_unanswered(found: list[ValidationError], unanswered: list[tuple[str, str, How]]) -> list[ValidationError]:
    """A `pattern` violation whose search found no answer (out of time, never tried, searched apart) says so; such a
    property-name search (which has no violation of its own) becomes one at the value's root."""
    if not unanswered:
        return found
    pending: dict[tuple[str, str], list[How]] = {}
    for pattern, text, how in unanswered:
        pending.setdefault((pattern, text), []).append(how)
    for error in found:
        if error.validator != "pattern":
            continue
        searched, instance = error.validator_value, error.instance
        if isinstance(searched, str) and isinstance(instance, str) and pending.get((searched, instance)):
            error.message = _unanswered_message(searched, instance, pending[searched, instance].pop(0))
    for (name_pattern, name), left in pending.items():
        if left:
            found.append(ValidationError(f"{_unanswered_message(name_pattern, name, left[0])} (a property name)",
                                         validator="pattern", validator_value=name_pattern, instance=name))
    return found


def _unanswered_message(pattern: str, text: str, how: How) -> str:
    shown = text if len(text) <= 40 else text[:37] + "..."
    if how == "apart":
        return f"{_APART} against {shown!r}: {pattern!r} (its answer is shown once found)"
    if how == "untried":
        return (f"{_TIMED_OUT}: {pattern!r} was not tried against {shown!r}, the patterns of this value had "
                f"spent their {PATTERN_BUDGET_S:g} s")
    return (f"{_TIMED_OUT} against {shown!r}: {pattern!r} did not finish within {PATTERN_BUDGET_S:g} s "
            "(nested repetition such as (a+)+ can backtrack without end)")
