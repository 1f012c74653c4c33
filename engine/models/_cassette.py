"""Record and replay of model exchanges, keyed by a digest of what was asked (VCR-style).

A cassette is a JSON Lines file beside the document (`DOC.models.jsonl`): one exchange per line, the
latest line of a digest wins. The digest covers the model, its parameters and the prompt (messages and
schema), never the endpoint's address or key, so the same question replays on any machine.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..calls._outputs import Clock, utc_now
from ..document import _json
from ..protocol._errors import DocumentError
from ..protocol._values import with_article

MODES = ("record", "replay", "live")


def cassette_path(document: str | os.PathLike[str]) -> Path:
    """Where a document's exchanges are kept: `refund.json` -> `refund.json.models.jsonl`."""
    path = Path(document)
    return path.with_name(path.name + ".models.jsonl")


@dataclass
class Cassette:
    """The recorded exchanges of one document (in memory when `path` is None)."""

    path: Path | None = None
    exchanges: dict[str, dict[str, Any]] = field(default_factory=dict)
    clock: Clock = utc_now

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> Cassette:
        """Read the file if it exists; a line that is not an exchange is a DocumentError naming it."""
        target = Path(path)
        cassette = cls(target)
        if not target.exists():
            return cassette
        # Lines end at a newline byte only: a reply holding U+2028 or U+0085 is written as it is (ensure_ascii off),
        # and a write a crash cut short may end inside a character's bytes.
        lines = target.read_bytes().split(b"\n")
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                exchange = _json.parse(line)
            except _json.JSONSyntaxError as error:
                if number == len(lines):
                    break  # the last line of a write a crash cut short: that one answer is asked again
                raise DocumentError(str(target), error.reason, number, error.column) from None
            problem = _exchange_problem(exchange)
            if problem is not None:
                raise DocumentError(str(target), problem, line=number)
            cassette.exchanges[exchange["digest"]] = exchange
        return cassette

    def get(self, key: str) -> dict[str, Any] | None:
        return self.exchanges.get(key)

    def put(self, exchange: dict[str, Any]) -> None:
        """Keep the exchange (dated) and append it to the file as one line: the latest line of a digest wins
        when it is read again. Appending keeps a recording of many questions (an experiment's) linear; the
        line is flushed, not synced to disk, since a lost answer is only asked again."""
        exchange = {**exchange, "date": exchange.get("date") or self.clock()}
        self.exchanges.pop(exchange["digest"], None)  # the newest goes last
        self.exchanges[exchange["digest"]] = exchange
        if self.path is not None:
            line = (_json.dumps(exchange, indent=False) + "\n").encode("utf-8")
            _drop_cut_line(self.path)
            with self.path.open("ab") as file:
                file.write(line)


def _exchange_problem(exchange: Any) -> str | None:
    """What keeps a cassette line from being replayed, said before any run relies on it."""
    if not isinstance(exchange, dict) or not isinstance(exchange.get("digest"), str):
        return "expected an exchange object with a 'digest'"
    response = exchange.get("response")
    if "response" not in exchange:
        return "the exchange has no 'response'"
    if not isinstance(response, dict):
        return f"the exchange's 'response' is {with_article(response)}, not an object"
    text = response.get("text")
    if text is not None and not isinstance(text, str):
        return f"the exchange's 'response.text' is {with_article(text)}, not a string"
    return None


def _drop_cut_line(path: Path) -> None:
    """Cut off a last line a crash left unfinished (no newline), so the next line starts on its own."""
    try:
        with path.open("rb+") as file:
            size = file.seek(0, os.SEEK_END)
            if size == 0:
                return
            file.seek(size - 1)
            if file.read(1) == b"\n":
                return
            start = max(0, size - 65_536)
            while True:  # back to the last newline
                file.seek(start)
                end = file.read(size - start).rfind(b"\n")
                if end >= 0 or start == 0:
                    file.truncate(start + end + 1)
                    return
                start = max(0, start - 65_536)
    except FileNotFoundError:
        return
