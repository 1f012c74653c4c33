"""The validation worker, run in its own process (`_child.child_command`): it imports jsonschema, never Qt.

It reads one JSON request per line from stdin, `{"id", "schema", "value"}`, and answers one line per request,
`{"id", "errors": [[path, message], ...]}`. A schema `pattern` runs through `re`, which holds the GIL for the
whole match: a catastrophic one would stall any thread of the GUI process, so it runs here, where the GUI
can kill it. It exits when stdin closes.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from jsonschema import exceptions, validators
from referencing import Registry


def _errors(schema: Any, value: Any) -> list[list[Any]]:
    cls = validators.validator_for(schema)
    try:
        cls.check_schema(schema)
    except exceptions.SchemaError as error:
        return [[[], f"the schema is invalid: {error.message}"]]
    # an empty registry: a remote `$ref` is reported as unresolvable, never fetched from the network
    validator = cls(schema, format_checker=cls.FORMAT_CHECKER, registry=Registry())
    found = [
        [list(shown.absolute_path), shown.message]
        for problem in validator.iter_errors(value)
        for shown in _expand(problem)
    ]
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
