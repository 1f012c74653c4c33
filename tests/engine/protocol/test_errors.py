"""Errors are data: attrs frozen exceptions whose fields cannot change, and that Python can still raise,
chain, annotate and pickle — inside context managers too."""

from __future__ import annotations

import contextlib
import pickle
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest

from contextdeck.engine import ActivityLoadError, Conflict, DocumentError, ExpressionError, load_activities
from contextdeck.engine.calls._outputs import OutputError
from contextdeck.engine.calls._registry import ToolLoadError
from contextdeck.engine.document._json import JSONSyntaxError

ERRORS = [
    ExpressionError("†a |", 3, "a reference is expected"),
    DocumentError("doc.json", "not a list", line=1, column=2, message_index=None),
    ActivityLoadError("acts.py", "no such file"),
    ToolLoadError("tools/", "no such folder"),
    JSONSyntaxError("unexpected end", 3, 7),
    OutputError("not JSON: a set"),
    Conflict("push onto a string, not an array"),
]


@contextlib.contextmanager
def around() -> Iterator[None]:
    yield


def _raise_from_a_cause(error: Exception) -> None:
    try:
        raise KeyError("cause")
    except KeyError as cause:
        raise error from cause


@pytest.mark.parametrize("error", ERRORS, ids=lambda error: type(error).__name__)
def test_an_error_passes_through_context_managers_notes_chains_and_pickle(error: Exception) -> None:
    """Raised inside a generator context manager and an ExitStack, chained, annotated and pickled, an
    error stays itself; its fields cannot be assigned."""
    with pytest.raises(type(error)) as caught, around(), contextlib.ExitStack():
        _raise_from_a_cause(error)
    assert caught.value is error
    assert isinstance(error.__cause__, KeyError)
    error.add_note("while loading")
    copy = pickle.loads(pickle.dumps(error))
    assert (type(copy), attrs.astuple(copy), str(copy)) == (type(error), attrs.astuple(error), str(error))
    field = attrs.fields(type(error))[0].name
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        setattr(error, field, "changed")


def test_activity_load_error_inside_a_context_manager(tmp_path: Path) -> None:
    """Loading a missing activities file inside a `with` block raises ActivityLoadError naming the file,
    not FrozenInstanceError (a frozen dataclass refused the traceback contextlib sets)."""
    missing = tmp_path / "nowhere.py"
    with pytest.raises(ActivityLoadError) as caught, around():
        load_activities(missing)
    assert (caught.value.path, caught.value.reason) == (str(missing), "no such file")
    assert str(caught.value) == f"{missing}: no such file"
