"""`validate`: every problem of a document that can be known without running anything.

The data checks (`_validate`), unknown tool references and advisors, and every static check `run` makes
before it starts a call: the set-up `Execution.reset` starts from (`run/_setup.set_up`), so the two can
never disagree.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..calls._activities import Activities
from ..calls._calls import UNKNOWN_METHOD, Problem, unusable_schema
from ..calls._registry import Registry
from ..calls._tools import (
    assumed_activities,
    form_indices,
    pending_calls,
    plan_mode,
    solution_problem,
    tool_definitions,
    unknown_references,
)
from ..calls._written import read_plans
from ..document import _json
from ..document._context import Context
from ..document._validate import call_place, data_problems, schema_violations
from ..document._view import Messages, by_position
from ..protocol._expressions import parsed_once
from ..protocol._groups import PlanReadings, read_plan
from ..protocol._messages import CHAT_ROLES, Form, body_of, payload_key, payload_of
from ..protocol._schemas import SchemaFault, schema_check
from ..request._advice import advice_problems
from ..request._request import (
    advisors_of,
    meta_schema,
    output_schema_fault,
    read_apart,
    survey,
    version_warnings,
)
from ..request._tools import merged_tools
from ..resolve._resolution import Diagnostic
from ..run._instances import instance_problems, odd_data_instance
from ..run._instancing import as_written
from ..run._setup import given_outputs, set_up
from ..run._turns import output_violations
from ._call_checks import plan_problems


def _reported(problem: Problem) -> bool:
    """A problem `data_problems` already reports for every plan and the solution: a malformed expression (with its
    position) or an unknown `_outputMethod` (a method the tool refuses is the set-up's alone)."""
    return problem.type == "expression" or problem.code == UNKNOWN_METHOD


def validate(
    context: Messages,
    solution: Any = None,
    *,
    activities: Activities | None = None,
    tools: Registry | None = None,
    schema: Any = None,
    path: Path | None = None,
) -> list[Diagnostic]:
    """All problems: data against schemas, malformed references, write conflicts, unknown tool references,
    calls in any plan to tools nothing defines or reading what nothing writes (`plan_problems`), advisors
    and their advice, what `run` would refuse before starting a call (parameters against the
    tool's schema, prescribed output paths, cycles, groups, ...), each with its message index and call,
    and a final output (the solution's, a plan message's) that breaks the request `schema`.

    Without `activities` nothing is known about which will be loaded: every activity a tool names is taken
    as loaded, so naming one is not a problem and its call's parameters are still checked. `path` is the
    document's file: the delegate files its calls name are found next to it.
    """
    with parsed_once():  # the checks below share one reading of each plan, and each expression's parse
        advisors, advisor_problems = advisors_of(context)
        unusable = solution_problem(solution)
        # `run` refuses such a solution whole: its calls are not read (one holding itself could not be), and the
        # pending calls are the last plan's, as when there is none.
        calls = solution if unusable is None else None
        plans = read_plans(context, calls)
        return [
            *([] if unusable is None else [unusable]),
            *data_problems(context, plans),
            *unknown_references(context, tools),
            *_tool_schema_problems(context),
            *_unloaded_activities(context, activities, tools),
            *plan_problems(context, plans, tools, activities),
            *instance_problems(context, plans),
            *advisor_problems,
            *advice_problems(context, solution, advisors, "solution"),
            *_run_problems(context, calls, plans, activities, tools, path),
            *(_schema_problems(schema) or _output_problems(context, solution, schema)),
            *(Diagnostic(None, "schema", f"the request's schema {reason}", "warning") for reason in read_apart(schema)),
            *_meta_problems(context, solution),
            *_plan_mode_problems(context),
            *_message_problems(context),
        ]


_MODES = ("eager", "lazy")


def _unloaded_activities(context: Messages, activities: Activities | None, tools: Registry | None) -> list[Diagnostic]:
    """A tool whose `_activity` names none of the loaded activities, when they are known: its calls run latently
    (003's fallback), which is worth saying, since a forgotten activities file would have them answered, not run."""
    if activities is None:
        return []
    return [Diagnostic(definition.message_index, "tool", f"tool {name!r}: its _activity {named!r} is not loaded: its "
                       "calls run latently (003), their result is their _output, given or asked for", "warning")
            for name, definition in tool_definitions(context, None, tools).items()
            if isinstance(named := definition.schema.get("_activity"), str) and named and named not in activities]


def _tool_schema_problems(context: Messages) -> list[Diagnostic]:
    """A tool whose schema no validator can use, at the message that defines it (the latest definition of its
    name, 002): it is composed into the request as it is, and `run` refuses every call of it, so it is said
    whether or not a plan calls it yet, as an advisor's schema is."""
    problems: list[Diagnostic] = []
    for name, definition in tool_definitions(context).items():
        try:
            schema_check(definition.schema)
        except SchemaFault as fault:
            problems.append(Diagnostic(definition.message_index, "tool", unusable_schema(name, fault)))
            continue
        problems += [Diagnostic(definition.message_index, "tool", f"tool {name!r}: its schema {reason}", "warning")
                     for reason in read_apart(definition.schema)]
    return problems


def _plan_mode_problems(context: Messages) -> list[Diagnostic]:
    """A plan message's `mode` that is neither of 012's: it runs eagerly, which a misspelt "Lazy" never meant;
    and an `_instance` on it, which 013 ignores (a plan is a global template), as a warning."""
    problems: list[Diagnostic] = []
    for index in form_indices(context, Form.PLAN, len(context)):
        message = body_of(context[index])
        if message.get("mode") not in (None, *_MODES):
            problems.append(Diagnostic(index, "plan", f"'mode' must be 'eager' or 'lazy', not {message['mode']!r}: "
                                                      "the plan would run eagerly"))
        if message.get("_instance") is not None:
            problems.append(Diagnostic(index, "plan", "a plan is never instanced (013): its _instance is ignored; "
                                                      "give each call its _instance", "warning"))
    return problems


def _message_problems(context: Messages) -> list[Diagnostic]:
    """Each message's own fields the engine reads otherwise than written, as warnings, in one pass that reads a
    data message's body only when its classification says a field may be odd (a run's outputs are most of a long
    document):
    - a data message's `_instance` that is no instance id (`odd_instance`), its `kind` that is no name (it is then
      data of the kind `data`, or of `''`), a meta's or an error's data that is no object;
    - an `_instance` on a text, tool, preset or advisor message, which 013 ignores (SPEC 5 passes text as it is;
      a tool, a preset or an advisor is the whole request's);
    - a text message's `role` that no chat API takes (a misspelt one reaches the model as written, which refuses
      the request; one that is no string is sent as `user`);
    - a preset's `preset` that is no object (its keys are then the settings, `preset` among them)."""
    problems: list[Diagnostic] = []
    infos, message_at = by_position(context)
    data = Form.DATA  # a member looked up once, not once a message
    for index, info in enumerate(infos):
        form = info.form
        if info.instance is not None and (odd := odd_data_instance(info.instance, context, index)) is not None:
            problems.append(Diagnostic(index, f"¶{info.kind}", f"_instance: {odd}", "warning"))
        if form is data:
            if info.kind in ("data", "") or info.kind in _OBJECT_KINDS:
                problems += _data_problems(index, body_of(message_at(index)), info.kind)
            continue
        if form not in _UNINSTANCED:
            continue
        body = body_of(message_at(index))
        if body.get("_instance") is not None:
            problems.append(Diagnostic(index, form.value, f"{_UNINSTANCED[form]} message is never instanced: its "
                                                          "_instance is ignored (013 instances data)"
                                                          + _ADVISOR_HINT * (form is Form.ADVISOR), "warning"))
        if form is Form.TEXT and (role := message_at(index).get("role")) is not None and role not in CHAT_ROLES:
            sent = f"the request sends {role!r}" if isinstance(role, str) else "the message is sent as 'user'"
            problems.append(Diagnostic(index, "role", f"{_json.dumps(role, indent=False)} is not a role of a chat "
                                                      f"message ({', '.join(CHAT_ROLES)}): {sent}", "warning"))
        elif form is Form.PRESET and (preset := body.get("preset")) is not None and not isinstance(preset, dict):
            problems.append(Diagnostic(index, "preset", f"{_json.dumps(preset, indent=False)} is not an object "
                                       "of settings: the model call is given 'preset' as a setting", "warning"))
    return problems


def _data_problems(index: int, body: dict[str, Any], kind: str) -> list[Diagnostic]:
    """A data message's `kind` that is no non-empty string (`{"type": "data", "kind": 5}` is data of the kind
    `data`, which its writer hardly meant), or a meta's or an error's data that is no object."""
    declared = body.get("kind")
    if body.get("type") == "data" and declared is not None and not (isinstance(declared, str) and declared):
        return [Diagnostic(index, f"¶{kind}", f"'kind' {_json.dumps(declared, indent=False)} is not a non-empty "
                                              f"string: the message is data of the kind {kind!r}", "warning")]
    if kind in _OBJECT_KINDS and not isinstance(payload := payload_of(body), dict):
        return [Diagnostic(index, payload_key(body) or f"¶{kind}", f"{_json.dumps(payload, indent=False)} is not an "
                                                                   f"object: {_OBJECT_KINDS[kind]}", "warning")]
    return []


# 016's meta is the request's identity (`path`, `version`); an error's data names the failed call and its error.
_OBJECT_KINDS = {"meta": "016's meta is an object (path, version)",
                 "error": "an error's data is an object of the failed call and its error ('call', 'error')"}
# An advisor is the whole request's too: 017's `isInstanced` gives its advice an `_instance` per instance.
_UNINSTANCED = {Form.TEXT: "a text", Form.TOOL: "a tool", Form.PRESET: "a preset", Form.ADVISOR: "an advisor"}
_ADVISOR_HINT = "; 'isInstanced': true asks for its advice per instance (017)"


def _meta_problems(context: Messages, solution: Any) -> list[Diagnostic]:
    """The solution's `meta` (016) against the request's meta schema, and a warning when its version is not the
    context's incremented (`version_warnings`)."""
    meta = solution.get("meta") if isinstance(solution, dict) else None
    if meta is None:
        return []
    current = survey(context, len(context)).meta
    problems = schema_violations(meta_schema(current), meta, None, "solution.meta")
    return problems + version_warnings(current, meta, "solution.meta.version")


def _schema_problems(schema: Any) -> list[Diagnostic]:
    """The request's output schema itself: one no validator can use is said once, here, whether or not an
    output is there to check against it."""
    fault = output_schema_fault(schema)
    return [] if fault is None else [Diagnostic(None, "schema", fault)]


def _output_problems(context: Messages, solution: Any, schema: Any) -> list[Diagnostic]:
    """The non-null `output` of the solution and of each plan message (a turn's, format.md §8) against the
    request schema, as the loop checks it at the end of the tick."""
    problems: list[Diagnostic] = []
    if isinstance(solution, dict) and solution.get("output") is not None:
        problems += output_violations(schema, solution["output"], None, "solution.output")
    for index in form_indices(context, Form.PLAN, len(context)):
        output = body_of(context[index]).get("output")
        if output is not None:
            problems += output_violations(schema, output, index, "output")
    return problems


def _run_problems(
    context: Messages, solution: Any, plans: PlanReadings, activities: Activities | None, tools: Registry | None,
    path: Path | None,
) -> list[Diagnostic]:
    calls, plan_index = pending_calls(context, solution)
    if not calls:
        return []
    live = context if isinstance(context, Context) else Context(context[i] for i in range(len(context)))
    code_tools = dict(tools or {})
    merged = merged_tools(live, code_tools)
    known = activities if activities is not None else assumed_activities(merged)
    base, chain = (path.parent, (path.resolve(),)) if path is not None else (None, ())
    # The pending calls are the solution's or the last plan message's, read already.
    reading = plans.get(plan_index) or read_plan(calls)
    setup = set_up(live, solution, known, code_tools, base, chain, reading, merged)
    kept = {index: told for index, problems in setup.structural.items()
            if isinstance(setup.plans[index].call, dict)  # not a call: `data_problems` said so already
            and (told := [problem for problem in problems if not _reported(problem)])}
    # A call the run repeats per instance (013) is named as the plan numbers it, with the instances refused.
    if kept and setup.origins is not None:
        kept = as_written(kept, setup.origins)
    problems: list[Diagnostic] = []
    for index in sorted(kept):  # the calls with a problem, in plan order
        where = call_place(plan_index, _label(index, reading.calls[index]))
        found = dict.fromkeys(f"{problem.type}: {problem.message}" for problem in kept[index])
        problems.extend(Diagnostic(plan_index, where, text) for text in found)
    lazy = plan_mode(live) == "lazy"
    problems += [Diagnostic(plan_index, call_place(plan_index, f"call {number} $.{field}"), text, "warning")
                 for number, (field, text)
                 in given_outputs(setup.plans, setup.delegates, setup.origins, lazy, reading.calls).items()]
    return problems


def _label(index: int, call: Any) -> str:
    """A call as `CallPlan.label` names it, numbered as the plan is written."""
    name = call.get("_tool") if isinstance(call, dict) else None
    return f"call {index} ({name if isinstance(name, str) and name else '?'})"
