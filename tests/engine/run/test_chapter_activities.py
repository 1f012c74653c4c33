"""Chapters 003, 012 (failure), 015 (scopes) and 202: their examples run as the chapters say."""

from chapter_support import errors_of, run_chapter
from exec_support import execute, registry

from contextdeck.engine import Mode, Status


def test_003_weather_check_result_is_wrapped_at_the_output_path() -> None:
    """003: an activity's plain return value becomes a data message written at the call's `_outputPath`."""
    seen = {}

    def weather(call, tool, context):
        seen["tool"] = tool.name
        return {"temperature": 21, "conditions": f"sunny in {call['location']}"}

    document, execution = run_chapter("003_weather_check.json", registry(weatherCheck=weather))
    assert seen == {"tool": "weatherCheck"}
    written = document.context.messages[-1]
    assert written["data"] == {"weather": {"temperature": 21, "conditions": "sunny in Lisbon"}}
    assert written["_call"] == document.solution["calls"][0]
    assert execution.state(0).status is Status.DONE


def test_003_activity_resolution_rules() -> None:
    """003: an explicit `_activity` wins, else the same-name activity, else latent; `_activity: ""` is latent."""
    activities = registry(byName=lambda *a: "by name", sharedImpl=lambda *a: "shared",
                          emptyField=lambda *a: "must not run")
    document, execution = run_chapter("003_activity_resolution.json", activities)
    modes = [plan.mode for plan in execution.plans]
    assert modes == [Mode.EXPLICIT, Mode.EXPLICIT, Mode.LATENT, Mode.LATENT]
    resolve = document.context.resolve
    assert resolve("†state.byName").value == "by name"
    assert resolve("†state.explicitField").value == "shared"
    assert resolve("†state.emptyField").value == "latent answer"
    assert resolve("†state.noActivity").value == "latent answer"
    assert errors_of(document) == []


def test_003_activity_picks_a_branch_by_returning_a_message() -> None:
    """003: an activity returning `{data: {success: ...}}` writes the `†state.success` branch."""
    def charge(call, tool, context):
        return {"type": "state", "data": {"success": {"charged": call["amount"]}}}

    document, _ = run_chapter("003_branching_message.json", registry(charge=charge))
    assert document.context.resolve("†state.success").value == {"charged": 50.0}
    assert not document.context.resolve("†state.error").found


def test_012_failure_populates_state_error_and_blocks_the_happy_path() -> None:
    """012: processPayment fails, the engine populates †state.error, confirmOrder keeps waiting for the receipt."""
    def declined(call, tool, context):
        raise ValueError("Your card was declined.")

    document, execution = run_chapter("012_handling_failure.json", registry(processPayment=declined))
    error = document.context.resolve("†state.error")
    assert error.value == {"type": "ValueError", "message": "Your card was declined."}
    assert not document.context.resolve("†state.receipt").found
    assert errors_of(document) == []  # the plan's branch took the failure: no error message besides
    assert execution.state(0).status is Status.FAILED
    assert execution.state(0).outputs  # what it wrote is the error branch
    assert execution.state(1).status is Status.BLOCKED
    assert execution.state(1).waiting_for == ("†state.receipt",)


def test_failure_without_a_branch_is_an_error_message() -> None:
    """A failing call whose `_outputPath` has no `||` branch reports an error message, as before (010)."""
    def boom(call, tool, context):
        raise KeyError("nope")

    context, _, report = execute([], [{"_tool": "t", "_outputPath": "†state.r"}], registry(t=boom))
    assert [e["data"]["error"]["type"] for e in report.errors] == ["KeyError"]
    assert not context.resolve("†state.r").found


def test_reader_of_the_error_branch_runs_after_the_failure() -> None:
    """A call that reads †state.error runs once the failing writer has filled it."""
    def declined(call, tool, context):
        raise ValueError("declined")

    calls = [{"_tool": "pay", "_outputPath": "†state.receipt || †state.error"},
             {"_tool": "report", "error": "†state.error", "_outputPath": "†state.reported"}]
    context, execution, _ = execute([], calls, registry(pay=declined, report=lambda call, *a: {"saw": call["error"]}))
    assert context.resolve("†state.reported").value == {"saw": {"type": "ValueError", "message": "declined"}}
    assert execution.state(1).status is Status.DONE


def test_015_const_scopes_provision_the_context() -> None:
    """015: a tool `_scopes: {const: ["input"]}` provisions the input; a call asking for others is refused."""
    received = []

    def summarise(call, tool, context):
        received.append(context)
        return "ok"

    document, execution = run_chapter("015_static_scopes.json", registry(summarise=summarise))
    assert received == [[{"type": "input", "text": "Bonjour le monde"}]]
    assert execution.plans[0].scopes == ("input",)
    assert execution.state(1).status is Status.FAILED
    assert errors_of(document) == [{"type": "scopes", "message":
                                    "the tool provisions _scopes ['input']; the call asks for ['state']"}]


def test_015_enum_scopes_limit_what_a_call_may_request() -> None:
    """015: `items.enum` lets a call request state or input; asking for `secrets` is an error before running."""
    received = []

    def inspect_(call, tool, context):
        received.append(context)
        return "seen"

    document, execution = run_chapter("015_dynamic_scopes.json", registry(inspect=inspect_))
    assert received == [[{"type": "state", "stored": 1}]]
    assert execution.state(1).status is Status.FAILED
    [error] = errors_of(document)
    assert error["type"] == "scopes"
    assert "'secrets' is not one of ['state', 'input']" in error["message"]
    assert not document.context.resolve("†state.leak").found


def test_015_scoped_state_reaches_the_activity() -> None:
    """015: logEvent's activity reads the userId from the state its `_scopes` passed it."""
    tracked = []

    def log_event(call, tool, context):
        state = next(m for m in context if m["type"] == "state")
        tracked.append((call["eventName"], state["userId"]))

    run_chapter("015_context_to_activity.json", registry(logEvent=log_event))
    assert tracked == [("user_login", "user_A")]


def test_015_scopes_are_instance_aware() -> None:
    """015/013: a call targeting an instance receives only that instance's state."""
    received = {}

    def translate(call, tool, context):
        received[call["_instance"]] = [m["text"] for m in context]
        return "done"

    run_chapter("015_instanced_scopes.json", registry(translate=translate))
    assert received == {"①": ["Hello"], "②": ["Bonjour"]}


def test_202_array_solution_runs_its_calls() -> None:
    """202: a solution that is an array of calls runs them (it is not silently nothing)."""
    document, execution = run_chapter("202_array_solution.json")
    assert document.context.resolve("†state.sentiment").value == {"sentiment": "positive", "confidence": 0.99}
    assert execution.state(0).status is Status.DONE

