"""What a call is before it runs (SPEC 6.1–6.3, 6.7): its tool, mode, reads, destinations and structural errors."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from jsonschema.exceptions import ValidationError, best_match

from ..document._context import Context
from ..document._validate import json_path
from ..protocol._errors import ExpressionError
from ..protocol._expressions import (
    DAGGER,
    OUTPUT_PATH,
    Expression,
    Occurrence,
    Reference,
    Where,
    is_expression,
    occurrences,
    parsed_or_error,
    unescape,
)
from ..protocol._groups import why_no_call
from ..protocol._messages import METHODS
from ..protocol._records import record
from ..protocol._schemas import SchemaCheck, SchemaFault, errors_by_key, schema_check
from ._activities import Activities, Activity
from ._scopes import call_scopes, scoped_messages, scopes_rule
from ._tools import ToolDefinition


class Mode(StrEnum):
    EXPLICIT = "explicit"  # an activity runs it
    LATENT = "latent"  # its result is its `_output`, or one given from outside


@dataclass(frozen=True, slots=True)
class Problem:
    """A problem of a call: `type` is a keyword (expression, parameters, outputPath, cycle, ...), `message`
    says what and where; `where` is the JSON path in the call it is about ("$" for the whole call). `code` tells
    apart problems of one `type` that a check treats apart (`UNKNOWN_METHOD`); the user reads `type` and `message`."""

    type: str
    message: str
    where: str = "$"
    code: str | None = None


# A call's `_outputMethod` that is none of the five (not a tool's that is none: a document's data says the first too).
UNKNOWN_METHOD = "unknown-method"


@record
class CallPlan:
    """One call as analysed before running: `call` is as written (never modified)."""

    index: int
    call: Any
    tool_name: str | None
    tool: ToolDefinition | None
    instance: str | None
    mode: Mode
    activity: Activity | None
    output_path: str | None  # the call's own, or the tool's prescribed `const`
    destinations: Expression | None
    method: str
    reads: tuple[Expression, ...]  # in parameters and `_output`; `_outputPath` is never a read
    problems: tuple[Problem, ...]
    prescribed: bool = False  # `output_path` is the tool's `const`, the call wrote none
    scopes: tuple[str, ...] = ()  # the kinds it sees: the call's `_scopes`, or the tool's `const` (015)

    @property
    def writes(self) -> tuple[Reference, ...]:
        return () if self.destinations is None else self.destinations.references

    @property
    def has_output(self) -> bool:
        return isinstance(self.call, dict) and "_output" in self.call

    @property
    def label(self) -> str:
        return f"call {self.index} ({self.tool_name or '?'})"


def parameters_of(call: dict[str, Any]) -> dict[str, Any]:
    """The parameters of a call: its keys that do not start with `_`."""
    return {key: value for key, value in call.items() if not key.startswith("_")}


def in_parameters(where: Where) -> bool:
    """Whether an expression a call holds (`find_expressions` of it: `where` starts with a key) is in one of its
    parameters."""
    key = where[0]
    return not (isinstance(key, str) and key.startswith("_"))


def _reads(found: list[Occurrence]) -> tuple[tuple[Expression, ...], tuple[Problem, ...],
                                            Expression | ExpressionError | None]:
    """The expressions of a call's parameters, then of its `_output`, from all of its own (`found`), their
    problems, and its `_outputPath` parsed (None: the call has none that is an expression)."""
    reads: list[Expression] = []
    problems: list[Problem] = []
    destination = None
    output: list[Occurrence] = []
    for each in found:  # one loop: a plan holds 100,000 calls, most with an `_outputPath` and nothing else
        where = each[0]
        if where[0] == "_output":
            output.append(each)
        elif where == OUTPUT_PATH:
            destination = each[2]
        elif in_parameters(where):
            _read(each, reads, problems)
    for each in output:
        _read(each, reads, problems)
    return tuple(reads), tuple(problems), destination


def _read(found: Occurrence, reads: list[Expression], problems: list[Problem]) -> None:
    where, _, parsed = found
    if isinstance(parsed, ExpressionError):
        path = json_path(where)
        problems.append(Problem("expression", f"{path}: {parsed.reason} at position {parsed.position}", path))
    else:
        reads.append(parsed)


def _output_rule(tool: ToolDefinition | None) -> Any:
    properties = tool.schema.get("properties") if tool is not None else None
    return properties.get("_outputPath") if isinstance(properties, dict) else None


def _output_path(call: dict[str, Any], rule: Any, check: SchemaCheck | None) -> tuple[str | None, bool, list[Problem]]:
    """The effective output path (SPEC 6.2), whether the tool prescribed it (`const`, the call wrote none),
    and the problems of the call's own path checked against the tool's `_outputPath` schema (`rule`), read in its
    whole schema (`check`; None: one that cannot be used, said once for every call)."""
    path = call.get("_outputPath")
    if path is None:
        if isinstance(rule, dict) and "const" in rule:
            if isinstance(rule["const"], str):
                return rule["const"], True, []
            text = f"the tool prescribes _outputPath {rule['const']!r}, which is not an expression string"
            return None, False, [Problem("outputPath", text, "$._outputPath")]
        return None, False, []
    where = "$._outputPath"
    if not isinstance(path, str):
        return None, False, [Problem("outputPath", "_outputPath must be a string", where)]
    if isinstance(rule, dict) and "const" in rule and path != rule["const"]:
        text = f"the tool prescribes _outputPath {rule['const']!r}, not {path!r}"
        return None, False, [Problem("outputPath", text, where)]
    if rule is not None and check is not None:
        try:
            found = errors_by_key(check, {"_outputPath": path}).get("_outputPath")
        except SchemaFault as fault:  # a path nested too deeply for it
            return None, False, [Problem("outputPath", f"the tool's _outputPath schema cannot be used: {fault}", where)]
        if found:
            text = f"_outputPath {path!r} is not allowed by the tool: {best_match(found).message}"
            return None, False, [Problem("outputPath", text, where)]
    return path, False, []


def _mode(tool_name: str, tool: ToolDefinition | None, activities: Activities) -> tuple[Activity | None, list[Problem]]:
    named = tool.schema.get("_activity") if tool is not None else None
    if named == "":  # 003: an empty `_activity` is the latent fallback, stated outright
        return None, []
    if isinstance(named, str):  # 003: looked up in the registry; none found there is the latent fallback (rule 3)
        return activities.get(named), []
    if named is not None:
        text = f"the tool's _activity {named!r} is not an activity's name (a string; \"\" for latent)"
        return None, [Problem("activity", text, "$._tool")]
    return activities.get(tool_name), []


@record
class ToolReading:
    """What `plan_call` reads of a call's tool, the same for each of its calls: its activity (and why it
    cannot run it), the calls' mode, its rules for the calls' `_outputPath` and `_scopes`, and the check of its
    other meta-properties."""

    activity: Activity | None
    problems: tuple[Problem, ...]
    output_rule: Any
    scopes_rule: Any
    mode: Mode  # explicit when an activity runs its calls
    required_meta: tuple[str, ...] = ()  # meta-properties the tool's `required` names and no `const` fills
    meta_rules: tuple[tuple[str, Any], ...] = ()  # the other meta-properties it rules (`_meta_rules`)
    check: SchemaCheck | None = None  # its whole schema, which judges them (None: no tool, or no validator can use it)
    method: str = "set"  # the method of a call that gives none: the tool's `const`, else `set` (may be no method)


# A saved request, its context, the message and its `data` take 4 of a document's 254 levels (`_json.MAX_DEPTH`)
# and a result up to 200 (`_outputs.MAX_RESULT_DEPTH`): the path an output is wrapped in may take the other 50.
MAX_OUTPUT_SEGMENTS = 50


# The problem type of a required meta-property a call lacks; `_output` is not among them: a latent call
# without one waits for it (a model or a person gives it).
_REQUIRED_META = {"_outputPath": "outputPath", "_scopes": "scopes", "_delegate": "delegate", "_instance": "call"}


def read_tool(name: str, tool: ToolDefinition | None, activities: Activities) -> ToolReading:
    activity, problems = _mode(name, tool, activities)
    mode = Mode.EXPLICIT if activity is not None else Mode.LATENT
    rules = _meta_rules(tool)
    check = None
    if tool is not None:
        # The whole schema, as `validate` checks the tool's message: one that no validator can use refuses every
        # call of it, in the one sentence, whichever properties the call gives.
        try:
            check = schema_check(tool.schema)
        except SchemaFault as fault:
            problems.append(Problem("parameters", unusable_schema(name, fault)))
            check, rules = None, ()
    method = dict(rules).get("_outputMethod")
    return ToolReading(activity, tuple(problems), _output_rule(tool), scopes_rule(tool), mode, _required_meta(tool),
                       rules, check,
                       method["const"] if isinstance(method, dict) and "const" in method else "set")


# Meta-properties whose rules are read on their own: the name, the result (`_output_check`), the path, the scopes
# and the delegate.
_RULED_APART = frozenset({"_tool", "_output", "_outputPath", "_scopes", "_delegate"})


def _meta_rules(tool: ToolDefinition | None) -> tuple[tuple[str, Any], ...]:
    """The tool's rules of its calls' other meta-properties (`_outputMethod`, `_instance`, `_reasoningForCall`, a
    key of its own): the composed `calls` item holds a turn's calls to them (002), so a run holds every call."""
    properties = tool.schema.get("properties") if tool is not None else None
    if not isinstance(properties, dict):
        return ()
    return tuple((key, rule) for key, rule in properties.items()
                 if type(key) is str and key.startswith("_") and key not in _RULED_APART)


def _meta_problems(call: dict[str, Any], reading: ToolReading) -> tuple[Problem, ...]:
    """The meta-properties the call gives (null is absent, a `const` fills it) judged by the tool's whole schema,
    as the turn check judges them by the composed `calls` item (`required`, `$ref`, `false`, `patternProperties`
    alike); each refused one said as `_output_path` says a path."""
    judged: dict[str, Any] = {}
    for key, rule in reading.meta_rules:
        given = call.get(key)
        if given is None:
            if isinstance(rule, dict) and "const" in rule:  # the run fills `_outputMethod`, never `_instance`
                judged[key] = rule["const"]
        elif key != "_outputMethod" or given in METHODS:  # an unknown method is said as one (`plan_call`)
            judged[key] = given
    assert reading.check is not None
    try:
        by_key = errors_by_key(reading.check, judged)
    except SchemaFault as fault:  # a value nested too deeply for it
        return (Problem("call", f"the tool's schema cannot judge the call's meta-properties: {fault}"),)
    missing = [key for key, _ in reading.meta_rules for error in by_key.get("", ())
               if key not in _REQUIRED_META and call.get(key) is None  # an unknown method is given: said as one
               and error.message == f"{key!r} is a required property"]
    problems: tuple[Problem, ...] = ()
    for key, rule in reading.meta_rules:
        kind, where = ("outputMethod" if key == "_outputMethod" else "call"), f"$.{key}"
        if key in missing:
            problems += (Problem(kind, f"the tool requires {key}", where),)
        if key not in by_key or call.get(key) is None:
            continue
        given = judged[key]
        if isinstance(rule, dict) and "const" in rule and given != rule["const"]:
            problems += (Problem(kind, f"the tool prescribes {key} {rule['const']!r}, not {given!r}", where),)
            continue
        error = best_match(by_key[key])
        problems += (Problem(kind, f"{key} {given!r} is not allowed by the tool: {error.message}", where),)
    return problems


def _required_meta(tool: ToolDefinition | None) -> tuple[str, ...]:
    schema = tool.schema if tool is not None else {}
    required = schema.get("required")
    if not isinstance(required, list):
        return ()
    properties = schema.get("properties")
    rules = properties if isinstance(properties, dict) else {}
    return tuple(key for key in _REQUIRED_META if key in required and key not in schema  # 014's `_delegate`
                 and not (isinstance(rules.get(key), dict) and "const" in rules[key]))


def plan_call(index: int, call: Any, tools: dict[str, ToolDefinition], activities: Activities,
              found: list[Occurrence] | None = None, read: dict[str, ToolReading] | None = None,
              group: tuple[str, Any] | None = None) -> CallPlan:
    """Everything about a call that can be known from the call and the tools alone, with its structural errors.
    `found`: the call's expressions (`occurrences` of it), when its plan was read already (`read_plan`); `read`:
    each tool read already, by name (`read_tool`), kept for the calls that come next (a set-up plans 100,000);
    `group`: the group whose members are no list the call was made of (`PlanReading.unlisted`).

    What the context adds (parameters resolved, readiness, cycles) is `analyse_call`'s (`_analysis`).
    """
    name = call.get("_tool") if isinstance(call, dict) else None
    if not isinstance(name, str) or not name:
        problem = Problem("call", why_no_call(call, group), "$._tool")
        named = name if isinstance(name, str) else None
        return CallPlan(index, call, named, None, None, Mode.LATENT, None, None, None, "set", (), (problem,))
    tool = tools.get(name)
    instance = call.get("_instance")
    if instance is not None:
        instance = str(instance)
    if found is None:
        found = occurrences(call)
    reads: tuple[Expression, ...] = ()
    problems: tuple[Problem, ...] = ()
    if len(found) == 1 and found[0][0] == OUTPUT_PATH:  # its output path alone (most calls of a run): read here
        own: Expression | ExpressionError | None = found[0][2]
    else:
        reads, problems, own = _reads(found)
    reading = read.get(name) if read is not None else None
    if reading is None:
        reading = read_tool(name, tool, activities)
        if read is not None:
            read[name] = reading
    activity = reading.activity
    if reading.problems:  # `problems` is a tuple, added to only for a call with a problem: most have none
        problems += reading.problems
    path = call.get("_outputPath")
    prescribed = False
    if reading.output_rule is not None or type(path) is not str:  # else its own path, ruled by nothing: most calls
        path, prescribed, path_problems = _output_path(call, reading.output_rule, reading.check)
        problems += tuple(path_problems)
    for key in reading.required_meta:  # as the composed `calls` item requires them of a turn
        if call.get(key) is None:  # null is absent too
            problems += (Problem(_REQUIRED_META[key], f"the tool requires {key}", f"$.{key}"),)
    destinations = None
    if path is not None:
        parsed = own if own is not None and not prescribed else parsed_or_error(path)  # the call's own: read
        if isinstance(parsed, ExpressionError) and prescribed:
            # The tool's, not the call's: no check of the call's own expressions (validate's) can see it.
            text = f"the tool prescribes _outputPath {path!r}: {parsed.reason} at position {parsed.position}"
            problems += (Problem("outputPath", text, "$._outputPath"),)
        elif isinstance(parsed, ExpressionError):
            text = f"$._outputPath: {parsed.reason} at position {parsed.position}"
            problems += (Problem("expression", text, "$._outputPath"),)
        else:
            destinations = parsed
            for ref in parsed.references:
                if len(ref.path) > MAX_OUTPUT_SEGMENTS:  # its output could never be saved: refused before it runs
                    text = (f"a destination in ¶{ref.kind} {len(ref.path)} segments deep; an output path may have at "
                            f"most {MAX_OUTPUT_SEGMENTS} (the document could not hold its output)")
                    problems += (Problem("outputPath", text, "$._outputPath"),)
                    break
    if reading.meta_rules:  # most tools rule no other meta-property
        problems += _meta_problems(call, reading)
    method = call.get("_outputMethod")
    if method is None:  # absent, or null: the tool's prescribed method (SPEC 6.2, as a path), else `set`
        method = reading.method
        if method not in METHODS:  # the tool's, not the call's: its own method check cannot see it
            text = f"the tool prescribes _outputMethod {method!r}, which is not one of {', '.join(METHODS)}"
            problems += (Problem("outputMethod", text, "$._outputMethod"),)
            method = "set"
    elif method not in METHODS:
        text = f"unknown _outputMethod {method!r}; expected one of {', '.join(METHODS)}"
        problems += (Problem("outputMethod", text, "$._outputMethod", UNKNOWN_METHOD),)
        method = "set"
    scopes: tuple[str, ...] = ()
    if reading.scopes_rule is not None or "_scopes" in call:  # else no scopes asked, none ruled: most calls
        scopes, refusal = call_scopes(call, reading.scopes_rule, reading.check)
        if refusal is not None:
            problems += (Problem("scopes", refusal, "$._scopes"),)
    # The mode is the tool's reading's: an enum's member looked up costs a few tenths of a microsecond a call.
    return CallPlan(index, call, name, tool, instance, reading.mode, activity, path, destinations, method,
                    reads, problems, prescribed, scopes)


def plan_copy(plan: CallPlan, index: int, call: dict[str, Any], read: dict[str, ToolReading]) -> CallPlan | None:
    """`plan_call` of call `index`, a copy of `plan`'s call that a run makes for an instance (013: its `_instance`
    is all that differs), made from `plan`; None when its tool rules `_instance` (its value is judged: plan the copy
    as any call). `read`: the tools `plan` was planned with (`plan_call`'s)."""
    reading = read.get(plan.tool_name) if plan.tool_name is not None else None
    if reading is None or any(key == "_instance" for key, _ in reading.meta_rules):
        return None
    return CallPlan(index, call, plan.tool_name, plan.tool, str(call["_instance"]), plan.mode, plan.activity,
                    plan.output_path, plan.destinations, plan.method, plan.reads, plan.problems, plan.prescribed,
                    plan.scopes)


def missing_reads(context: Context, plan: CallPlan, skip: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """The references the call waits for: for each read not found, every missing reference of each alternative
    (SPEC 6.8: a blocked call is reported with the paths it waits for, and `†a && †b` waits for both).

    Reads that mention a reference in `skip` are not resolved (the caller already knows they wait).
    """
    missing: list[str] = []
    for expression in plan.reads:
        if skip and any(str(ref) in skip for ref in expression.references):
            continue
        resolution = context.resolve(expression, instance=plan.instance)
        if resolution.found:
            continue
        if all(len(gate) == 1 for gate in expression.alternatives):  # `missing` names each one already
            absent = resolution.missing
        else:  # a resolution names a gate's first missing reference: the others are resolved one by one
            absent = tuple(str(ref) for gate in expression.alternatives for ref in gate
                           if not found_alone(context, ref, plan.instance))
        missing.extend(path for path in absent if path not in missing)
    return tuple(missing)


def found_alone(context: Context, ref: Reference, instance: str | None) -> bool:
    """Whether one reference is found, resolved as it is (never written out and parsed again)."""
    return context.resolve(Expression(str(ref), ((ref,),), (ref,)), instance=instance).found


def resolve_parameters(context: Context, plan: CallPlan, at: int | None = None) -> dict[str, Any]:
    """The call's parameters resolved for its instance (`resolve_call`'s, without its `_` keys): what the
    tool's schema judges (`check_parameters`)."""
    call: dict[str, Any] = plan.call
    instance = plan.instance
    # Most values are literal strings, themselves resolved: no call for them (a plan holds 100,000 calls).
    return {key: value if type(value) is str and not value.startswith(DAGGER)
            else _resolved(value, context, instance, at) for key, value in call.items() if not key.startswith("_")}


def resolve_call(context: Context, plan: CallPlan, at: int | None = None) -> dict[str, Any]:
    """The call with its parameters and `_output` resolved for its instance (a deep copy; `††` unescaped).

    `at`: as of the first `at` messages (None: all of them).
    """
    call: dict[str, Any] = plan.call
    return {key: _resolved(value, context, plan.instance, at) if not key.startswith("_") or key == "_output"
            else copied(value) for key, value in call.items()}


_SCALARS = frozenset({str, int, float, bool, type(None)})


def copied(value: Any) -> Any:
    """A deep copy of a JSON value, made directly (calls, their inputs and tools are JSON); anything else
    through `copy.deepcopy`. Several times faster than `copy.deepcopy` on JSON, which keeps a memo."""
    kind = type(value)
    if kind is dict:
        return {key: copied(item) for key, item in value.items()}
    if kind is list:
        return [copied(item) for item in value]
    return value if kind in _SCALARS else copy.deepcopy(value)


def _resolved(value: Any, context: Context, instance: str | None, at: int | None) -> Any:
    # A function of the module, not a closure calling itself: that closure was a reference cycle holding the
    # context, which outlived a replaced document when the window froze it (contextdeck/_runtime.py).
    if isinstance(value, str):
        if not value.startswith(DAGGER):  # most literal values: neither an expression nor escaped
            return value
        if is_expression(value):
            return copied(context.resolve(value, instance=instance, at=at).value)
        return unescape(value)
    if isinstance(value, dict):
        return {key: _resolved(item, context, instance, at) for key, item in value.items()}
    if isinstance(value, list):
        return [_resolved(item, context, instance, at) for item in value]
    return value


class ToolChecks:
    """Each tool's parameter schema made into its check once, for the calls of one set of tools (a set-up's: it
    checks 100,000 calls of a few tools), kept by tool name: the validator is found once per tool, not by the
    schema's JSON text at every call."""

    def __init__(self) -> None:
        self._made: dict[str | None, SchemaCheck | Problem] = {}

    def of(self, plan: CallPlan) -> SchemaCheck | Problem:
        """The check of the call's tool's parameters, or the problem of a schema that cannot be used."""
        made = self._made.get(plan.tool_name)
        if made is None:
            assert plan.tool is not None
            try:
                made = schema_check(plan.tool.parameters)
            except SchemaFault as fault:
                made = _unusable(plan, fault)
            self._made[plan.tool_name] = made
        return made


def _unusable(plan: CallPlan, fault: SchemaFault) -> Problem:
    assert plan.tool_name is not None  # a schema was found: the call names its tool
    return Problem("parameters", unusable_schema(plan.tool_name, fault))


def unusable_schema(name: str, fault: SchemaFault) -> str:
    """A tool whose schema no validator can use, said alike at the tool's message and at each call of it."""
    return f"tool {name!r}: its schema cannot be used: {fault}"


def tool_schema_problem(plan: CallPlan, checks: ToolChecks | None = None) -> Problem | None:
    """The problem of a tool whose parameter schema cannot be used to check anything (invalid, a `$ref` that
    cannot be resolved, ...); None when it can. Every call to such a tool fails before it runs. `checks`: the
    tools' checks made already."""
    assert plan.tool is not None
    made = (checks or ToolChecks()).of(plan)
    return made if isinstance(made, Problem) else None


def parameter_problems(plan: CallPlan, parameters: dict[str, Any], unresolved: frozenset[str] = frozenset(),
                       checks: ToolChecks | None = None) -> list[Problem]:
    """Each way the parameters break the tool's JSON Schema (SPEC 6.1), where it is; a parameter named in
    `unresolved` is not judged yet (not even as missing when required). An invalid tool schema is one problem.
    `checks`: the tools' checks made already."""
    if plan.tool is None:
        return []
    found = _violations(plan, parameters, checks)
    return [found] if isinstance(found, Problem) else _located(found, unresolved)


def _violations(
    plan: CallPlan, parameters: dict[str, Any], checks: ToolChecks | None,
) -> list[ValidationError] | Problem:
    """The schema's violations by the parameters, or the problem of a schema that cannot be used."""
    made = (checks or ToolChecks()).of(plan)
    if isinstance(made, Problem):
        return made
    if made.valid is not None and made.valid(parameters):
        return []  # valid at a glance: most literal calls of a run
    try:
        return made(parameters)
    except SchemaFault as fault:
        return _unusable(plan, fault)


def _located(found: list[ValidationError], unresolved: frozenset[str] = frozenset()) -> list[Problem]:
    problems = []
    for error in sorted(found, key=lambda e: [str(step) for step in e.path]):
        if unresolved and _unresolved_part(error, unresolved):
            continue
        where = json_path(error.absolute_path)
        problems.append(Problem("parameters", f"{where}: {error.message}", where))
    return problems


def _unresolved_part(error: ValidationError, unresolved: frozenset[str]) -> bool:
    """Whether the violation is about a parameter not resolved yet: its value (a `†` text, not what it will be)
    or its absence when required."""
    if error.validator == "required":
        return any(error.message.startswith(repr(name)) for name in unresolved)
    path = error.absolute_path
    return bool(path) and path[0] in unresolved


def check_parameters(plan: CallPlan, resolved: dict[str, Any], checks: ToolChecks | None = None) -> Problem | None:
    """Validate the resolved parameters against the tool's JSON Schema (SPEC 6.1); None when valid or no tool.
    `resolved`: the call resolved (`resolve_call`), or only its parameters (`resolve_parameters`). `checks`: the
    tools' checks made already."""
    return parameters_refusal(plan, parameters_of(resolved), checks)


def parameters_refusal(plan: CallPlan, parameters: dict[str, Any], checks: ToolChecks | None = None) -> Problem | None:
    """`check_parameters` of the call's parameters alone (`resolve_parameters`): the schema that cannot be used,
    or every violation, after "invalid parameters for" the tool (one at `$`, a missing parameter, too)."""
    if plan.tool is None:
        return None
    found = _violations(plan, parameters, checks)
    if isinstance(found, Problem):
        return found
    if not found:
        return None
    text = "; ".join(problem.message for problem in _located(found))
    return Problem("parameters", f"invalid parameters for {plan.tool_name!r}: {text}")


def scoped_context(context: Context, plan: CallPlan) -> list[dict[str, Any]]:
    """The messages the call's scopes allow (SPEC 6.4, 015): data of those kinds, global or of its instance."""
    return scoped_messages(context, plan.scopes, plan.instance)
