"""Child processes (the validation worker) start the same way from a checkout, a wheel and a frozen bundle."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from contextdeck import _child
from contextdeck._child import CHILD_OPTION, child_command, run_child

WORKER = "contextdeck._validation_worker"


def ask_worker(command: list[str]) -> list[dict[str, object]]:
    """Sends the worker one request (a string where the schema wants an integer) and returns its lines."""
    request = json.dumps({"id": 7, "schema": {"type": "integer"}, "value": "seven"}) + "\n"
    done = subprocess.run(command, input=request, capture_output=True, text=True, timeout=60, check=True)
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_python_runs_the_worker_with_dash_m() -> None:
    """From a checkout or an installed wheel the worker is `python -m`, with the current folder not searched."""
    program, arguments = child_command(WORKER)
    assert (program, arguments) == (sys.executable, ["-P", "-u", "-m", WORKER])
    assert ask_worker([program, *arguments]) == [
        {"ready": True}, {"id": 7, "errors": [[[], "'seven' is not of type 'integer'"]]}]


def test_a_frozen_bundle_runs_the_worker_through_its_own_executable(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bundle's executable is the command line (it has no `-m`): the worker is its hidden option, which
    `python -m contextdeck` (the bundle's entry point) answers with the worker, not with a usage error."""
    monkeypatch.setattr(_child.sys, "frozen", True, raising=False)
    program, arguments = child_command(WORKER)
    assert (program, arguments) == (sys.executable, [CHILD_OPTION, WORKER])
    lines = ask_worker([sys.executable, "-P", "-m", "contextdeck", *arguments])
    assert lines[-1] == {"id": 7, "errors": [[[], "'seven' is not of type 'integer'"]]}


@pytest.mark.parametrize("argv", [
    [CHILD_OPTION, "json.tool"],  # not one of ours: the option is no general `-m`
    [CHILD_OPTION],
    ["validate", "doc.json"],
])
def test_other_command_lines_run_nothing(argv: list[str]) -> None:
    """Anything but the option and a module of this package is left to the command line."""
    assert run_child(argv) is False


def test_a_frozen_bundle_runs_activity_workers_through_its_own_executable(monkeypatch: pytest.MonkeyPatch,
                                                                           tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The activity pool starts its workers with `child_command`: as a bundle would (its executable with the
    hidden option, here `python -m contextdeck`), a call runs and what it printed is captured."""
    import asyncio

    from contextdeck.engine.run import _pool

    monkeypatch.setattr(_child.sys, "frozen", True, raising=False)
    _, arguments = child_command(_pool.WORKER_MODULE)
    assert arguments == [CHILD_OPTION, "contextdeck.engine.run._worker"]
    monkeypatch.setattr(_pool, "child_command", lambda module: (sys.executable, ["-P", "-m", "contextdeck",
                                                                                 CHILD_OPTION, module]))
    file = tmp_path / "acts.py"
    file.write_text("def add(call, tool, context):\n    print('adding')\n    return call['a'] + 1\n"
                    "ACTIVITIES = {'add': add}\n")
    pool = _pool.WorkerPool(1)
    request = {"file": str(file), "name": "add", "call": {"a": 41}, "tool": None, "context": []}
    ran = asyncio.run(_pool.Jobs(pool).run(0, request, 60.0))
    pool.shutdown()
    assert (ran.result, ran.captured.stdout) == (42, "adding\n")
