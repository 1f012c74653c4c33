"""Chapters 010, 012 and 013: ticks, the final output, plans carried between turns, lazy plans, instances."""

import asyncio

import pytest
from chapter_support import chapter, errors_of, run_chapter
from exec_support import CLOCK, registry

from contextdeck.engine import Context, Document, Execution, Loop, LoopStatus, Status, output_problem, validate


def last_plan(context):
    return [m for m in context.messages if m["type"] == "plan"][-1]


def loop_of(name: str, activities=None, **options) -> Loop:
    return Loop(chapter(name), activities=activities, clock=CLOCK, **options)


def test_012_one_step_ahead_carries_the_plan_and_ends_on_the_output() -> None:
    """012: tick 1 populates the state and its calls become the plan; tick 2's output ends the loop."""
    activities = registry(checkBillingHistory=lambda *a: {"orders": 5, "lastChargeback": "2025-09-10"},
                          issueRefund=lambda call, *a: {"refunded": call["amount"]})
    loop = loop_of("012_one_step_ahead.json", activities)
    first_calls = loop.document.solution["calls"]
    assert asyncio.run(loop.run()) is LoopStatus.WAITING_FOR_TURN
    context = loop.document.context
    assert context.resolve("†state.billingHistory").value == {"orders": 5, "lastChargeback": "2025-09-10"}
    assert last_plan(context) == {"type": "plan", "plan": first_calls}  # the solution became the plan
    assert loop.document.solution is None  # consumed: the saved document is the next request
    second = {"calls": [{"_tool": "issueRefund", "customerId": "†input.customerId", "amount": "†input.amount"}],
              "output": {"confirmationId": "refund_xyz789", "message": "The refund has been processed successfully."}}
    loop.take_turn(second)
    assert asyncio.run(loop.run()) is LoopStatus.FINISHED
    assert loop.output == second["output"]
    assert [tick.number for tick in loop.ticks] == [1, 2]
    assert loop.document.solution == second  # the final solution stays, with its output


def test_012_adjusting_a_plan_makes_the_new_calls_the_plan() -> None:
    """012: the solution discards the old plan; its calls (bookFlight, findPetFriendlyHotel) become the plan."""
    loop = loop_of("012_adjusting_a_plan.json")
    asyncio.run(loop.run())
    plans = [m for m in loop.document.context.messages if m["type"] == "plan"]
    assert [c["_tool"] for c in plans[-1]["plan"]] == ["bookFlight", "findPetFriendlyHotel"]
    assert loop.status is LoopStatus.WAITING_FOR_TURN


def test_012_handling_failure_over_two_turns() -> None:
    """012: processPayment fails into †state.error; the replanned turn reports it and ends with Failed."""
    def declined(call, tool, context):
        raise ValueError("Your card was declined.")

    reported = []
    activities = registry(processPayment=declined, reportFailure=lambda call, *a: reported.append(call["error"]))
    turns = iter([{"calls": [{"_tool": "reportFailure", "error": "†state.error"}], "output": {"status": "Failed"}}])
    loop = loop_of("012_handling_failure.json", activities, turns=lambda document: next(turns, None))
    assert asyncio.run(loop.run()) is LoopStatus.FINISHED
    assert reported == [{"type": "ValueError", "message": "Your card was declined."}]
    assert loop.output == {"status": "Failed"}
    plan = [m for m in loop.document.context.messages if m["type"] == "plan"]
    assert [c["_tool"] for c in plan[0]["plan"]] == ["processPayment", "confirmOrder"]  # the obsolete plan


def test_012_schema_guided_plan_runs_in_data_flow_order() -> None:
    """012: detectLanguage → isEnglish → translateText, wired through the state, whatever the listed order."""
    order = []

    def step(name, value):
        def run(call, tool, context):
            order.append(name)
            return value
        return run

    activities = registry(detectLanguage=step("detectLanguage", "fr"), isEnglish=step("isEnglish", False),
                          translateText=step("translateText", "Hello world"))
    document, _ = run_chapter("012_schema_guided_run.json", activities)
    assert order == ["detectLanguage", "isEnglish", "translateText"]
    assert document.context.resolve("†state.translatedText").value == "Hello world"


def test_012_second_call_waits_for_the_first() -> None:
    """012: summarizeProfile cannot run until fetchUserProfile has populated †state.userProfileData."""
    activities = registry(fetchUserProfile=lambda call, *a: {"name": call["userName"]},
                          summarizeProfile=lambda call, *a: f"{call['profile']['name']} is a user")
    document = chapter("012_fetch_then_summarize.json")
    execution = Execution(document, activities=activities, clock=CLOCK)
    assert execution.state(1).status is Status.BLOCKED
    assert execution.state(1).waiting_for == ("†state.userProfileData",)
    asyncio.run(execution.run())
    assert document.context.resolve("†state.profileSummary").value == "Alice is a user"


def test_012_lazy_plan_waits_until_approved() -> None:
    """012: in lazy mode the plan is validated but not executed; approved, it runs and keeps its branches."""
    ran = []
    activities = registry(detectLanguage=lambda *a: ran.append("detect") or "fr",
                          verifyUser=lambda *a: ran.append("verify") or {"ok": True})
    loop = loop_of("012_lazy_plan.json", activities)
    assert asyncio.run(loop.run()) is LoopStatus.LAZY
    assert ran == []
    assert loop.execution.refused == ()  # validated: no cycle
    assert loop.execution.plans[1].output_path == "†data.user.verified || †data.user.failed"
    loop.approve_plan()
    assert asyncio.run(loop.run()) is LoopStatus.WAITING_FOR_TURN
    assert sorted(ran) == ["detect", "verify"]
    assert last_plan(loop.document.context)["mode"] == "lazy"  # the turn's plan stays lazy


def test_lazy_plan_refuses_a_step() -> None:
    """A lazy plan's calls cannot be stepped before approval either."""
    document = chapter("012_lazy_plan.json")
    execution = Execution(document, clock=CLOCK)
    assert execution.ready() == []
    with pytest.raises(ValueError, match="lazy"):
        asyncio.run(execution.step())


def test_a_lazy_plan_appends_no_error_before_it_is_approved() -> None:
    """012: a lazy plan is a checkpoint that runs nothing: a call refused up front is failed (what `validate`
    says), but its error message is appended only by the tick that runs the approved plan."""
    plan = [{"_tool": "t", "_output": 1, "_outputPath": "†state.a"}, {"_tool": "t", "_outputPath": "†state..b"}]
    document = Document(Context([{"type": "plan", "mode": "lazy", "plan": plan}]))
    execution = Execution(document, clock=CLOCK)
    assert asyncio.run(execution.run()).lazy
    assert len(document.context) == 1
    assert execution.states[1].status is Status.FAILED
    execution.approve_plan()
    asyncio.run(execution.run())
    assert [m["type"] for m in document.context.messages[1:]] == ["data", "error"]
    assert document.context.messages[2]["data"]["call"] == plan[1]


def test_012_a_mode_that_is_neither_eager_nor_lazy_is_a_problem() -> None:
    """012 knows two modes: a misspelt one (`Lazy`) would run the plan eagerly, so validate says so at the plan
    message; `eager`, `lazy` and no mode at all are fine."""
    plan = {"type": "plan", "plan": []}
    context = Context([{**plan, "mode": "Lazy"}, plan, {**plan, "mode": "eager"}, {**plan, "mode": "lazy"}])
    assert [(p.message_index, p.path, p.reason) for p in validate(context)] == [
        (0, "plan", "'mode' must be 'eager' or 'lazy', not 'Lazy': the plan would run eagerly")]


def test_013_an_instance_on_a_plan_message_is_a_warning() -> None:
    """013: a plan is never instanced (one global template); an `_instance` on the plan message is ignored,
    so validate warns that it belongs on the calls."""
    context = Context([{"type": "plan", "_instance": "①", "plan": []}, {"type": "plan", "plan": []}])
    assert [(p.message_index, p.reason, p.severity) for p in validate(context)] == [
        (0, "a plan is never instanced (013): its _instance is ignored; give each call its _instance", "warning")]


def test_013_an_instance_on_a_text_tool_or_preset_message_is_a_warning() -> None:
    """013 instances data messages; a text (SPEC 5 passes it as it is), a tool or a preset (the whole request's)
    with `_instance` would otherwise be taken for one instance's in silence: validate warns at each."""
    context = Context([{"type": "text", "_instance": "①", "text": "for ① only?"},
                       {"role": "user", "content": "hi", "_instance": "②"},
                       {"type": "tool", "_instance": "①", "tool": {"t": {"type": "object"}}},
                       {"type": "preset", "_instance": "①", "model": "m"},
                       {"type": "state", "_instance": "①", "x": 1}])
    assert [(p.message_index, p.path, p.severity) for p in validate(context)] == [
        (0, "text", "warning"), (1, "text", "warning"), (2, "tool", "warning"), (3, "preset", "warning")]
    assert validate(context)[0].reason == ("a text message is never instanced: its _instance is ignored (013 "
                                           "instances data)")


def test_013_an_instance_on_an_advisor_message_is_a_warning() -> None:
    """017 gives an advisor no `_instance` of its own (`isInstanced` asks its advice per instance): one on the
    advisor message is ignored, so validate warns, and says what does instance its advice."""
    context = Context([{"type": "advisor", "id": "risk", "_instance": "①", "schema": {"type": "object"}},
                       {"type": "advisor", "id": "cost", "isInstanced": True, "schema": {"type": "object"}},
                       {"type": "state", "_instance": "①", "x": 1}])
    assert [(p.message_index, p.path, p.severity, p.reason) for p in validate(context)] == [
        (0, "advisor", "warning", "an advisor message is never instanced: its _instance is ignored (013 instances "
                                  "data); 'isInstanced': true asks for its advice per instance (017)")]


def test_010_calls_and_output_in_one_step_run_then_stop() -> None:
    """010: a solution with calls and an output runs its calls, and the output ends the loop."""
    loop = loop_of("010_calls_and_output.json")
    assert asyncio.run(loop.run()) is LoopStatus.FINISHED
    assert loop.document.context.resolve("†state.greeting").value == "Hello, Jane"
    assert loop.output == {"summary": "Greeted Jane."}


def test_010_invalid_output_is_an_error_and_the_loop_goes_on() -> None:
    """010: an output that breaks the request schema is not accepted: an error message, and another turn."""
    document = chapter("010_calls_and_output.json")
    document.solution["output"] = {"summary": 42}
    loop = Loop(document, clock=CLOCK)
    assert asyncio.run(loop.run()) is LoopStatus.WAITING_FOR_TURN
    [error] = [m["data"] for m in document.context.messages if m["type"] == "error"]
    problem = "the output does not meet the request schema: $.summary: 42 is not of type 'string'"
    assert error == {"output": {"summary": 42}, "error": {"type": "output", "message": problem}}
    assert loop.ticks[0].output_problem is not None


def test_output_is_checked_against_the_output_part_of_a_solution_schema() -> None:
    """A composed schema (meta/calls/output) checks the output against `properties.output`."""
    schema = {"type": "object", "properties": {"calls": {"type": "array"}, "output": {
        "type": ["object", "null"], "properties": {"summary": {"type": "string"}}, "required": ["summary"]}}}
    assert output_problem(schema, {"summary": "ok"}) is None
    assert "'summary' is a required property" in output_problem(schema, {})
    assert output_problem(None, {"anything": 1}) is None


def test_turns_from_a_provider_until_it_has_none() -> None:
    """The loop asks `turns` for each next turn, sees the request as it stands, and stops when it gives None."""
    seen = []

    def provider(document: Document):
        seen.append([m["type"] for m in document.context.messages])
        return None

    loop = Loop(Document(Context([{"type": "input", "q": 1}])), turns=provider, clock=CLOCK)
    assert loop.status is LoopStatus.WAITING_FOR_TURN  # nothing to run: it starts with the model's turn
    assert asyncio.run(loop.run()) is LoopStatus.WAITING_FOR_TURN
    assert seen == [["input"]]


def test_a_turn_must_be_a_solution() -> None:
    """A turn that is not a solution is refused with a clear message, and nothing changes."""
    loop = Loop(Document(Context([])), clock=CLOCK)
    with pytest.raises(ValueError, match="a turn is a solution"):
        loop.take_turn("calls please")
    with pytest.raises(ValueError, match="'calls' must be an array"):
        loop.take_turn({"calls": {}})
    assert loop.status is LoopStatus.WAITING_FOR_TURN


def test_array_document_takes_turns_as_plans() -> None:
    """A bare-array document has no solution slot: each turn's calls are carried into a plan message."""
    loop = Loop(Document(Context([])), clock=CLOCK)
    loop.take_turn([{"_tool": "note", "_outputPath": "†state.n", "_output": 1}])
    asyncio.run(loop.run())
    assert loop.document.context.resolve("†state.n").value == 1
    assert last_plan(loop.document.context)["plan"][0]["_tool"] == "note"


def test_013_moderation_calls_target_their_instances() -> None:
    """013: each moderateComment call runs once, for its own instance, seeing that instance's comment."""
    seen = {}

    def moderate(call, tool, context):
        seen[call["_instance"]] = (call["decision"], [m["comment"] for m in context])

    document = chapter("013_moderation_batch.json")
    for call in document.solution["calls"]:
        call["_scopes"] = ["input"]
    execution = Execution(document, activities=registry(moderateComment=moderate), clock=CLOCK)

    async def go():
        await execution.run()
        await execution.drain()

    asyncio.run(go())
    assert seen == {"①": ("approve", ["This is a great post!"]), "②": ("approve", ["I disagree with this..."]),
                    "③": ("reject", ["This is spam."])}


def test_013_one_plan_runs_across_all_instances() -> None:
    """013: a global plan over instanced inputs runs once per instance; a call touching no instanced kind once."""
    activities = registry(analyzeSentiment=lambda call, *a: "negative" if "spam" in call["comment"] else "positive",
                          checkKeywords=lambda call, *a: any(w in call["comment"] for w in call["forbidden"]))
    document, execution = run_chapter("013_one_plan_all_instances.json", activities)
    resolve = document.context.resolve
    assert [resolve("†state.flagged", instance=i).value for i in "①②③"] == [False, False, True]
    assert resolve("†state.sentiment", instance="③").value == "negative"
    assert not resolve("†state.flagged").found  # nothing leaked into the global layer
    assert len(execution.states) == 7  # 3 + 3 instanced copies, and notifyModerators once
    assert [s.call.get("_instance") for s in execution.states] == ["①", "②", "③", "①", "②", "③", None]
    assert all(s.status is Status.DONE for s in execution.states)
    assert errors_of(document) == []


def test_an_instance_a_run_writes_first_gets_its_copies_from_the_next_set_up() -> None:
    """013 names the instances by their data: a global call is copied for those the context has when the plan is
    set up. An instance first written by the run itself (a call targeted at it) gets its copy of the global call
    when the document is run again, as a new call; the copies that ran are not repeated."""
    plan = [{"_tool": "t", "_instance": "②", "_output": 1, "_outputPath": "†state.mine"},
            {"_tool": "g", "_output": 2, "_outputPath": "†state.all"}]
    context = Context([{"type": "state", "_instance": "①", "data": {}}, {"type": "plan", "plan": plan}])
    first = Execution(context, clock=CLOCK)
    asyncio.run(first.run())
    assert [(s.call["_tool"], s.call.get("_instance")) for s in first.states] == [("t", "②"), ("g", "①")]
    second = Execution(context, clock=CLOCK)
    assert [(s.call["_tool"], s.call.get("_instance"), s.status) for s in second.states] == [
        ("t", "②", Status.DONE), ("g", "①", Status.DONE), ("g", "②", Status.READY)]


def test_013_global_input_targets_one_instance() -> None:
    """013: updateTask for employee_B reads and replaces B's state only; employee_A is unaffected."""
    def update(call, tool, context):
        return {**call["output"], "task": call["newTask"], "status": call["newStatus"]}

    document, _ = run_chapter("013_global_input_instanced_state.json", registry(updateTask=update))
    resolve = document.context.resolve
    assert resolve("†state", instance="employee_B").value == {
        "task": "Finalize the quarterly report", "status": "High Priority"}
    assert resolve("†state", instance="employee_A").value == {"task": "Draft initial proposal", "status": "In Progress"}


def test_a_document_saved_while_waiting_for_a_turn_waits_again() -> None:
    """Reopened after a tick, the plan's calls have their record: the loop waits for the next turn."""
    activities = registry(checkBillingHistory=lambda *a: {"orders": 5}, issueRefund=lambda *a: {"ok": True})
    loop = loop_of("012_one_step_ahead.json", activities)
    asyncio.run(loop.run())
    count = len(loop.document.context)
    again = Loop(Document(Context(loop.document.context.messages), loop.document.shape, loop.document.schema),
                 activities=activities, clock=CLOCK)
    assert again.status is LoopStatus.WAITING_FOR_TURN
    assert len(again.document.context) == count  # no second plan, nothing run again


def test_a_bare_context_whose_last_plan_holds_the_output_is_finished() -> None:
    """010: the final output a bare context keeps in its plan message ends the loop again: no turn is asked for,
    nothing is appended."""
    messages = [{"type": "text", "role": "user", "text": "Say done."}, {"type": "plan", "plan": [], "output": "done"}]
    asked = []
    loop = Loop(Document(Context(messages)), turns=asked.append, clock=CLOCK)
    assert asyncio.run(loop.run()) is LoopStatus.FINISHED
    assert loop.output == "done"
    assert asked == []
    assert loop.document.context.messages == messages


def test_a_bare_plans_calls_run_before_its_output_ends_the_loop() -> None:
    """010: a plan saved with calls still to run and an output runs them, then its output ends the loop."""
    plan = {"type": "plan", "plan": [{"_tool": "note", "_outputPath": "†state.n", "_output": 1}], "output": "done"}
    loop = Loop(Document(Context([{"type": "text", "text": "Note it."}, plan])), clock=CLOCK)
    assert loop.status is LoopStatus.READY
    assert asyncio.run(loop.run()) is LoopStatus.FINISHED
    assert (loop.output, loop.document.context.resolve("†state.n").value) == ("done", 1)


def test_a_users_text_after_the_final_output_is_a_new_request() -> None:
    """010: a user's text after the plan that held the final output asks again: the loop waits for the next turn."""
    messages = [{"type": "plan", "plan": [], "output": "done"}, {"type": "text", "role": "user", "text": "Again."}]
    asked = []
    loop = Loop(Document(Context(messages)), turns=asked.append, clock=CLOCK)
    assert loop.status is LoopStatus.WAITING_FOR_TURN
    assert asyncio.run(loop.run()) is LoopStatus.WAITING_FOR_TURN
    assert len(asked) == 1
