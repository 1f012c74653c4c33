"""Whether a schema meets its metaschema, answered fast for the drafts whose metaschema is split into vocabularies.

A schema is checked against its metaschema before anything is checked against it (`_schemas`). Draft 2020-12's
metaschema (the draft of a schema without `$schema`) is seven vocabulary metaschemas joined by `allOf`, each
reaching back to the whole through `$dynamicRef`: jsonschema resolves those references again at every subschema,
which makes checking a large schema much dearer than against draft 7's single metaschema.
`meets_metaschema` checks against the same metaschema made one: the vocabularies' keywords in one `properties`,
each `$dynamicRef: "#meta"` a `$ref` to that whole (what it resolves to when the metaschema itself is the one
checking) and every other `$ref` replaced by what it points to. It answers only valid or not: a schema it finds
invalid is checked again the usual way, for the words and the place of its first fault (`check_schema`).

A `pattern` (and a key of `patternProperties`) is checked as the metaschema's format check does, with `re`, once
per pattern text: a pattern a schema repeats, or that another schema checked before, is not compiled again.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Final
from urllib.parse import urldefrag, urljoin

from jsonschema import Draft202012Validator, FormatChecker
from jsonschema_specifications import REGISTRY as SPECIFICATIONS

_DRAFT_2020_12: Final = "https://json-schema.org/draft/2020-12/schema"


def meets_metaschema(schema: Any, cls: Any) -> bool | None:
    """Whether `schema` meets the metaschema of validator class `cls`, with the format checks `check_schema` makes;
    None for a draft checked the usual way only (its metaschema is one already)."""
    if cls is not Draft202012Validator:
        return None
    return bool(_flat_validator().is_valid(schema))


@functools.lru_cache(maxsize=1)
def _flat_validator() -> Any:
    checker = FormatChecker(())  # the draft's own format checks, its pattern check made once per pattern text
    checker.checkers = {**Draft202012Validator.FORMAT_CHECKER.checkers, "regex": (_is_regex, re.error)}
    return Draft202012Validator(_flattened(_DRAFT_2020_12), format_checker=checker)


def _is_regex(pattern: object) -> bool:
    """The metaschema's format check of a pattern (jsonschema's `is_regex`)."""
    return not isinstance(pattern, str) or _compiles(pattern)


@functools.lru_cache(maxsize=65536)
def _compiles(pattern: str) -> bool:
    re.compile(pattern)  # raises `re.error`, which the format check takes as the verdict (an error is never kept)
    return True


def _flattened(uri: str) -> dict[str, Any]:
    """The metaschema at `uri` made one schema: its `allOf` of vocabularies merged into it, references inlined."""
    root = SPECIFICATIONS.contents(uri)
    properties: dict[str, Any] = {}
    for part in root["allOf"]:
        vocabulary = urljoin(uri, part["$ref"])
        for key, rule in SPECIFICATIONS.contents(vocabulary)["properties"].items():
            properties[key] = _inlined(rule, vocabulary)
    for key, rule in root.get("properties", {}).items():
        properties[key] = _inlined(rule, uri)
    return {"type": root["type"], "properties": properties}


def _inlined(node: Any, base: str) -> Any:
    """`node` (of the metaschema document at `base`) with `$dynamicRef: "#meta"` a reference to the whole and every
    other `$ref` replaced by its target (beside any other keyword, as an `allOf`: both apply)."""
    if isinstance(node, list):
        return [_inlined(item, base) for item in node]
    if not isinstance(node, dict):
        return node
    made = {key: _inlined(value, base) for key, value in node.items() if key not in ("$ref", "$dynamicRef",
                                                                                    "$comment", "deprecated")}
    if node.get("$dynamicRef") == "#meta":
        made["$ref"] = "#"
    elif "$dynamicRef" in node:
        raise ValueError(f"a $dynamicRef the flattening does not know: {node['$dynamicRef']!r}")
    if "$ref" in node:
        target = urljoin(base, node["$ref"])
        document, fragment = urldefrag(target)
        contents = SPECIFICATIONS.contents(document)
        for step in fragment.split("/")[1:]:  # a JSON pointer; the metaschemas' hold no `~`
            contents = contents[step]
        inlined = _inlined(contents, document)
        made = {**made, "allOf": [*made.get("allOf", []), inlined]} if made else inlined
    return made
