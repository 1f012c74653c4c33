"""A run's set-up (`run/_setup.set_up`): the calls it copies per instance (013) are planned as the calls they are."""

from contextdeck.engine import Context
from contextdeck.engine.calls._calls import plan_call
from contextdeck.engine.calls._tools import assumed_activities
from contextdeck.engine.request._tools import merged_tools
from contextdeck.engine.run._setup import set_up

TOOLS = {"type": "tool", "tool": {
    "plain": {"type": "object", "properties": {"n": {"type": "integer"}}},
    # A tool that rules `_instance`: its calls' copies are judged each for its own instance.
    "ruled": {"type": "object", "properties": {"_instance": {"enum": ["①"]}, "n": {"type": "integer"}}},
}}
INPUTS = [{"type": "input", "_instance": name, "data": {"x": 1}} for name in ("①", "②", "③")]


def _set_up(calls: list[object]):
    context = Context([TOOLS, *INPUTS, {"type": "plan", "plan": calls}])
    tools = merged_tools(context, {})
    return set_up(context, None, assumed_activities(tools), {}), tools


def test_each_copy_per_instance_is_planned_as_its_own_call() -> None:
    """Every call the set-up copies per instance has the plan `plan_call` makes of that copy: its index, its call
    with its `_instance`, its instance and its problems (a tool that rules `_instance` refuses some copies)."""
    calls = [{"_tool": "plain", "n": 1, "_outputPath": "†input.y"},
             {"all": [{"_tool": "ruled", "n": 2, "_outputPath": "†input.z"}, {"_tool": "plain", "n": "†input.x"}]},
             {"_tool": "plain", "n": 3, "_outputPath": "†state.w"},
             {"_tool": "ruled", "n": "†input.x"}]
    setup, tools = _set_up(calls)
    assert setup.origins is not None
    assert len(setup.plans) == 3 + 6 + 1 + 3
    for plan in setup.plans:
        assert plan == plan_call(plan.index, setup.calls[plan.index], tools, assumed_activities(tools))
    refused = {setup.origins[index] for index, problems in setup.structural.items()
               if any(problem.type == "call" for problem in problems)}
    assert refused == {(1, "②"), (1, "③"), (4, "②"), (4, "③")}


def test_a_copys_literal_parameters_are_judged_for_every_copy() -> None:
    """Literal parameters the tool refuses refuse every copy of the call, each with the same problem."""
    setup, _ = _set_up([{"_tool": "plain", "n": "one", "_outputPath": "†input.y"}, {"_tool": "plain", "n": 2}])
    assert setup.origins is not None
    said = {setup.origins[index]: [(problem.type, problem.message) for problem in problems]
            for index, problems in setup.structural.items()}
    expected = [("parameters", "invalid parameters for 'plain': $.n: 'one' is not of type 'integer'")]
    assert said == {(0, "①"): expected, (0, "②"): expected, (0, "③"): expected}
