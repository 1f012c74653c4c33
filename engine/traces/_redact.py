"""Redaction: replace secrets in an imported document before it is written (docs/format.md §10).

A rule is a named pattern (`emails`, `api-keys`), a regular expression between slashes (`/\\d{16}/`), or a key
name, with `*` and `?` as wildcards (`password`, `*token*`): the whole value of every key of that name is
replaced. Matching text is replaced by `[redacted]`. The names the protocol reads (`type`, `role`, `kind`,
`_tool`, `_outputPath`) are never touched, so the document means what it meant.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from typing import Any

from ..document._context import Context
from ..document._document import Document

REDACTED = "[redacted]"
PATTERNS = {
    "emails": r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}",
    "api-keys": r"\b(?:sk|pk|rk)-[A-Za-z0-9_-]{16,}|\bBearer\s+[A-Za-z0-9._~+/-]{16,}=*|\bAKIA[0-9A-Z]{16}\b"
                r"|\bgh[pousr]_[A-Za-z0-9]{30,}|\bxox[abpr]-[A-Za-z0-9-]{10,}|\bAIza[0-9A-Za-z_-]{35}",
}
PROTECTED = frozenset(("type", "role", "kind", "_tool", "_outputPath"))


@dataclass(frozen=True)
class Redaction:
    """Rules to apply: text patterns and key names (lower case, with wildcards)."""

    patterns: tuple[re.Pattern[str], ...] = ()
    keys: tuple[str, ...] = ()

    @classmethod
    def parse(cls, rules: list[str] | tuple[str, ...]) -> Redaction:
        """Rules as the command line gives them: each item, or comma-separated items; ValueError when bad."""
        patterns: list[re.Pattern[str]] = []
        keys: list[str] = []
        for rule in (item.strip() for text in rules for item in _split(text)):
            if not rule:
                continue
            if rule in PATTERNS:
                patterns.append(re.compile(PATTERNS[rule]))
            elif len(rule) > 2 and rule.startswith("/") and rule.endswith("/"):
                try:
                    patterns.append(re.compile(rule[1:-1]))
                except re.error as error:
                    raise ValueError(f"--redact {rule}: not a regular expression ({error})") from None
            else:
                keys.append(rule.lower())
        return cls(tuple(patterns), tuple(keys))

    def __bool__(self) -> bool:
        return bool(self.patterns or self.keys)

    def apply(self, value: Any) -> tuple[Any, int]:
        """The value with the rules applied, and how many values changed."""
        counter = [0]
        return self._walk(value, counter, schema=False), counter[0]

    def _walk(self, value: Any, counter: list[int], *, schema: bool) -> Any:
        # Inside a schema (a `schema`, a tool message's `tool`) keys name properties: only patterns apply.
        if isinstance(value, str):
            return self._text(value, counter)
        if isinstance(value, list):
            return [self._walk(item, counter, schema=schema) for item in value]
        if isinstance(value, dict):
            result = {}
            for key, item in value.items():
                if key in PROTECTED:
                    result[key] = item
                elif not schema and self._named(key):
                    result[key] = REDACTED
                    counter[0] += 1
                else:
                    inner = schema or key == "schema" or (key == "tool" and value.get("type") == "tool")
                    result[key] = self._walk(item, counter, schema=inner)
            return result
        return value

    def _named(self, key: str) -> bool:
        lowered = key.lower()
        return any(fnmatch.fnmatchcase(lowered, pattern) for pattern in self.keys)

    def _text(self, text: str, counter: list[int]) -> str:
        changed = text
        for pattern in self.patterns:
            changed = pattern.sub(REDACTED, changed)
        if changed != text:
            counter[0] += 1
        return changed


def _split(text: str) -> list[str]:
    """Comma-separated rules, a comma inside /.../ staying part of its expression."""
    if text.startswith("/") and text.endswith("/"):
        return [text]
    parts, current, inside = [], "", False
    for char in text:
        if char == "/" and not current.strip():
            inside = True
        elif char == "/" and inside:
            inside = False
        if char == "," and not inside:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return parts


def redact_document(document: Document, redaction: Redaction) -> tuple[Document, int]:
    """A copy of the document with the rules applied everywhere (context, schema, solution), and the count."""
    value, count = redaction.apply(document.to_json())
    if not isinstance(value, dict):
        return Document(Context(value), document.shape, path=document.path), count
    return Document(Context(value["context"]), document.shape, schema=value.get("schema"),
                    solution=value.get("solution"), path=document.path, envelope=value), count
