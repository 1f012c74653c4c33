"""What a run keeps a call of is shared where calls are alike: the inputs of calls that read nothing, and the
units of a plan whose calls are all alone; what a user reads of them is as before."""

from __future__ import annotations

import json
from typing import Any

from exec_support import execute, registry

from contextdeck.engine import Status


def one(call: dict[str, Any], tool: Any, context: Any) -> Any:
    return 1


def echo(call: dict[str, Any], tool: Any, context: Any) -> Any:
    return call.get("n")


def test_calls_that_read_nothing_share_one_record_of_their_inputs() -> None:
    """Three calls without parameters record one empty dict as their inputs; one with a parameter has its own;
    the saved document reads the same as if each had its own."""
    calls: list[dict[str, Any]] = [{"_tool": "one", "_outputPath": f"†state.c{i}"} for i in range(3)]
    calls.append({"_tool": "echo", "n": 2, "_outputPath": "†state.n"})
    context, execution, _ = execute([{"type": "state", "data": {}}], calls, registry(one=one, echo=echo))
    inputs = [context[i]["_run"]["inputs"] for i in range(1, 5)]
    assert inputs == [{}, {}, {}, {"n": 2}]
    assert inputs[0] is inputs[1] is inputs[2]
    assert inputs[3] is not inputs[0]
    assert json.loads(json.dumps(context.messages))[1]["_run"]["inputs"] == {}
    assert all(execution.state(i).status is Status.DONE for i in range(4))
    assert [execution.record.calls[i].audit["inputs"] for i in range(4)] == inputs


def test_a_plan_of_calls_alone_is_its_own_table_of_units() -> None:
    """Each call's unit is found by its index: the units themselves when every call is alone, else a table."""
    calls = [{"_tool": "one", "_outputPath": f"†state.c{i}"} for i in range(3)]
    _, alone, _ = execute([{"type": "state", "data": {}}], calls, registry(one=one))
    assert alone._unit_of is alone.units
    grouped = [calls[0], {"all": calls[1:]}]
    _, execution, _ = execute([{"type": "state", "data": {}}], grouped, registry(one=one))
    assert [unit.members for unit in execution._unit_of] == [(0,), (1, 2), (1, 2)]
    assert execution.rerun([2], dependents=False) == (1, 2)  # a group runs again whole
