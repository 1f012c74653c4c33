"""The schema pattern searches a test makes, recorded: `Searches.install` stands in for
`_pattern_searches._compiled` (every pattern compiled by `regex` as before, each search of it told to `record`
first) and forgets the searches kept."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import pytest
import regex

from contextdeck.engine.protocol import _pattern_searches


class Searches:
    """Each search made once installed: here the string searched and the time it was given (`record`)."""

    def __init__(self) -> None:
        self.made: list[Any] = []

    def record(self, string: str, timeout: float) -> None:
        self.made.append((string, timeout))

    def install(self, monkeypatch: pytest.MonkeyPatch) -> Searches:
        monkeypatch.setattr(_pattern_searches, "_known", OrderedDict())
        record = self.record

        def compiled(pattern: str, flags: int) -> Any:
            found = regex.compile(pattern, flags)

            class Recorded:
                def search(self, string: str, timeout: float, concurrent: bool) -> Any:
                    record(string, timeout)
                    return found.search(string, timeout=timeout, concurrent=concurrent)

            return Recorded()

        monkeypatch.setattr(_pattern_searches, "_compiled", compiled)
        return self
