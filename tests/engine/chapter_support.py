"""The chapter examples of `tests/engine/chapters/`, loaded as documents and run as the chapters say."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from exec_support import CLOCK

from contextdeck.engine import Activities, Document, Execution, load_document

CHAPTERS = Path(__file__).resolve().parent / "chapters"


def chapter(name: str) -> Document:
    """The example document `name` (a file of tests/engine/chapters)."""
    return load_document(CHAPTERS / name)


def run_chapter(name: str, activities: Activities | None = None, **options: Any) -> tuple[Document, Execution]:
    """Load the example, run one tick of its calls and wait for fire-and-forget ones; (document, execution)."""
    document = chapter(name)
    execution = Execution(document, activities=activities, clock=CLOCK, **options)

    async def tick() -> None:
        await execution.run()
        await execution.drain()

    asyncio.run(tick())
    return document, execution


def errors_of(document: Document) -> list[dict[str, Any]]:
    """The `error` objects of the document's error messages, in order."""
    return [m["data"]["error"] for m in document.context.messages if m.get("type") == "error"]
