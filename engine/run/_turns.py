"""A turn of the loop (010, 012) as data: is it acceptable, what taking it changes, how its tick concludes.

The loop (`Loop`), `contextdeck run --turn` and the window's Next Turn all use these functions, so a turn
is checked, appended and concluded one way. Each returns what to change; the caller applies it (the
window through its undo stack).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jsonschema.exceptions import ValidationError, best_match

from ..calls._activities import Activities
from ..calls._calls import Problem, copied
from ..calls._registry import Registry
from ..calls._tools import assumed_activities, form_indices, pending_calls, plan_mode
from ..document._document import Document, Shape
from ..document._json import MESSAGE_OUTER, unwritable
from ..document._validate import json_path, path_order, schema_violations
from ..document._view import Messages
from ..protocol._groups import PlanReading, not_a_call, read_plan
from ..protocol._messages import MISSING, Form, body_of, text_of
from ..protocol._methods import deep_merge
from ..request._advice import advice_problems
from ..request._request import (
    REFERENCE,
    Request,
    advisors_of,
    compose_request,
    output_schema,
    version_warnings,
)
from ..request._tools import merged_tools
from ..resolve._resolution import Diagnostic
from ._instances import odd_instance, turn_instance_problems
from ._instancing import as_written
from ._setup import Setup, given_outputs, set_up

OUTPUT_ERROR = "output"  # the error type of a refused final output


def turn_problem(solution: Any) -> str | None:
    """Why a turn is not a solution (an object with `calls` and/or `output`, or an array of calls)."""
    if isinstance(solution, list):
        return None
    if not isinstance(solution, dict):
        return "a turn is a solution: an object with 'calls' and 'output', or an array of calls"
    if "calls" in solution and not isinstance(solution["calls"], list):
        return "the turn's 'calls' must be an array of calls"
    return None


def as_turn(solution: Any) -> dict[str, Any]:
    """The turn as a whole solution: an array is its calls (202); no `calls` is none, no `output` is null."""
    if isinstance(solution, list):
        return {"calls": solution, "output": None}
    return {"calls": [], "output": None, **solution}


def turn_output(solution: Any) -> Any:
    """The turn's output: null for an array of calls, and for what is no turn (None among them: there is none)."""
    return as_turn(solution)["output"] if turn_problem(solution) is None else None


def turn_problems(
    document: Document, solution: Any, *, activities: Activities | None = None, tools: Registry | None = None,
    request: Request | None = None, base: Path | None = None, chain: tuple[Path, ...] = (),
) -> list[Diagnostic]:
    """What is wrong with a turn against the request as the model receives it (its composed schema).

    Errors refuse the turn; each names its JSON path (`$.calls[1].amount`) and what is wrong there. A
    call to a tool the request does not offer is a warning: it runs latent (SPEC 6.7). `meta` may be
    left out of a turn typed by hand (the engine does not read it), and so may `advisors` (a warning: the
    advice is judged by `advice_problems`, as `validate` judges a solution's). `request`: the document's request
    composed already (a dialog checking as the user types composes it once). `base`, `chain`: where delegate
    files are found and the files that delegate already (014), as the run's; by default the document's folder.
    """
    problem = turn_problem(solution)
    if problem is not None:
        return [Diagnostic(None, "$", problem)]
    # Taking the turn appends it as a plan message (and its meta as a meta message), as deep as the turn's
    # object: a turn the document could not hold is refused, not appended (which would fail).
    unfit = unwritable(solution, MESSAGE_OUTER + isinstance(solution, list))
    if unfit is not None:
        at, reason = unfit
        field = 3 - isinstance(solution, list)  # the call's field (`calls`, its index, the field): not hundreds
        shown = json_path(at[:field]) + ("…" if len(at) > field else "")
        return [Diagnostic(None, shown, f"the document could not hold the turn: {reason}")]
    turn = as_turn(solution)
    if request is None:
        request = compose_request(document.context, document.schema, activities=activities, tools=tools)
    # Each call is checked against its own tool below, and the advice as `validate` checks it: the request's `calls`
    # (every tool's schema) is replaced and its `advisors` left out, so only the two levels changed are copied
    # (nothing below them is written).
    schema = dict(request.schema)
    advised = "advisors" in schema["properties"]
    schema["properties"] = {**{key: value for key, value in schema["properties"].items() if key != "advisors"},
                            "calls": {"type": "array"}}
    schema["required"] = [key for key in schema["required"] if key not in ("meta", "advisors")]
    problems: list[Diagnostic] = []
    offered = {tool.name: tool.item for tool in request.tools}
    reading = read_plan(list(turn["calls"]))
    setup = _set_up(document, turn, reading, activities, tools, base, chain)
    refused = setup.structural if setup.origins is None else as_written(setup.structural, setup.origins)
    places = _places(reading)
    for index, where in enumerate(places):
        call = reading.calls[index]
        no_call = not_a_call(call, reading.unlisted.get(index) if reading.unlisted else None)
        found = [Diagnostic(None, where, no_call)] if no_call else _call_problems(call, where, offered, activities)
        said = {problem.path for problem in found} | {f"{problem.path}: {problem.reason}" for problem in found}
        for refusal in refused.get(index, ()) if not no_call else ():  # not a call: said once, above
            path = where + refusal.where[1:]
            if path not in said and _said_as(refusal, where) not in said:
                # An expression's problem names its field itself (`$._output: ...`): said once, at the path.
                reason = refusal.message.removeprefix(f"{refusal.where}: ")
                found.append(Diagnostic(None, path, reason if path != where else f"{refusal.type}: {reason}"))
                said.add(path)
        odd = odd_instance(call.get("_instance"), call=True) if isinstance(call, dict) else None
        if odd is not None:
            found.append(Diagnostic(None, f"{where}._instance", odd, "warning"))
        problems += found
    problems += turn_instance_problems(document.context, reading, places)  # 013
    lazy = plan_mode(document.context) == "lazy"
    problems += [Diagnostic(None, f"{places[number]}.{field}", text, "warning") for number, (field, text)
                 in given_outputs(setup.plans, setup.delegates, setup.origins, lazy, reading.calls).items()]
    if isinstance(turn.get("meta"), dict) and "version" in turn["meta"]:  # 016: given back, its version bumped
        problems += version_warnings(request.meta, turn["meta"], "$.meta.version")
    if advised or "advisors" in turn:  # else no advisor is consulted and none is named: nothing to say
        problems += advice_problems(document.context, solution, advisors_of(document.context)[0], "$")
    return problems + _explained(schema, turn, "$")


def _places(reading: PlanReading) -> list[str]:
    """Each call's JSON path in the turn, in the executor's numbering: `$.calls[2]`, `$.calls[3].all[0]`, and
    `$.calls[4].all` for the one a group whose members are no list is made of."""
    places = [""] * len(reading.calls)
    unlisted = reading.unlisted or {}
    for unit in reading.units:
        for position, index in enumerate(unit.members):
            places[index] = (f"$.calls[{unit.entry}]" if unit.pattern == "one"
                             else f"$.calls[{unit.entry}].{unit.pattern}" if index in unlisted
                             else f"$.calls[{unit.entry}].{unit.pattern}[{position}]")
    return places


def _set_up(document: Document, turn: dict[str, Any], reading: PlanReading, activities: Activities | None,
            tools: Registry | None, base: Path | None, chain: tuple[Path, ...]) -> Setup:
    """The turn's calls as a run's set-up finds them (`set_up`: what it refuses of each call, by index; the calls as
    it repeats them per instance, 013, the delegated among them), but for their literal parameters, which the tool's
    schema judges at the field. Without activities nothing is known of what will be loaded: every activity a tool
    names is taken as loaded (as `validate` takes it), so its calls are not judged as latent ones. Delegate files are
    found from the document's folder unless `base` says otherwise."""
    code_tools = dict(tools or {})
    merged = merged_tools(document.context, code_tools)
    known = activities if activities is not None else assumed_activities(merged)
    path = document.path
    if base is None and path is not None:
        base = path.parent
    chain = chain or ((path.resolve(),) if path is not None else ())
    return set_up(document.context, turn, known, code_tools, base, chain, reading, merged, literals=False)


def _said_as(problem: Problem, where: str) -> str | None:
    """How the tool's schema says a missing required meta-property, when it declares it (else it cannot)."""
    key = problem.where[2:]
    return f"{where}: {key!r} is a required property" if problem.message == f"the tool requires {key}" else None


def _call_problems(call: dict[str, Any], where: str, offered: dict[str, Any],
                   activities: Activities | None) -> list[Diagnostic]:
    name = call["_tool"]
    if name not in offered and "_delegate" in call:
        return []  # it runs the request it names as its delegate, tool or not (014)
    if name not in offered:
        names = ", ".join(sorted(offered)) or "none"
        runs = (f"the call runs the activity {name!r}" if activities is not None and name in activities
                else "the call will run latent")  # 003: an activity of the tool's name makes it explicit
        return [Diagnostic(None, f"{where}._tool", f"the request offers no tool {name!r} (it offers: {names}); "
                                                   + runs, "warning")]
    item = offered[name]
    # SPEC 6.1: the tool's schema judges the parameters; a meta-property it does not declare (`_outputPath`,
    # `_instance`, `_reasoningForCall`, ...) augments the call (002) and is never an additional property.
    declared = item.get("properties") or {}
    if "_output" in declared:  # a latent call's result: the set-up's own check judges it, references resolved
        # so it is left out of what is judged here; its schema stays, as a parameter's `$ref` may lead into it.
        required = item.get("required")
        if isinstance(required, list):
            item = {**item, "required": [key for key in required if key != "_output"]}
    # A meta-property that is null is absent, as a run reads it.
    judged = {key: value for key, value in call.items() if key != "_output"
              and (not key.startswith("_") or (key in declared and value is not None))}
    # A `const` the call leaves out refuses nothing: the run fills `_outputPath`, `_outputMethod`, `_scopes` and
    # `_delegate` with it (SPEC 6.2), never `_instance` (which identity a call acts on is the plan's): only checked.
    for key, rule in declared.items():
        if (key.startswith("_") and key != "_output" and judged.get(key) is None and isinstance(rule, dict)
                and "const" in rule):
            judged[key] = rule["const"]
    # A `††` literal is the text with one `†` less, judged by the parameter's own schema: never a reference.
    literal = {key: value[1:] for key, value in judged.items() if type(value) is str and value.startswith("††")}
    if literal:
        judged |= literal
        item = {**item, "properties": {**declared, **{key: _own(declared[key]) for key in literal if key in declared}}}
    return _explained(item, judged, where)


def _own(rule: Any) -> Any:
    """A parameter's schema without the `†` reference alternative `or_reference` gave it."""
    if isinstance(rule, dict) and isinstance(rule.get("anyOf"), list) and rule["anyOf"][1:] == [REFERENCE]:
        return rule["anyOf"][0]
    return rule


def _explained(schema: Any, value: Any, where: str) -> list[Diagnostic]:
    """Each violation at the place that explains it, in the order of the turn's paths."""
    found = schema_violations(schema, value, None, where, explain=deepest_error)
    return sorted(found, key=lambda problem: path_order(problem.path))


def deepest_error(error: ValidationError) -> ValidationError:
    """Inside `anyOf`/`oneOf`, the error of the branch that is not the `†` reference alternative (a parameter
    may be its value or a reference: the value's problem is the one to show), else jsonschema's best match."""
    if not error.context:
        return error
    branches = error.validator_value if isinstance(error.validator_value, list) else []
    own = [e for e in error.context if not (e.relative_schema_path and branches
                                            and branches[int(e.relative_schema_path[0])] == REFERENCE)]
    chosen = best_match(own or error.context)
    return deepest_error(chosen) if chosen is not None else error


# -- taking a turn ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TurnChange:
    """What taking a turn changes: the plan message appended (None: none), the request's new solution
    (`MISSING`: a bare context, which has no solution slot), and the meta message appended before the plan
    (None: none)."""

    plan: dict[str, Any] | None
    solution: Any
    meta: dict[str, Any] | None = None


def turn_change(document: Document, solution: Any, audit: dict[str, Any] | None = None) -> TurnChange:
    """The turn's calls become a plan message (012/203) with the current plan's mode, before they run.

    So the next request holds the plan, and the run record of these calls follows it (format.md §9). A
    bare context keeps a non-null output in that plan message (it has nowhere else); a saved request
    keeps it in its solution. A plan equal to the last one is not appended again (a reopened document).
    The turn's `meta` (016: the identity it gives back, its version bumped) becomes a meta message before the
    plan, so the next request sees the identity as it now is; one the context's meta holds already is not.
    The turn's `advisors` (017: the advice given before the calls) go on the plan message as `_advisors`, audit
    metadata the model never sees, so what advised the calls stays beside them when the solution is cleared.
    `audit` (the model's exchange in short, `_model`) goes on the plan message, on that meta message (so a run's
    first message is known from the messages: a meta typed by hand carries none), and on a saved request's
    solution (a solution that is an array of calls has no room for it). With no `audit`, a saved solution's own
    `_model` is it: a model's turn saved by `ask` and run later is still the model's.
    """
    if audit is None and isinstance(solution, dict) and isinstance(solution.get("_model"), dict):
        audit = solution["_model"]
    turn = as_turn(solution)
    request = document.shape is Shape.REQUEST
    calls, output = turn["calls"], None if request else turn["output"]
    entries, index = pending_calls(document.context)
    planned = index is not None and entries == calls and body_of(document.context[index]).get("output") == output
    plan: dict[str, Any] | None = None
    if (calls or output is not None) and not planned:
        plan = {"type": "plan", "plan": copy.deepcopy(calls)}
        if plan_mode(document.context) == "lazy":
            plan["mode"] = "lazy"
        if output is not None:
            plan["output"] = copy.deepcopy(output)
    meta = meta_message(document, turn.get("meta"), audit)
    if plan is not None and turn.get("advisors"):  # 017's advice, why the calls were chosen: kept, never shown
        plan["_advisors"] = copied(turn["advisors"])
    if plan is not None and audit:
        plan.update(model_marks(audit, meta))
    if not request:
        return TurnChange(plan, MISSING, meta)
    kept = copy.deepcopy(solution)
    if audit and isinstance(kept, dict):  # the final turn may leave no plan message: its exchange stays here
        kept["_model"] = copy.deepcopy(audit)
    return TurnChange(plan, kept, meta)


def meta_message(document: Document, meta: Any, audit: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """The meta message a turn's `meta` makes, unless the context's meta (as it resolves) holds it already; a
    model's turn marks it with its `audit` as `_model`, as it marks its plan (format.md "Ticks and turns")."""
    if not isinstance(meta, dict) or not meta:
        return None
    current = document.context.resolve("†meta")
    if current.found and deep_merge(current.value, meta) == current.value:
        return None
    message = {"type": "meta", "meta": copy.deepcopy(meta)}
    if audit:
        message["_model"] = copy.deepcopy(audit)
    return message


def model_marks(audit: dict[str, Any], meta: dict[str, Any] | None) -> dict[str, Any]:
    """What marks a plan message as a model's turn: its exchange in short (`_model`), and whether the meta message
    just before it is that turn's (`_turnMeta`: the identity it gave back, marked too) or the turn appended none, so
    that a meta typed by hand there is never read as the turn's (`run_start`; format.md "Ticks and turns")."""
    return {"_model": copy.deepcopy(audit), "_turnMeta": meta is not None}


def current_turn(document: Document) -> Any:
    """The turn the document's calls come from: a request's solution, else its last plan message as a
    solution (`calls` and its `output`); None when there is neither.

    A user's text message after that plan is a new request (010): the plan's calls are still the ones to run,
    but its output no longer answers, so the turn's output is null and the loop goes on to the next turn.
    """
    if document.solution is not None:
        return document.solution
    return plan_turn(document.context, len(document.context))


def plan_turn(context: Messages, end: int) -> Any:
    """The last plan message among the first `end` messages as a turn (`current_turn` of a bare context, or of
    the request a run in it started from); None when there is none."""
    plans = form_indices(context, Form.PLAN, end)
    if not plans:
        return None
    index = plans[-1]
    message = body_of(context[index])
    plan, output = message.get("plan"), message.get("output")
    if output is not None and any(context.info(later).form is Form.TEXT and text_of(context[later])[0] == "user"
                                  for later in range(index + 1, end)):
        output = None
    return {"calls": plan if isinstance(plan, list) else [], "output": output}


@dataclass(frozen=True)
class TurnRecord:
    """Which turn of the loop the document's calls are (1 for the first plan) and its record: the model's
    exchange in short (`_model`: model, usage, latency, replayed), None for a turn typed or given by hand."""

    number: int
    audit: dict[str, Any] | None


def turn_record(document: Document) -> TurnRecord | None:
    """The turn the document runs now: its plan message's place among the plans (a saved request's solution
    not planned yet is the next one) and its `_model`; None when there is no turn."""
    context = document.context
    plans = form_indices(context, Form.PLAN, len(context))
    solution = document.solution
    if solution is None:
        if not plans:
            return None
        return TurnRecord(len(plans), _audit_of(body_of(context[plans[-1]])))
    planned = bool(plans) and turn_problem(solution) is None and \
        body_of(context[plans[-1]]).get("plan") == as_turn(solution)["calls"]
    audit = _audit_of(solution) or (_audit_of(body_of(context[plans[-1]])) if planned else None)
    return TurnRecord(len(plans) if planned else len(plans) + 1, audit)


def _audit_of(holder: Any) -> dict[str, Any] | None:
    audit = holder.get("_model") if isinstance(holder, dict) else None
    return audit if isinstance(audit, dict) else None


# -- concluding a tick -------------------------------------------------------------------------------------


def output_violations(schema: Any, output: Any, message_index: int | None, label: str) -> list[Diagnostic]:
    """`output` against the request schema (no schema: anything goes), each violation at its path."""
    target = output_schema(schema)
    return schema_violations(target, output, message_index, label) if isinstance(target, dict | bool) else []


def output_problem(schema: Any, output: Any) -> str | None:
    """Why `output` does not meet the request schema, in one sentence, or None."""
    found = output_violations(schema, output, None, "$")
    if not found:
        return None
    return "the output does not meet the request schema: " + "; ".join(f"{d.path}: {d.reason}" for d in found)


@dataclass(frozen=True)
class Conclusion:
    """How a tick ends: the turn's `output` ends the loop (`finished`), or was refused (`problem`, with the
    error message to append; None when the context already says so), or is null (the loop goes on)."""

    output: Any
    problem: str | None
    error: dict[str, Any] | None

    @property
    def finished(self) -> bool:
        return self.output is not None and self.problem is None


def conclude(document: Document, solution: Any, date: str) -> Conclusion:
    """The end of a tick of `solution` (010): check its output against the request schema.

    A refused output becomes an error message (`data`: the output and the error), appended once: a
    context whose last output error is this one for this output already has it (a re-opened document).
    """
    output = turn_output(solution)
    problem = None if output is None else output_problem(document.schema, output)
    if problem is None:
        return Conclusion(output, None, None)
    data = {"output": output, "error": {"type": OUTPUT_ERROR, "message": problem}}
    said = _last_output_error(document.context)
    return Conclusion(output, problem, None if said == data else {"type": "error", "data": data, "_date": date})


def _last_output_error(context: Messages) -> Any:
    """The data of the last output error after the last plan message, or None."""
    for index in range(len(context) - 1, -1, -1):
        info = context.info(index)
        if info.form is Form.PLAN:
            return None
        data = body_of(context[index]).get("data")
        if info.kind == "error" and isinstance(data, dict) and isinstance(data.get("error"), dict) \
                and data["error"].get("type") == OUTPUT_ERROR:
            return data
    return None
