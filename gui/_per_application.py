"""`PerApplication`: an object the application has one of, made when first asked for.

It is a child of the application, so it goes when the application does; a later application (each test's) gets a
new one, since the one made before is then no longer valid.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

import shiboken6
from PySide6.QtCore import QCoreApplication, QObject

T = TypeVar("T", bound=QObject)


class PerApplication(Generic[T]):
    """Holds the application's one `T`, made by `make(application)` (None while there is no application)."""

    def __init__(self, make: Callable[[QCoreApplication | None], T]) -> None:
        self._make = make
        self._made: T | None = None

    def get(self) -> T:
        if self._made is None or not shiboken6.isValid(self._made):
            self._made = self._make(QCoreApplication.instance())
        return self._made
