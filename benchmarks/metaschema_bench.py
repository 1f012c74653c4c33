"""A large draft 2020-12 schema checked against its metaschema (docs/performance.md, "A large schema checked
against its metaschema").

Run: `.venv/bin/python benchmarks/metaschema_bench.py [--properties 5000,50000]` (`make bench` runs both sizes).
For each size, a generated schema of patterned string properties (each pattern its own, so each is compiled) is
checked by jsonschema's `check_schema` alone and by the one-piece check `_schemas` runs first
(`meets_metaschema`), and `contextdeck validate` reads a document holding it. Each is CPU time in a fresh process,
twice, as a user pays it once per schema text.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

# Checks the schema of the document named in argv[1], with jsonschema alone ("alone") or the one-piece check ("one").
CHECK = """
import json, sys, time
from jsonschema import Draft202012Validator
from contextdeck.engine.protocol._metaschema import meets_metaschema
schema = json.load(open(sys.argv[1]))[0]["schema"]
start = time.process_time()
Draft202012Validator.check_schema(schema) if sys.argv[2] == "alone" else meets_metaschema(schema, Draft202012Validator)
print(time.process_time() - start)
"""
RUNS = 2


def document(properties: int) -> list[dict[str, object]]:
    schema = {"type": "object", "properties": {
        f"p{n}": {"type": "string", "pattern": f"^v{n}_[a-z]+$", "maxLength": 40} for n in range(properties)}}
    return [{"type": "data", "kind": "state", "schema": schema, "data": {"p1": "v1_abc"}}]


def check_seconds(path: Path, how: str) -> float:
    return float(subprocess.check_output([sys.executable, "-c", CHECK, str(path), how], text=True))


def validate_seconds(path: Path) -> float:
    """The CPU time (its own and its children's) of `contextdeck validate` of the document at `path`."""
    before = os.times()
    subprocess.run([sys.executable, "-m", "contextdeck", "validate", str(path)], capture_output=True, check=False)
    after = os.times()
    return after.children_user + after.children_system - before.children_user - before.children_system


def spread(values: list[float]) -> str:
    low, high = min(values), max(values)
    return f"{low:.2f} s" if f"{low:.2f}" == f"{high:.2f}" else f"{low:.2f}–{high:.2f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--properties", default="5000,50000", help="schema sizes, comma separated")
    args = parser.parse_args()
    print(f"a schema checked against its metaschema, CPU (load {os.getloadavg()[0]:.2f})")
    with tempfile.TemporaryDirectory() as folder:
        for properties in (int(text) for text in args.properties.split(",")):
            made = document(properties)
            path = Path(folder) / f"schema_{properties}.json"
            path.write_text(json.dumps(made), encoding="utf-8")
            size = len(json.dumps(made[0]["schema"])) / 2**20
            alone = [check_seconds(path, "alone") for _ in range(RUNS)]
            one = [check_seconds(path, "one") for _ in range(RUNS)]
            validated = [validate_seconds(path) for _ in range(RUNS)]
            print(f"  {properties:,} properties, {size:.1f} MiB: check_schema alone {spread(alone)}, "
                  f"the one-piece check {spread(one)}, contextdeck validate {spread(validated)}", flush=True)


if __name__ == "__main__":
    main()
