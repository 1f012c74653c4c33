"""From exchanges to one context (docs/format.md §10): line the requests up, then write the protocol's messages.

Each later request of one run repeats the earlier messages and the reply before it; `line_up` checks that
and keeps what is new. `build` writes the conversation as a saved request: role messages for the texts,
tool messages for the function schemas, one plan message per assistant turn that called tools, one output
message per tool result (with `_call`, `_date`, `_outputPath` and `_run`), and the last reply as the solution.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any

from ..calls._activities import Activities
from ..calls._calls import copied, plan_call
from ..calls._outputs import output_message
from ..document._context import Context
from ..document._document import Document, Shape
from ..document._json import parse as json_parse
from ..protocol._expressions import lone_reference
from ._chat import ChatMessage, Exchange, ToolCall, ToolRun
from ._jsontext import cut_short, exported_value
from ._problems import Located, Step, go_on, inside

RESERVED_KINDS = frozenset(("data", "error", "meta", "input", "state", "text", "system", "tool", "plan",
                            "advisor", "preset", "_run"))
_NOT_IN_KIND = re.compile(r"[^A-Za-z0-9_-]")
_ABSENT = object()
_NO_ACTIVITIES = Activities()  # an imported call ran in the recorded agent, never here


@dataclass
class Conversation:
    """The messages of one run in order, where each came from, and which exchange each reply belongs to."""

    messages: list[ChatMessage] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)  # where each message first appeared
    replies: dict[int, Exchange] = field(default_factory=dict)  # message index -> the exchange it answered
    tools: list[tuple[int, dict[str, dict[str, Any]]]] = field(default_factory=list)  # definitions new before index
    settings: dict[str, Any] = field(default_factory=dict)
    schema: Any = None
    warnings: list[str] = field(default_factory=list)
    composed_tools: set[str] = field(default_factory=set)  # the document's own (`Exchange.composed_tools`)


def line_up(exchanges: list[Exchange], step: Step = go_on) -> Conversation:
    """One conversation from the exchanges of one run, in order (`step` before each); Located where a request does
    not line up."""
    conversation = Conversation()
    offered: dict[str, dict[str, Any]] = {}
    previous: Exchange | None = None
    for exchange in exchanges:
        step()
        seen = conversation.messages
        if exchange.continues is not None:
            exchange = _continued(exchange, previous, seen)
        if previous is not None and previous.others and conversation.replies.get(len(seen) - 1) is previous:
            _chosen(exchange, previous, conversation)
        if previous is not None and previous.reply is not None and _is_retry(exchange, seen):
            conversation.warnings.append(
                f"{exchange.where}: repeats the request of {previous.where} without its reply: "
                f"taken as a retry, the reply of {previous.where} is left out")
            seen.pop()
            conversation.sources.pop()
            conversation.replies.pop(len(seen), None)
        _check_repeats(exchange, seen)
        changed = {name: schema for name, schema in exchange.tools if offered.get(name) != schema}
        if changed:
            conversation.tools.append((len(seen), changed))
            offered.update(changed)
        conversation.composed_tools |= exchange.composed_tools
        for n in range(len(seen), len(exchange.messages)):
            seen.append(exchange.messages[n])
            conversation.sources.append(inside(exchange.where, f"message {n}"))
        if exchange.reply is None and (exchange is not exchanges[-1] or exchange.failed is not None):
            said = (f"the request failed ({exchange.failed})" if exchange.failed is not None else
                    "no response is recorded (a request that failed, an error logged instead?)")
            last = exchange is exchanges[-1]
            then = "the run ends with it unanswered" if last else "the run goes on from the next one"
            conversation.warnings.append(inside(exchange.where, f"{said}: {then}"))
        if exchange.choices > 1:
            conversation.warnings.append(_choices_said(exchange, 0))
        if exchange.reply is not None:
            conversation.replies[len(seen)] = exchange
            seen.append(exchange.reply)
            conversation.sources.append(inside(exchange.where, "response"))
        if not conversation.settings:
            conversation.settings = dict(exchange.settings)
        if exchange.schema is not None:
            conversation.schema = exchange.schema
        previous = exchange
    return conversation


def _continued(exchange: Exchange, previous: Exchange | None, seen: list[ChatMessage]) -> Exchange:
    """A Responses API request that goes on from the reply before it (`previous_response_id`) sends only what is
    new: the conversation so far comes first (its instructions, sent again, once)."""
    if previous is None or previous.reply is None or previous.response_id != exchange.continues:
        raise Located(f"the request goes on from response {exchange.continues!r} (previous_response_id), which is "
                      "not the reply of the exchange before it: the conversation before it is kept on OpenAI's "
                      "server, not in the file (log every request of the run, with its response)", exchange.where)
    new = exchange.messages
    if new and seen and new[0].role == "system" and new[0].key == seen[0].key:
        new = new[1:]
    return dataclasses.replace(exchange, messages=(*seen, *new))


def _choices_said(exchange: Exchange, chosen: int) -> str:
    taken = "the first is the reply" if not chosen else f"choice {chosen}, which the next request repeats, is the reply"
    return inside(exchange.where, f"the response holds {exchange.choices} choices: {taken}, the others are left out")


def _chosen(exchange: Exchange, previous: Exchange, conversation: Conversation) -> None:
    """The reply of a response of several choices is the one the next request repeats (an agent that picks the best
    of n goes on from it), when that is not the first."""
    seen, at = conversation.messages, len(conversation.messages) - 1
    if len(exchange.messages) <= at or exchange.messages[at].key == seen[at].key:
        return
    for n, (other, finish) in enumerate(previous.others, start=1):
        if other.key == exchange.messages[at].key:
            seen[at] = other
            conversation.replies[at] = dataclasses.replace(previous, reply=other, finish_reason=finish)
            said = conversation.warnings.index(_choices_said(previous, 0))
            conversation.warnings[said] = _choices_said(previous, n)
            return


def _is_retry(exchange: Exchange, seen: list[ChatMessage]) -> bool:
    """The request is the previous one again (its reply was not sent back): a retry."""
    asked = len(seen) - 1
    if len(exchange.messages) < asked:
        return False
    if len(exchange.messages) > asked and exchange.messages[asked].key == seen[asked].key:
        return False  # the reply was sent back
    return all(exchange.messages[n].key == seen[n].key for n in range(asked))


# An agent that keeps only its latest messages, or summarises the older ones, sends requests that do not repeat
# the run: one document cannot hold what each of them saw.
_TRIMMED = ("; an agent that trims or summarises its history does not line up: import the exchanges before this "
            "one, or this one alone")


def _check_repeats(exchange: Exchange, seen: list[ChatMessage]) -> None:
    for n, message in enumerate(seen):
        if n >= len(exchange.messages):
            raise Located(f"the request has {len(exchange.messages)} messages, fewer than the {len(seen)} of the "
                          f"conversation so far: it does not repeat it (message {n} would be {message.describe()})"
                          + _TRIMMED, exchange.where)
        if exchange.messages[n].key != message.key:
            raise Located(f"message {n} does not repeat the conversation so far: expected {message.describe()}, "
                          f"found {exchange.messages[n].describe()}" + _TRIMMED, exchange.where)


# -- the document -----------------------------------------------------------------------------------


@dataclass
class _Turn:
    """An assistant turn that called tools: its plan message and its calls, by call id."""

    index: int  # the plan message's index in the context
    calls: list[dict[str, Any]]
    ids: list[str]
    answered: set[int] = field(default_factory=set)


def build(conversation: Conversation, source: str, runs: list[ToolRun] | None = None) -> Document:
    """The saved request the conversation makes; `runs` (tool spans) add times and results no request showed.

    Tools that ran but that no turn asked for are left out, with a warning in `conversation.warnings`.
    """
    builder = _Builder(conversation, source, _Runs(runs or []))
    document = builder.document()
    conversation.warnings.extend(f"{run.where}: tool {run.name or '?'} ran (call {run.call_id or 'without an id'}), "
                                 "but no model turn asked for it: left out" for run in builder.runs.left)
    return document


class _Runs:
    """Tool spans not yet matched: a call takes the first with its id, else the first without an id and with
    its tool's name (and arguments, when the span kept them)."""

    def __init__(self, runs: list[ToolRun]) -> None:
        self.left = list(runs)

    def take(self, call_id: str, call: dict[str, Any]) -> ToolRun | None:
        run = self.find(call_id, call)
        if run is not None:
            self.left.remove(run)
        return run

    def find(self, call_id: str, call: dict[str, Any]) -> ToolRun | None:
        arguments = {key: value for key, value in call.items() if not key.startswith("_")}
        by_id = (run for run in self.left if call_id and run.call_id == call_id)
        by_name = (run for run in self.left
                   if not run.call_id and run.name == call["_tool"] and run.arguments in (None, arguments))
        return next(by_id, None) or next(by_name, None)


class _Builder:
    def __init__(self, conversation: Conversation, source: str, runs: _Runs) -> None:
        self.conversation = conversation
        self.source = source
        self.runs = runs
        self.context: list[dict[str, Any]] = []
        self.turns: list[_Turn] = []
        self.kinds: set[str] = set()
        self.solution: dict[str, Any] | None = None

    def document(self) -> Document:
        conversation = self.conversation
        if conversation.settings:
            self.context.append({"type": "preset", **copy.deepcopy(conversation.settings)})
        tools = dict(conversation.tools)
        inferred = _inferred_tools(conversation)
        if inferred:  # before the first message: the run may call them from its first turn
            tools[0] = {**inferred, **tools.get(0, {})}
            conversation.warnings.extend(f"tool {name} has no recorded definition: its schema is inferred from "
                                         "its calls" for name in inferred)
        last = len(conversation.messages) - 1
        for index, message in enumerate(conversation.messages):
            if index in tools:
                self.context.append({"type": "tool", "tool": {
                    name: copy.deepcopy(schema) if name in conversation.composed_tools else _answered(schema)
                    for name, schema in tools[index].items()}})
            where = conversation.sources[index]
            if message.role == "assistant":
                self._assistant(message, conversation.replies.get(index), where, final=index == last)
            elif message.role == "tool":
                self._result(message, where)
            else:
                self.context.append(_role_message(message))
        self._missing_results()
        envelope: dict[str, Any] = {"context": self.context}
        if conversation.schema is not None:
            envelope["schema"] = conversation.schema
        if self.solution is not None:
            envelope["solution"] = self.solution
        return Document(Context(self.context), Shape.REQUEST, schema=conversation.schema, solution=self.solution,
                        envelope=envelope)

    def _assistant(self, message: ChatMessage, exchange: Exchange | None, where: str, *, final: bool) -> None:
        audit = {"_model": exchange.summary(self.source)} if exchange is not None else {}
        if message.tool_calls and final and not self._ran(message):  # not run yet: the solution, to run next
            calls = self._calls(message, where)
            if _has_content(message.content):
                self.context.append({"role": "assistant", "content": message.content})
            self.solution = {"calls": calls, "output": None, **audit}
        elif message.tool_calls:
            self._turn(message, audit, where)
        elif final:  # the final output; without `calls`, the last plan stays the one the calls panel shows
            cut = exchange.finish_reason if exchange is not None else None
            place = exchange.where if exchange is not None else where  # (a request's last message: its place)
            if cut in _CUT:
                self.conversation.warnings.append(inside(place, f"the last reply {_CUT[cut]} (finish_reason {cut!r})"))
            if message.refusal is not None:  # no output: the refusal stays in `_model.refusal`
                self.conversation.warnings.append(inside(place, (
                    f"the model refused ({message.refusal[:80]!r}): no final output; the refusal is kept in the "
                    "solution's _model.refusal")))
            self.solution = {"output": self._final_output(message.content, exchange), **audit}
        else:
            self.context.append({**_role_message(message), **audit})

    def _ran(self, message: ChatMessage) -> bool:
        """A tool span ran one of the message's calls (the trace goes on after its last reply)."""
        return any(self.runs.find(call.id, {"_tool": call.name, **call.arguments}) for call in message.tool_calls)

    def _turn(self, message: ChatMessage, audit: dict[str, Any], where: str) -> None:
        if _has_content(message.content):
            self.context.append({"role": "assistant", "content": message.content})
        calls = self._calls(message, where)
        self.turns.append(_Turn(len(self.context), calls, [call.id for call in message.tool_calls]))
        # A trace gives no identity back (016): a model's plan has no meta message of its own before it.
        self.context.append({"type": "plan", "plan": calls, **audit, **({"_turnMeta": False} if audit else {})})

    def _calls(self, message: ChatMessage, where: str) -> list[dict[str, Any]]:
        """The plan's calls of one assistant turn; ids it repeats are said (which tool message answers which
        call is then only their order)."""
        first: dict[str, int] = {}
        for n, call in enumerate(message.tool_calls):
            if call.id and first.setdefault(call.id, n) != n:
                self.conversation.warnings.append(inside(where, (
                    f"tool calls {first[call.id]} and {n} ({call.name}) share the id {call.id!r}: the results "
                    "answering it are taken in the calls' order")))
        return [self._call(call, len(self.turns), n, where) for n, call in enumerate(message.tool_calls)]

    def _call(self, call: ToolCall, turn: int, n: int, where: str) -> dict[str, Any]:
        """The call as the plan holds it. An `_outputPath` the model gave (008: the call says where its result
        goes) is kept when it names one destination; any other is replaced by a kind of the call's own, and
        said."""
        given = call.arguments.get("_outputPath", _ABSENT)
        if isinstance(given, str) and (own := lone_reference(given)) is not None:
            self.kinds.add(own[0])  # no call after it is given this kind as its own
            path = given
        else:
            path = "†" + self._kind(call.id, turn, n)
            if given is not _ABSENT:
                self.conversation.warnings.append(inside(where, (
                    f"tool call {n} ({call.name}) gives _outputPath {given!r}, which is not one destination "
                    f"(†kind.path): its result is written to {path} instead")))
        return {"_tool": call.name, **_literal(call.arguments), "_outputPath": path}

    def _kind(self, call_id: str, turn: int, n: int) -> str:
        """The kind a call's result is written to: its id, else its turn and place (docs/format.md §10)."""
        kind = _NOT_IN_KIND.sub("_", call_id)
        if not kind or kind in RESERVED_KINDS or kind in self.kinds:
            kind = f"call_{turn + 1}_{n + 1}"
        while kind in self.kinds:
            kind += "_"
        self.kinds.add(kind)
        return kind

    def _final_output(self, content: Any, exchange: Exchange | None) -> Any:
        """The last reply's content as the output: a JSON text parsed when the request asked for a JSON schema (any
        other text kept). ContextDeck's export marks the output it wrote as its JSON text, read back already: any
        other text of it is the text it was."""
        if not isinstance(content, str) or self.conversation.schema is None or (exchange is not None
                                                                                and exchange.exported):
            return content
        try:
            return json_parse(content)
        except ValueError:
            return content

    def _find(self, call_id: str | None) -> tuple[_Turn, int] | None:
        """The latest unanswered call with this id (ids repeat across turns in some logs)."""
        for turn in reversed(self.turns):
            for n, known in enumerate(turn.ids):
                if known == call_id and n not in turn.answered:
                    return turn, n
        return None

    def _result(self, message: ChatMessage, where: str) -> None:
        found = self._find(message.tool_call_id)
        if found is None:
            made = any(message.tool_call_id in turn.ids for turn in self.turns)
            waiting = [f"{turn.ids[n]!r} ({turn.calls[n]['_tool']})" for turn in self.turns[-1:]
                       for n in range(len(turn.ids)) if n not in turn.answered]
            raise Located(f"a tool message answers call {message.tool_call_id!r}, which " + (
                "an earlier tool message answered already" if made else "no earlier assistant message made") + (
                f" (the calls waiting for a result: {', '.join(waiting)})" if waiting else
                " (no call is waiting for a result)"), where)
        turn, n = found
        turn.answered.add(n)
        run = self.runs.take(turn.ids[n], turn.calls[n])
        self.context.append(self._output(turn, n, self._result_of(message.content, turn, n, where, run), run))

    def _output(self, turn: _Turn, n: int, value: Any, run: ToolRun | None) -> dict[str, Any]:
        """The result written as a run writes a call's: in its instance's layer (013), with its method (008)."""
        plan = plan_call(n, copied(turn.calls[n]), {}, _NO_ACTIVITIES)
        assert plan.destinations is not None  # (`_call` made its `_outputPath` one destination)
        date = run.ended if run is not None else self._turn_date(turn)
        return output_message(plan, plan.writes[0], value, date, _run_audit(n, run))

    def _result_of(self, content: Any, turn: _Turn, n: int, where: str, run: ToolRun | None) -> Any:
        """A tool's result as data; one that is JSON cut short (a trace's attribute length limit) is kept as its
        text, and said: the model read the whole of it. ContextDeck's own tool span (`run.result_json` not None)
        marks a result that is a value's JSON text: a text it does not mark is that text, whatever it reads as."""
        if run is not None and run.result_json is not None:
            if not run.result_json or not isinstance(content, str):
                return content
            return exported_value(content, f"the result of tool call {turn.ids[n] or n + 1!r} "
                                  f"({turn.calls[n]['_tool']}) was exported as the JSON text of its value",
                                  lambda said: self.conversation.warnings.append(inside(where, said)))
        value = _result_value(content)
        if isinstance(value, str) and cut_short(value):
            self.conversation.warnings.append(inside(where, (
                f"the result of tool call {turn.ids[n] or n + 1!r} ({turn.calls[n]['_tool']}) is JSON cut short (an "
                "attribute length limit?): kept as its text, which is not all the model read")))
        return value

    def _turn_date(self, turn: _Turn) -> str | None:
        date = self.context[turn.index].get("_model", {}).get("date")
        return date if isinstance(date, str) else None

    def _missing_results(self) -> None:
        """Tool spans whose result no later request showed (the trace ends after them): their outputs."""
        for turn in self.turns:
            for n, call_id in enumerate(turn.ids):
                if n in turn.answered:
                    continue
                run = self.runs.take(call_id, turn.calls[n])
                if run is None:  # the API refuses such a request: a call the log or the trace lost
                    self.conversation.warnings.append(
                        f"tool call {call_id or n + 1!r} ({turn.calls[n]['_tool']}) has no result, in a later "
                        "message or a tool span: the call is kept without an output")
                    continue
                turn.answered.add(n)
                if run.error is not None:
                    self.context.append(_error(turn.calls[n], run, n))
                elif run.has_result:
                    self.context.append(self._output(turn, n, self._result_of(run.result, turn, n, run.where, run),
                                                     run))


def _has_content(content: Any) -> bool:
    """Whether an assistant's content before its calls says anything: a text that is not blank, or any other value
    (content parts; a value ContextDeck's export wrote as its JSON text)."""
    return content is not None and (not isinstance(content, str) or bool(content.strip()))


def _role_message(message: ChatMessage) -> dict[str, Any]:
    """A text message; a refusal is the text the model read back in the later requests. A content of null stays
    null."""
    content = message.refusal if message.content is None and message.refusal is not None else message.content
    result: dict[str, Any] = {"role": message.role, "content": content}
    if message.name is not None:
        result["name"] = message.name
    return result


# Why a final reply may be no whole answer, by the finish reason the API gave.
_CUT = {"length": "was cut at its token limit: its output may be incomplete",
        "content_filter": "was stopped by the content filter: its output may be incomplete"}


def _inferred_tools(conversation: Conversation) -> dict[str, dict[str, Any]]:
    """A schema for each tool the run called that no request defined: GenAI records definitions only when asked
    (`gen_ai.tool.definitions` is opt-in), and a document that offers no tool lets no model call one."""
    defined = {name for _, changed in conversation.tools for name in changed}
    seen: dict[str, set[str]] = {}
    for message in conversation.messages:
        for call in message.tool_calls:
            if call.name not in defined:
                # (the import writes each call's `_outputPath` itself: the rule `_answered` adds, required)
                seen.setdefault(call.name, set()).update(key for key in call.arguments if key != "_outputPath")
    return {name: {"description": "No definition was recorded: inferred from the calls in the trace.",
                   "type": "object", "properties": {key: {} for key in sorted(keys)}}
            for name, keys in seen.items()}


OUTPUT_PATH = {"type": "string", "pattern": "^†",
               "description": "where the result goes, for you to read: a kind of its own, as †result_1"}


def _answered(schema: dict[str, Any]) -> dict[str, Any]:
    """A function's schema as a tool whose every call says where its result goes (`_outputPath`, required).

    Every call of the recorded agent got its result back; a model driving the document on must be able to
    write the same, even where the function closes its parameters (`additionalProperties: false`, as
    OpenAI's strict functions must)."""
    tool = copy.deepcopy(schema)
    properties = tool.get("properties")
    if not isinstance(properties, dict) or "_outputPath" in properties:
        return tool
    tool["properties"] = {**properties, "_outputPath": OUTPUT_PATH}
    required = tool.get("required")
    tool["required"] = [*(required if isinstance(required, list) else []), "_outputPath"]
    return tool


def _literal(value: Any) -> Any:
    """Arguments as call parameters: a string starting with † is written †† so it stays text (SPEC 3)."""
    if isinstance(value, str):
        return "†" + value if value.startswith("†") else value
    if isinstance(value, list):
        return [_literal(item) for item in value]
    if isinstance(value, dict):
        return {key: _literal(item) for key, item in value.items()}
    return value


def _result_value(content: Any) -> Any:
    """A tool's result as data: JSON text holding an object or an array is that value; anything else as is."""
    if isinstance(content, str) and content.lstrip()[:1] in ("{", "["):
        try:
            return json_parse(content)
        except ValueError:
            return content
    return content


def _run_audit(n: int, run: ToolRun | None) -> dict[str, Any]:
    audit: dict[str, Any] = {"call": n}
    if run is not None and run.started is not None:
        audit["started"] = run.started
    if run is not None and run.seconds is not None:
        audit["seconds"] = run.seconds
    return audit


def _error(call: dict[str, Any], run: ToolRun, n: int) -> dict[str, Any]:
    message: dict[str, Any] = {"type": "error", "data": {"call": copy.deepcopy(call),
                                                         "error": {"type": "tool", "message": run.error}}}
    if run.ended is not None:
        message["_date"] = run.ended
    message["_run"] = _run_audit(n, run)
    return message
