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
from ..document._document import write_atomically
from ..protocol._errors import DocumentError

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
        for number, line in enumerate(target.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                exchange = _json.parse(line)
            except ValueError as error:
                raise DocumentError(str(target), f"not JSON: {error}", line=number) from None
            if not isinstance(exchange, dict) or not isinstance(exchange.get("digest"), str):
                raise DocumentError(str(target), "expected an exchange object with a 'digest'", line=number)
            cassette.exchanges[exchange["digest"]] = exchange
        return cassette

    def get(self, key: str) -> dict[str, Any] | None:
        return self.exchanges.get(key)

    def put(self, exchange: dict[str, Any]) -> None:
        """Keep the exchange (dated) and write the whole file again, atomically."""
        exchange = {**exchange, "date": exchange.get("date") or self.clock()}
        self.exchanges.pop(exchange["digest"], None)  # the newest goes last
        self.exchanges[exchange["digest"]] = exchange
        if self.path is not None:
            lines = (_json.dumps(item, indent=False) + "\n" for item in self.exchanges.values())
            write_atomically(self.path, "".join(lines).encode("utf-8"))
