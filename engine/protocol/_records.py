"""`record`: a frozen value that is cheap to make, for what a document makes one of per call or per expression
(a plan of 100,000 calls makes each of these once for every call, and `validate` reads them all).

A frozen dataclass sets each field through `object.__setattr__`, since its own `__setattr__` refuses: several
times the cost of a slots class whose `__init__` assigns them plainly (docs/performance.md has the figures). A
`record` is that slots class to the interpreter and a frozen dataclass to the type checker (PEP 681's
`frozen_default`): mypy refuses an assignment to any of its fields, as it does for `@dataclass(frozen=True)`,
and strict mypy runs on every landing. Like a frozen dataclass, it is equal and hashed by its fields.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar, dataclass_transform

_T = TypeVar("_T")


@dataclass_transform(frozen_default=True)
def record(cls: type[_T]) -> type[_T]:
    """The class as a frozen value (see the module's docstring): a slots dataclass, equal and hashed by its fields."""
    return dataclass(slots=True, unsafe_hash=True)(cls)
