"""What a document offers to pick from while authoring: its tools, and the `†` references something writes."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from contextdeck.engine import Messages, ToolDefinition, instances_of, tool_definitions, written_paths

MAX_DEPTH = 4  # references offered down to †kind.a.b.c.d
MAX_REFERENCES = 5000  # a huge document offers its first references, not a list nobody scrolls


@dataclass(frozen=True)
class Catalog:
    """Tools by name, the tree of written paths (engine `written_paths`), the references it holds, and the
    instances the document's data messages name (`_instance`, in order of first appearance)."""

    tools: dict[str, ToolDefinition] = field(default_factory=dict)
    written: dict[str, Any] = field(default_factory=dict)
    references: tuple[str, ...] = ()
    instances: tuple[str, ...] = ()


def _walk(prefix: str, node: Any, depth: int) -> Iterator[str]:
    yield prefix
    if isinstance(node, dict) and depth < MAX_DEPTH:
        for key, child in node.items():
            yield from _walk(f"{prefix}.{key}", child, depth + 1)


def catalog_of(context: Messages) -> Catalog:
    """The catalog of `context` as it is now."""
    written = written_paths(context)
    references: list[str] = []
    for kind, node in written.items():
        for reference in _walk(f"†{kind}", node, 0):
            references.append(reference)
            if len(references) >= MAX_REFERENCES:
                break
    return Catalog(tool_definitions(context), written, tuple(references), tuple(instances_of(context)[0]))
