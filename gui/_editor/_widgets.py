"""The widget table: a field descriptor and a value pick a key, the key picks a widget factory.

A value that does not fit its field (a string where the schema says number, null where null is not allowed)
gets the raw JSON widget, so the form never changes data to make it fit; validation reports the mismatch.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Final

from ._base import FieldEditor
from ._containers import ArrayEditor, ChoiceEditor, NullableEditor, ObjectEditor
from ._field import MISSING, Field, type_of
from ._leaves import (
    BooleanEditor,
    ConstEditor,
    DateTimeEditor,
    EnumEditor,
    NumberEditor,
    RawEditor,
    StringEditor,
    TextEditor,
    parse_date_time,
)

Factory = Callable[[Field], FieldEditor]


def _same(a: Any, b: Any) -> bool:
    """JSON equality: `true` is not `1`."""
    return bool(a == b and type_of(a) == type_of(b))


def _fits(field: Field, value: Any) -> bool:
    kind = type_of(value)
    return kind in field.type or (kind == "integer" and "number" in field.type)


def widget_key(field: Field, value: Any) -> str:
    """The key of the widget that edits `value` as described by `field`."""
    if field.const is not MISSING:
        return "const" if _same(field.const, value) else "raw"
    if field.nullable:
        return "nullable"
    if field.branches:
        return "choice"
    if field.enum is not None:
        return "enum"
    if not field.type or not _fits(field, value):
        return "raw"
    kind = type_of(value)
    if kind == "string":
        if field.format == "date-time" and parse_date_time(value) is not None:
            return "date-time"
        return "text" if "\n" in value else "string"
    return "number" if kind == "integer" and "number" in field.type else kind


def default_value(field: Field) -> Any:
    """The value a field starts with when the user adds it: its default, const, first choice, or an empty one."""
    if field.default is not MISSING:
        return copy.deepcopy(field.default)
    if field.const is not MISSING:
        return copy.deepcopy(field.const)
    if field.enum:
        return copy.deepcopy(field.enum[0])
    if field.branches:
        return default_value(field.branches[0])
    kind = field.type[0] if field.type else None
    if kind == "string" and field.format == "date-time":
        return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    if kind == "object":
        return {name: default_value(sub) for name, sub in field.properties if name in field.required}
    if kind is None and field.nullable:
        return None
    return copy.deepcopy(_EMPTY.get(kind)) if kind else None


_EMPTY: Final[dict[str, Any]] = {"string": "", "number": 0, "integer": 0, "boolean": False, "array": [], "object": {}}


def _score(branch: Field, value: Any) -> int:
    """How well `value` fits a branch, structurally (never by running its patterns: that happens off-thread)."""
    if branch.const is not MISSING:
        return 4 if _same(branch.const, value) else -1
    if branch.enum is not None:
        return 3 if any(_same(e, value) for e in branch.enum) else -1
    if value is None:
        return 2 if branch.nullable else -1
    if branch.type and not _fits(branch, value):
        return -1
    score = 1 if branch.type else 0
    if isinstance(value, dict) and branch.properties:
        if not branch.required <= value.keys():
            return 0
        for name, sub in branch.properties:  # discriminators: a property whose const or enum must match
            if name in value and (sub.const is not MISSING or sub.enum is not None):
                if _score(sub, value[name]) < 0:
                    return 0
                score += 2
        score += sum(1 for name, _ in branch.properties if name in value)
    if branch.branches:
        score = max(score, max(_score(b, value) for b in branch.branches))
    return score


def pick_branch(field: Field, value: Any) -> int:
    """The index of the branch of a choice that `value` fits best (the first on a tie)."""
    scores = [_score(branch, value) for branch in field.branches]
    return scores.index(max(scores))


def make_editor(field: Field, value: Any) -> FieldEditor:
    """The editor for `value` under `field`, filled with `value` (the one entry point of the table)."""
    key = widget_key(field, value)
    editor = WIDGETS[key](field)
    editor.key = key
    editor.set_value(value)
    return editor


WIDGETS: Final[dict[str, Factory]] = {
    "const": ConstEditor,
    "enum": EnumEditor,
    "string": StringEditor,
    "text": TextEditor,
    "date-time": DateTimeEditor,
    "number": NumberEditor,
    "integer": NumberEditor,
    "boolean": BooleanEditor,
    "raw": RawEditor,
    "object": lambda field: ObjectEditor(field, make_editor, default_value),
    "array": lambda field: ArrayEditor(field, make_editor, default_value),
    "choice": lambda field: ChoiceEditor(field, make_editor, default_value, pick_branch),
    "nullable": lambda field: NullableEditor(field, make_editor, default_value),
}
