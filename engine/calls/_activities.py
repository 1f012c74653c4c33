"""Activities (SPEC 6.3–6.4): deterministic code that runs a call, registered in code or loaded from a file.

Code runs only from what the user registers or names: a document can name an activity, never supply one.
There is no global registry: `@activity` only marks a function; an `Activities` object collects them.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

from attrs import frozen

from ..protocol._errors import file_place
from ._typed import Typing, typed
from ._user_code import import_user_file

F = TypeVar("F", bound=Callable[..., Any])
_MARK = "__contextdeck_activity__"


@dataclass(frozen=True)
class Activity:
    """A named function `fn(call, tool, context)`, sync or async; `timeout` in seconds overrides the run's.

    `source` is the file it was loaded from: such an activity runs in a worker process (`_pool`), which
    imports that file; one registered in code runs in the application's process.

    A typed function (annotated parameters and return type, `_typed`) is kept as a classic one that validates
    its calls; `typing` says what its annotations say, `schema` its tool schema (None when untyped).
    """

    name: str
    fn: Callable[..., Any]
    timeout: float | None = None
    source: str | None = None
    typing: Typing | None = None
    # `fn` is a coroutine function: awaited on the event loop (else it runs on a thread), asked once.
    asynchronous: bool = field(default=False, init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.timeout is not None:
            seconds(self.timeout, f"activity {self.name!r}: timeout")
        fn, found = typed(self.name, self.fn)
        object.__setattr__(self, "fn", fn)
        object.__setattr__(self, "typing", found)
        object.__setattr__(self, "asynchronous", inspect.iscoroutinefunction(fn))

    @property
    def schema(self) -> dict[str, Any] | None:
        return self.typing.schema if self.typing is not None else None


def seconds(value: object, what: str = "timeout") -> float:
    """A time limit: a positive, finite number of seconds. Any other would fail every call it limits, each with an
    error message written into the document, so it is a ValueError (TypeError) where it is given."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{what} must be a number of seconds, got {type(value).__name__} {value!r}")
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{what} must be a positive number of seconds, got {value!r}")
    return float(value)


@frozen
class ActivityLoadError(Exception):
    """An activities file that cannot be loaded: which file and why, and where in it when that is known
    (said as every command says a place: `acts.py:4:12`)."""

    path: str
    reason: str
    line: int | None = None
    column: int | None = None

    def __str__(self) -> str:
        return f"{file_place(self.path, self.line, self.column)}: {self.reason}"


def activity(name: str, *, timeout: float | None = None) -> Callable[[F], F]:
    """Mark a function as the activity `name`; the function itself is returned unchanged."""
    if not isinstance(name, str) or not name:
        raise ValueError("an activity needs a non-empty name")

    def mark(fn: F) -> F:
        setattr(fn, _MARK, Activity(name, fn, timeout))
        return fn

    return mark


class Activities:
    """A registry of activities by name; a later registration of a name replaces the earlier one."""

    def __init__(self, activities: Iterable[Activity] = ()) -> None:
        self._by_name: dict[str, Activity] = {}
        for item in activities:
            self._by_name[item.name] = item

    def add(self, fn: Callable[..., Any], name: str | None = None, *, timeout: float | None = None) -> Activity:
        """Register `fn` under `name` (default: the name its `@activity` mark gives)."""
        marked = getattr(fn, _MARK, None)
        if name is None:
            if not isinstance(marked, Activity):
                raise ValueError(f"{getattr(fn, '__name__', fn)!r} has no @activity mark; give a name")
            name = marked.name
        if timeout is None and isinstance(marked, Activity):
            timeout = marked.timeout
        if not callable(fn):
            raise TypeError(f"activity {name!r} is not callable")
        entry = Activity(name, fn, timeout)
        self._by_name[name] = entry
        return entry

    def update(self, other: Activities) -> None:
        for item in other:
            self._by_name[item.name] = item

    def get(self, name: str) -> Activity | None:
        return self._by_name.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __iter__(self) -> Iterator[Activity]:
        return iter(list(self._by_name.values()))

    def __len__(self) -> int:
        return len(self._by_name)

    @property
    def names(self) -> list[str]:
        return sorted(self._by_name)


def as_activities(value: object) -> Activities:
    """What a run's `activities=` may be: an `Activities`, a `{name: function}` dict (as a file's `ACTIVITIES`), or
    functions marked `@activity`. Anything else is refused here, saying what it got, rather than when a call runs."""
    if value is None or isinstance(value, Activities):
        return value if value is not None else Activities()
    found = Activities()
    if isinstance(value, Mapping):
        for name, fn in value.items():
            if not isinstance(name, str) or not name or not callable(fn):
                raise TypeError(f"activities[{name!r}]: expected a non-empty name and a function, got "
                                f"{type(fn).__name__}")
            found.add(fn, name)
        return found
    if isinstance(value, Iterable) and not isinstance(value, str | bytes):
        for fn in value:
            if not callable(fn):
                raise TypeError(f"activities: expected functions marked @activity, got {type(fn).__name__}")
            found.add(fn)
        return found
    raise TypeError("activities: expected an Activities, a {name: function} dict or @activity functions, got "
                    f"{type(value).__name__}")


def load_activities(path: str | Path) -> Activities:
    """Import the Python file the user named and collect its activities.

    It may define a module-level `ACTIVITIES = {"name": fn}` dict, decorate functions with `@activity`,
    or both (the dict wins for a name given twice). Raises `ActivityLoadError` for anything else.
    """
    file = Path(path)
    if not file.is_file():
        raise ActivityLoadError(str(file), "a folder, not a Python file" if file.is_dir() else "no such file")
    module = import_user_file(file, "_contextdeck_activities_", ActivityLoadError)
    found = activities_of(module, file)
    if not found:
        raise ActivityLoadError(str(file), "defines no activities (an ACTIVITIES dict or @activity functions)"
                                + unregistered(module))
    source = str(file.resolve())
    return Activities(replace(item, source=source) for item in found)


def unregistered(module: ModuleType) -> str:
    """A file that registers no activity but defines functions: which, and how to register them (a function is
    not an activity by being defined, so that a file's helpers are never offered as tools)."""
    names = [name for name, value in vars(module).items() if inspect.isfunction(value)
             and value.__module__ == module.__name__ and not name.startswith("_")]
    if not names:
        return ""
    return (f": {', '.join(names)} {'is' if len(names) == 1 else 'are'} defined but not registered: name them in "
            'ACTIVITIES = {"name": fn} or mark them @activity("name")')


def error_type(error: BaseException) -> str:
    """The error message's `type` for an activity's exception: its class name, or the engine's own type when
    the exception says it is one (a typed activity's `parameters` and `output`)."""
    own = getattr(error, "error_type", None)
    return own if isinstance(own, str) else type(error).__name__


def activities_of(module: ModuleType, file: Path) -> Activities:
    """The activities an imported file defines: its `@activity` functions, then its `ACTIVITIES` dict."""
    found = Activities(value for value in (getattr(v, _MARK, None) for v in vars(module).values())
                       if isinstance(value, Activity))
    table = getattr(module, "ACTIVITIES", None)
    if table is not None:
        if not isinstance(table, dict):
            raise ActivityLoadError(str(file), "ACTIVITIES must be a dict of name -> function")
        for name, fn in table.items():
            if not isinstance(name, str) or not callable(fn):
                raise ActivityLoadError(str(file), f"ACTIVITIES[{name!r}] must map a name to a function")
            try:
                found.add(fn, name)
            except TypeError as error:
                raise ActivityLoadError(str(file), str(error)) from None
    return found
