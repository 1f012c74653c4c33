"""The validation worker, run as a script in its own process (so it imports jsonschema, never Qt).

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


def _errors(schema: Any, value: Any) -> list[list[Any]]:
    cls = validators.validator_for(schema)
    try:
        cls.check_schema(schema)
    except exceptions.SchemaError as error:
        return [[[], f"the schema is invalid: {error.message}"]]
    validator = cls(schema, format_checker=cls.FORMAT_CHECKER)
    found = []
    for error in validator.iter_errors(value):
        if error.context and error.validator in ("oneOf", "anyOf"):
            error = exceptions.best_match(error.context) or error  # the branch's own error, at its own path
        found.append([list(error.absolute_path), error.message])
    return sorted(found, key=lambda item: [str(step) for step in item[0]])


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
