"""Paranoid mode: every answer the incremental engine keeps is checked against the reference fold.

Set `CONTEXTDECK_PARANOID=1` (any value but empty or `0`) before the engine is imported, or set `ENABLED`:
then each watch's `current` (after every edit, and whenever it is read between edits), every `resolve`,
each cursor watch's `current` and each state the `CursorState` computes is compared with
the fold of SPEC 4 over the messages as they are now (`reference`: `_fold.fold` over every write of the
kind, the global layer and then the instance's, with nothing kept between calls). The first difference
raises `ParanoidError`, naming the expression, the instance, the cut and both answers. This is the
incremental engine's one invariant (ARCHITECTURE.md) made executable: O(messages) per answer, for the
property tests and for hunting a bug, never for everyday use.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

from ..protocol._expressions import Expression
from ..protocol._messages import MISSING, Write, classify
from ._fold import fold
from ._resolution import Diagnostic, Resolution

ENABLED = os.environ.get("CONTEXTDECK_PARANOID", "") not in ("", "0")

Message = dict[str, Any]


class ParanoidError(AssertionError):
    """A cached answer differs from the reference fold: a bug in the incremental engine."""


def _layers(messages: Sequence[Message], kind: str, instance: str | None, at: int | None) -> list[tuple[int, Write]]:
    """The writes of `kind` among the first `at` messages: the global layer's, then the instance layer's."""
    shared: list[tuple[int, Write]] = []
    own: list[tuple[int, Write]] = []
    for index, message in enumerate(messages[: len(messages) if at is None else max(0, at)]):
        info = classify(message)
        if info.kind != kind or info.write is None:
            continue
        if info.instance is None:
            shared.append((index, info.write))
        elif info.instance == instance:
            own.append((index, info.write))
    return shared + own


def reference(messages: Sequence[Message], expression: Expression, instance: str | None, at: int | None) -> Resolution:
    """SPEC 3 and 4 the slow way: each reference folded from the first write, the first alternative whose
    references are all found wins."""
    diagnostics: list[Diagnostic] = []
    missing: list[str] = []
    for gate in expression.alternatives:
        values = [fold(_layers(messages, ref.kind, instance, at), ref.path, str(ref))[1] for ref in gate]
        for value in values:
            diagnostics.extend(d for d in value.diagnostics if d not in diagnostics)
        absent = next((ref for ref, value in zip(gate, values, strict=True) if not value.found), None)
        if absent is None:
            sources = tuple(sorted({index for value in values for index in value.sources}))
            return Resolution(expression.source, True, values[-1].value, sources, tuple(diagnostics))
        missing.append(str(absent))
    return Resolution(expression.source, False, None, (), tuple(diagnostics), tuple(missing))


def reference_value(messages: Sequence[Message], kind: str, instance: str | None, at: int | None) -> Any:
    """The whole value of (kind, instance) over the first `at` messages (MISSING when nothing writes it)."""
    return fold(_layers(messages, kind, instance, at), (), f"†{kind}")[0]


def _text(value: Any) -> str:
    """A value as JSON text with its keys in their order (`==` ignores key order and says `True == 1`)."""
    return "MISSING" if value is MISSING else json.dumps(value, ensure_ascii=False, default=repr)


def check(what: str, got: Resolution, messages: Sequence[Message], expression: Expression, instance: str | None,
          at: int | None = None) -> None:
    """Raise `ParanoidError` when `got` is not the reference resolution of `expression` (`what` says whose)."""
    want = reference(messages, expression, instance, at)
    if got != want or (got.found and _text(got.value) != _text(want.value)):
        raise ParanoidError(
            f"{what} of {expression.source} (instance {instance}, at {at}) differs from the reference fold:\n"
            f"  kept:      found={got.found} value={_text(got.value)} sources={got.sources} "
            f"diagnostics={got.diagnostics} missing={got.missing}\n"
            f"  reference: found={want.found} value={_text(want.value)} sources={want.sources} "
            f"diagnostics={want.diagnostics} missing={want.missing}"
        )


def check_value(what: str, got: Any, messages: Sequence[Message], kind: str, instance: str | None,
                at: int | None = None) -> None:
    """Raise `ParanoidError` when `got` is not the reference whole value of (kind, instance)."""
    want = reference_value(messages, kind, instance, at)
    if _text(got) != _text(want):
        raise ParanoidError(
            f"{what} of †{kind} (instance {instance}, at {at}) differs from the reference fold:\n"
            f"  kept:      {_text(got)}\n  reference: {_text(want)}"
        )


def check_probes(what: str, before: Sequence[Any], after: Sequence[Any]) -> None:
    """Raise `ParanoidError` unless a fold's probes after an edit follow the paths its probes before it did, in the
    same order (`Watchers._results` pairs them by position)."""
    paths = [probe.path for probe in before], [probe.path for probe in after]
    if before and paths[0] != paths[1]:
        raise ParanoidError(f"{what}: the probes before the edit follow {paths[0]}, after it {paths[1]}")


def check_states(what: str, states: Sequence[Any], messages: Sequence[Message], at: int | None = None) -> None:
    """Raise `ParanoidError` unless `states` (each an `identity` and its whole `value`) are every (kind, instance)
    written among the first `at` messages, in the order of their first write, each with its reference value."""
    for state in states:
        kind, instance = state.identity
        check_value(what, state.value, messages, kind, instance, at)
    got = [state.identity for state in states]
    want: dict[tuple[str, str | None], None] = {}
    for message in messages[: len(messages) if at is None else max(0, at)]:
        info = classify(message)
        if info.identity is not None and info.write is not None:
            want.setdefault(info.identity, None)
    if got != list(want):
        raise ParanoidError(f"{what}: the identities at {at} are {got}, the reference {list(want)}")
