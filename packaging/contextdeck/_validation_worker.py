"""The validation worker, run in its own process (`_child.child_command`): it imports jsonschema, never Qt.

It reads one JSON request per line from stdin, `{"id", "schema", "value"}`, and answers one line per request,
`{"id", "errors": [[path, message], ...]}`. It checks through the engine's `schema_errors`, as `validate` and
`run` do (no `$ref` is fetched; a pattern that backtracks runs out of time and is reported at its field); the
process stays as a second guard, which the GUI kills when an answer is late. It exits when stdin closes.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from jsonschema import exceptions

from contextdeck.engine import SchemaFault, schema_errors


def _errors(schema: Any, value: Any) -> list[list[Any]]:
    try:
        problems = schema_errors(schema, value, formats=True)
    except SchemaFault as fault:
        return [[[], f"the schema cannot be used: {fault}"]]
    found = [[list(shown.absolute_path), shown.message] for problem in problems for shown in _expand(problem)]
    return sorted(found, key=lambda item: [str(step) for step in item[0]])


def _discriminates(error: exceptions.ValidationError) -> bool:
    """The branch's own type, or a const/enum of one of its properties, failed: the value is not for it."""
    depth = len(error.relative_path)
    return (depth == 0 and error.validator in ("type", "const", "enum")) or (
        depth == 1 and error.validator in ("const", "enum")
    )


def _expand(error: exceptions.ValidationError) -> list[exceptions.ValidationError]:
    """A oneOf/anyOf failure as the errors of the one branch the value was plausibly meant for (the only
    branch whose own type, consts and enums it meets, as the form picks it), so they show at their fields;
    the failure itself when no single branch stands out."""
    if not error.context or error.validator not in ("oneOf", "anyOf"):
        return [error]
    branches: dict[Any, list[exceptions.ValidationError]] = {}
    for sub in error.context:
        branches.setdefault(sub.relative_schema_path[0], []).append(sub)
    plausible = [errors for errors in branches.values() if not any(_discriminates(e) for e in errors)]
    if len(plausible) != 1:
        return [error]
    return [shown for sub in plausible[0] for shown in _expand(sub)]


def main() -> None:
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        try:
            errors = _errors(request["schema"], request["value"])
        except Exception as error:  # a broken schema ($ref to nowhere...) is reported, never fatal
            errors = [[[], f"validation failed: {type(error).__name__}: {error}"]]
        print(json.dumps({"id": request["id"], "errors": errors}), flush=True)


if __name__ == "__main__":
    main()
