"""The run record: which calls of a plan have run, and how, read from the context itself (docs/format.md §9).

Every output, error and run-record message a call leaves carries its audit metadata (`_call`, and `_run`
with the call's position in the plan). Nothing else remembers what ran: reopening a document, running it
twice, undoing a step or redoing it all read this record, so it cannot drift from the document.

A record belongs to the last plan message before it (all records count when the context has none), and
to the call of that plan that it names: the call as written (`_run.planned` when an approval edited it,
else `_call`, or `data.call` in an error message), the position `_run.call` telling identical calls apart.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache, partial
from typing import Any

from ..document._context import Context
from ..document._json import MESSAGE_OUTER, unwritable
from ..document._view import Messages
from ..protocol._messages import Form, body_of, kind_of, payload_of
from ..protocol._records import record
from ._plan import ByIndex
from ._tools import form_indices

RUN_KEY = "_run"  # the audit object: call position, start, duration, inputs, traceback (see docs/format.md)
INPUTS_LIMIT = 65_536  # resolved inputs larger than this (as JSON) are kept as their digest only


def canonical(value: Any) -> str:
    """One text per JSON value (keys sorted), so equal calls and inputs compare equal."""
    return _CANONICAL.encode(value)


# What `json.dumps` with these options makes anew at every call.
_CANONICAL = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def digest(value: Any) -> str:
    return _text_digest(canonical(value))


def inputs_audit(inputs: dict[str, Any]) -> dict[str, Any]:
    """The `_run` keys for a call's resolved inputs: the digest always, the values when they are small."""
    text = canonical(inputs)
    audit: dict[str, Any] = {"digest": _text_digest(text)}
    if len(text) <= INPUTS_LIMIT:
        audit["inputs"] = inputs if inputs else NO_INPUTS
    return audit


# What every call that reads nothing records as its inputs: one empty dict, not one a call (64 bytes each in a
# run of 100,000 calls without parameters). Like the plan's call its `_call` holds, it is shared between messages:
# nothing changes a message's values in place (an edit replaces the message).
NO_INPUTS: dict[str, Any] = {}


def _text_digest(text: str) -> str:
    return _short_digest(text) if len(text) <= _SHORT_TEXT else _sha256(text)


# Calls with the same small inputs (a tool without parameters, a call run again) share one digest string,
# hashed once; a long text is hashed each time rather than kept.
_SHORT_TEXT = 1024


@lru_cache(maxsize=1024)
def _short_digest(text: str) -> str:
    return _sha256(text)


def _sha256(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def result_audit(result: Any) -> dict[str, Any]:
    """The `_run` key for an activity's result, kept so a later run can give it again (an experiment's
    `--replay-activities`): the value when it is small, nothing otherwise."""
    if result is None or type(result) is bool or (type(result) is int and -_SMALL_INT < result < _SMALL_INT):
        return {"result": result}
    try:
        text = canonical(result)
    except (TypeError, ValueError, RecursionError):  # not JSON: the output check says so; nothing to replay
        return {}
    if len(text) > INPUTS_LIMIT:
        return {}
    # `canonical` writes a key 1 as "1" and nests without limit: what a message could not hold (its error
    # message carries this audit) is left out too.
    return {"result": result} if unwritable(result, _RESULT_OUTER) is None else {}


_RESULT_OUTER = MESSAGE_OUTER + 2  # a message's `_run.result`


_SMALL_INT = 10**18  # an integer this small is short as JSON


@record
class Entry:
    """One message of the record: where it is, the call it names, and what it says."""

    position: int
    message_id: int
    call: Any  # the call it names, as written in the plan
    hint: int | None  # `_run.call`: the call's position in the plan when it ran
    path: str | None  # `_outputPath` (legacy assignment of identical calls)
    error: dict[str, Any] | None  # the error of an error message
    audit: dict[str, Any]  # the `_run` object ({} for a message written before it existed)
    ran: bool  # a run record: the call ran and had nowhere to write
    output: bool  # an output message (a failure written to an error branch is one too)



@record
class CallRecord:
    """What the context says about one call: its record messages, the last run's outcome."""

    entries: tuple[Entry, ...]
    edited: bool = False  # the call as written has changed since it ran (matched by position and tool)

    @property
    def last(self) -> tuple[Entry, ...]:
        """The messages of the latest run (an `a && b` output writes two)."""
        if len(self.entries) == 1:
            return self.entries
        tail = [self.entries[-1]]
        for entry in reversed(self.entries[:-1]):  # one run's messages are appended one after another
            if entry.position != tail[-1].position - 1:
                break
            tail.append(entry)
        return tuple(reversed(tail))

    @property
    def error(self) -> dict[str, Any] | None:
        return next((entry.error for entry in reversed(self.last) if entry.error is not None), None)

    @property
    def audit(self) -> dict[str, Any]:
        """The `_run` audit of the latest run (merged over its messages)."""
        merged: dict[str, Any] = {}
        for entry in self.last:
            merged.update(entry.audit)
        return merged

    @property
    def outputs(self) -> tuple[int, ...]:
        return tuple(entry.message_id for entry in self.last if entry.output)


@dataclass(frozen=True)
class Record:
    """The run record of a plan: `calls[i]` for each call with at least one record message.

    A long run's record holds one for every call, so it is kept lean: in a list by call index (None: no record;
    a dict of 100,000 calls costs 52 bytes a call, a list 8), and a call recorded by one message, not edited
    since (every call of a run), as that message's `Entry` alone, read as its `CallRecord` made when asked for.
    """

    since: int  # records before this position belong to an earlier plan
    kept: list[CallRecord | Entry | None] = field(default_factory=list)  # by call index

    @property
    def calls(self) -> Mapping[int, CallRecord]:
        return _CallRecords(self.kept)

    def has(self, index: int) -> bool:
        """Whether call `index` has a record message (`of` is not None)."""
        return 0 <= index < len(self.kept) and self.kept[index] is not None

    def of(self, index: int) -> CallRecord | None:
        found = self.kept[index] if 0 <= index < len(self.kept) else None
        return CallRecord((found,)) if isinstance(found, Entry) else found


class _CallRecords(ByIndex[CallRecord]):
    """A record's calls with a record message, each as a `CallRecord` however it is kept (`Record.kept`)."""

    __slots__ = ()

    def made(self, kept: CallRecord | Entry) -> CallRecord:
        return CallRecord((kept,)) if isinstance(kept, Entry) else kept


def _kept(entries: tuple[Entry, ...], edited: bool = False) -> CallRecord | Entry:
    """How a record keeps a call's entries (`Record.kept`)."""
    return entries[0] if len(entries) == 1 and not edited else CallRecord(entries, edited)


def _entry(context: Messages, position: int) -> Entry | None:
    info = context.info(position)
    if info.form not in (Form.DATA, Form.RECORD):
        return None
    message = body_of(context[position])
    audit = message.get(RUN_KEY)
    audit = audit if isinstance(audit, dict) else {}
    hint = audit.get("call") if isinstance(audit.get("call"), int) and not isinstance(audit.get("call"), bool) else None
    error = None
    output = False
    if info.form is Form.RECORD:
        written = message.get("_call")
    elif kind_of(message) == "error" and "_call" not in message:
        payload = payload_of(message)
        if not (isinstance(payload, dict) and isinstance(payload.get("error"), dict) and "call" in payload):
            return None
        written, error = payload["call"], payload["error"]
    else:
        written = message.get("_call")
        output = True
        if isinstance(audit.get("error"), dict):  # a failure written to the call's error branch (012)
            error = audit["error"]
    # A plan entry that is no call (`1`, `"x"`) is recorded by its error alone, as written: it is not run again.
    if not isinstance(written, dict) and "planned" not in audit and error is None:
        return None
    planned = audit.get("planned", written)
    path = message.get("_outputPath")
    return Entry(position, message_id(context, position), planned, hint, path if isinstance(path, str) else None,
                 error, audit, info.form is Form.RECORD, output)


def message_id(context: Messages, position: int) -> int:
    """The stable id of a message of a live context; a read-only view has none, so its position stands in."""
    id_at = getattr(context, "id_at", None)
    return id_at(position) if id_at is not None else position


class CallTexts:
    """The canonical texts of a plan's calls, which the record matches its messages by: computed once per plan,
    when first needed.

    A message written by this engine holds the plan's own call object (its `_call`, or `_run.planned`) and
    names the call's position (`_run.call`): `names` matches it by identity, without any text, so a run that
    starts with no record serialises nothing. Only a record read whole (a document reopened, an edit other
    than an append) needs the texts; `text_of` then finds a plan call's text by identity, and serialises
    only a message from elsewhere.
    """

    def __init__(self, calls: list[Any]) -> None:
        self.calls = calls
        self._exact: dict[str, list[int]] | None = None

    def names(self, call: Any, at: int) -> bool:
        """`call` is the plan's own call object at position `at` (a message this engine wrote for it)."""
        return 0 <= at < len(self.calls) and self.calls[at] is call

    @property
    def exact(self) -> dict[str, list[int]]:
        """Text -> the positions of the calls with that text."""
        if self._exact is None:
            self._serialise()
        assert self._exact is not None
        return self._exact

    def loosely(self, text: str) -> list[int]:
        """The positions of the calls whose text without their latent result is `text`, in plan order (a call
        without one is loosely what it is exactly)."""
        found, exact = self._loose.get(text, []), self.exact.get(text, [])
        return sorted(found + exact) if found and exact else found or exact

    def text_of(self, call: Any) -> str:
        if self._exact is None:
            self._serialise()
        known = self._by_identity.get(id(call))
        return known[1] if known is not None and known[0] is call else canonical(call)

    def _serialise(self) -> None:
        exact: dict[str, list[int]] = {}
        loose: dict[str, list[int]] = {}  # the same for the calls with a latent result, by their text without it
        by_identity: dict[int, tuple[Any, str]] = {}  # id(call) -> (call, text): kept, so its id stays its own
        for index, call in enumerate(self.calls):
            try:
                text = canonical(call)
                if isinstance(call, dict) and "_output" in call:
                    loose.setdefault(canonical(_without_result(call)), []).append(index)
            except (TypeError, ValueError):
                continue
            same = exact.get(text)
            if same is None:
                exact[text] = [index]
            else:
                same.append(index)
            by_identity[id(call)] = (call, text)
        self._exact, self._loose, self._by_identity = exact, loose, by_identity


def call_texts(calls: list[Any]) -> CallTexts:
    return CallTexts(calls)


def read_record(
    context: Messages, calls: list[Any] | CallTexts, plan_index: int | None, ignore: frozenset[int] = frozenset()
) -> Record:
    """The record of `calls` in `context`: the record messages after the plan message, matched to their calls.

    `calls` may be given as their `CallTexts`, so that a plan read again and again is serialised once.
    `ignore` holds message ids left out (the earlier runs of a call asked to run again).
    """
    texts = calls if isinstance(calls, CallTexts) else call_texts(calls)
    return RecordReader(texts, plan_index).read(context, ignore)


class RecordReader:
    """The record of one plan, read again and again from a live context as it grows (a run's readiness passes).

    What was read is kept: while the context has had nothing but appends since (`Context.revision`), only the
    messages appended since are read, and each that names an unambiguous call (an exact `_run.call` of a
    call with no edited or legacy record) is added to its call's record; anything else reads every record
    message again. The `Record` returned is the reader's own, renewed in place: current until the next read.
    """

    def __init__(self, texts: CallTexts, plan_index: int | None) -> None:
        self.texts, self.plan_index = texts, plan_index
        self._context: Messages | None = None
        self._revision: int | None = None
        self._read = 0  # positions read so far
        self._entries: list[Entry] = []
        self._ignore: frozenset[int] = frozenset()
        self._record: Record | None = None
        self._irregular: set[int] = set()  # calls with records matched otherwise than by their exact position
        # The calls whose record the last read changed, in the order their messages come (a call may be there more
        # than once); None: maybe all. A list: a run's last read names every call, and a set of them all costs more.
        self.changed: list[int] | None = None

    def read(self, context: Messages, ignore: frozenset[int] = frozenset()) -> Record:
        since = _since(context, self.plan_index)
        revision = context.revision if isinstance(context, Context) else None
        if (revision is None or context is not self._context or revision != self._revision
                or self._record is None or since != self._record.since or len(context) < self._read):
            self._context, self._revision, self._read, self._entries, self._record = context, revision, since, [], None
        appended = [entry for entry in map(partial(_entry, context), range(self._read, len(context)))
                    if entry is not None]
        self._read = len(context)
        self._entries.extend(appended)
        if self._record is not None and ignore == self._ignore and self._added(appended):
            return self._record
        self._ignore = ignore
        self._record = self._assigned(since)
        self.changed = None
        return self._record

    def _added(self, appended: list[Entry]) -> bool:
        """Add appended entries that each name exactly one call to the record; False when one does not."""
        assert self._record is not None
        calls, texts, changed = self._record.kept, self.texts, []
        for entry in appended:
            if entry.message_id in self._ignore:
                continue
            at = entry.hint
            if at is None or at in self._irregular:
                return False
            if not texts.names(entry.call, at):  # the plan's own call at `at` needs no text
                try:
                    text = texts.text_of(entry.call)
                except (TypeError, ValueError):
                    continue
                if at not in texts.exact.get(text, ()):
                    return False
            found = calls[at]
            calls[at] = entry if found is None else CallRecord(
                (found, entry) if isinstance(found, Entry) else (*found.entries, entry))
            changed.append(at)
        self.changed = changed
        return True

    def _assigned(self, since: int) -> Record:
        texts = self.texts
        calls = texts.calls
        by_text = texts.exact if self._entries else {}  # a run that starts with no record serialises nothing
        assigned: dict[int, list[Entry]] = {}
        unmatched: list[Entry] = []
        hinted: dict[str, list[Entry]] = {}
        legacy: dict[str, list[Entry]] = {}
        loose_legacy: dict[str, list[Entry]] = {}
        for entry in self._entries:
            if entry.message_id in self._ignore:
                continue
            try:
                text = texts.text_of(entry.call)
            except (TypeError, ValueError):
                continue
            if text not in by_text:
                loose = canonical(_without_result(entry.call))
                if entry.hint is None and texts.loosely(loose):  # written elsewhere, with the latent result in `_call`
                    loose_legacy.setdefault(loose, []).append(entry)
                else:
                    unmatched.append(entry)
            elif entry.hint is not None:
                hinted.setdefault(text, []).append(entry)
            else:
                legacy.setdefault(text, []).append(entry)
        irregular: set[int] = set()  # calls a new record message could be matched to otherwise than by position
        for text, group in hinted.items():
            if not _assign_hinted(by_text[text], group, assigned):
                irregular.update(by_text[text])
        for text, group in legacy.items():
            _assign_legacy(by_text[text], group, assigned)
            irregular.update(by_text[text])
        for text, group in loose_legacy.items():
            candidates = texts.loosely(text)
            _assign_legacy(candidates, group, assigned)
            irregular.update(candidates)
        edited: set[int] = set()
        for entry in unmatched:  # the call was edited after it ran: the same position, the same tool
            at = entry.hint
            if at is None or not 0 <= at < len(calls) or _tool(entry.call) is None:
                continue
            if _tool(calls[at]) != _tool(entry.call) or (at in assigned and at not in edited):
                continue
            assigned.setdefault(at, []).append(entry)
            edited.add(at)
        self._irregular = irregular | edited
        kept: list[CallRecord | Entry | None] = [None] * len(calls)
        for index, found in assigned.items():
            kept[index] = _kept(tuple(sorted(found, key=_position)), index in edited)
        return Record(since, kept)


def _position(entry: Entry) -> int:
    return entry.position


def _since(context: Messages, plan_index: int | None) -> int:
    if plan_index is not None:
        return plan_index + 1
    plans = form_indices(context, Form.PLAN, len(context))
    return plans[-1] + 1 if plans else 0


def _without_result(call: Any) -> Any:
    """A call without its latent result: documents written by other tools put the `_output` a latent call
    received into its `_call`, which the plan's call does not have."""
    return {key: value for key, value in call.items() if key != "_output"} if isinstance(call, dict) else call


def _tool(call: Any) -> Any:
    return call.get("_tool") if isinstance(call, dict) else None


def _assign_hinted(candidates: list[int], group: list[Entry], assigned: dict[int, list[Entry]]) -> bool:
    """Identical calls told apart by position: exact when the plan did not move (True), else by rank."""
    hints = sorted({entry.hint for entry in group if entry.hint is not None})
    exact = all(hint in candidates for hint in hints)
    if exact:
        target = {hint: hint for hint in hints}
    else:  # calls were inserted or removed around them: the k-th recorded one is the k-th identical call
        target = {hint: candidates[min(rank, len(candidates) - 1)] for rank, hint in enumerate(hints)}
    for entry in group:
        assert entry.hint is not None
        assigned.setdefault(target[entry.hint], []).append(entry)
    return exact


def _assign_legacy(candidates: list[int], group: list[Entry], assigned: dict[int, list[Entry]]) -> None:
    """Messages written before `_run`: the first identical call that has no record at that path yet."""
    for entry in group:
        chosen = candidates[-1]
        for index in candidates:
            if all(other.path != entry.path for other in assigned.get(index, [])):
                chosen = index
                break
        assigned.setdefault(chosen, []).append(entry)
