"""Patterns (SPEC 6.10), written in a plan as `{"all" | "any" | "race": [calls]}`; cancellation; fire-and-forget."""

import asyncio

from exec_support import registry

from contextdeck.engine import Context, Execution, Status, fixed_clock

CLOCK = fixed_clock("2026-01-01T00:00:00Z")


def plan_execution(entries, activities=None, **options):
    context = Context([{"type": "plan", "plan": entries}])
    return context, Execution(context, activities=activities, clock=CLOCK, **options)


def call(tool, path):
    return {"_tool": tool, "_outputPath": path}


async def ok(*args):
    return "ok"


async def fails(*args):
    raise ValueError("no")


def slow_recorder(record):
    async def slow(*args):
        record.append("started")
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            record.append("cancelled")
            raise
    return slow


def test_all_appends_every_output_when_all_succeed() -> None:
    """`all`: both outputs are written, both calls done."""
    context, execution = plan_execution([{"all": [call("ok", "†state.a"), call("ok", "†state.b")]}], registry(ok=ok))
    asyncio.run(execution.run())
    assert [m["_outputPath"] for m in context.messages[1:]] == ["†state.a", "†state.b"]
    assert [s.status for s in execution.states] == [Status.DONE, Status.DONE]


def test_all_appends_nothing_when_one_fails() -> None:
    """`all`: one failure discards the other's output; only the error is appended."""
    entries = [{"all": [call("ok", "†state.a"), call("fails", "†state.b")]}]
    context, execution = plan_execution(entries, registry(ok=ok, fails=fails))
    asyncio.run(execution.run())
    assert [m["type"] for m in context.messages[1:]] == ["error"]
    assert not context.resolve("†state.a").found
    assert [s.status for s in execution.states] == [Status.CANCELLED, Status.FAILED]


def test_any_first_success_wins_and_the_rest_are_cancelled() -> None:
    """`any`: a failure is forgiven, the success is written, the slow call is cancelled."""
    record = []
    entries = [{"any": [call("fails", "†state.f"), call("ok", "†state.a"), call("slow", "†state.s")]}]
    context, execution = plan_execution(entries, registry(ok=ok, fails=fails, slow=slow_recorder(record)))
    asyncio.run(execution.run())
    assert [m["type"] for m in context.messages[1:]] == ["data"]
    assert context.resolve("†state.a").value == "ok"
    assert record == ["started", "cancelled"]
    assert [s.status for s in execution.states] == [Status.FAILED, Status.DONE, Status.CANCELLED]


def test_any_with_no_success_reports_every_failure() -> None:
    """`any`: when all fail, every error is appended."""
    context, execution = plan_execution([{"any": [call("fails", "†state.a"), call("fails", "†state.b")]}],
                                        registry(fails=fails))
    asyncio.run(execution.run())
    assert [m["type"] for m in context.messages[1:]] == ["error", "error"]


def test_race_first_to_finish_wins_even_a_failure() -> None:
    """`race`: the fast failure wins (its error is appended) and the slow success is cancelled."""
    record = []
    entries = [{"race": [call("slow", "†state.s"), call("fails", "†state.f")]}]
    context, execution = plan_execution(entries, registry(fails=fails, slow=slow_recorder(record)))
    asyncio.run(execution.run())
    assert [m["type"] for m in context.messages[1:]] == ["error"]
    assert record == ["started", "cancelled"]
    assert [s.status for s in execution.states] == [Status.CANCELLED, Status.FAILED]


def test_race_first_success_is_written() -> None:
    """`race`: a fast success is written."""
    record = []
    context, execution = plan_execution([{"race": [call("slow", "†state.s"), call("ok", "†state.a")]}],
                                        registry(ok=ok, slow=slow_recorder(record)))
    asyncio.run(execution.run())
    assert context.resolve("†state.a").value == "ok"
    assert not context.resolve("†state.s").found


def test_group_members_are_numbered_in_plan_order() -> None:
    """Calls inside a group are numbered with the others, in plan order."""
    entries = [call("a", "†state.a"), {"all": [call("b", "†state.b"), call("c", "†state.c")]}, call("d", "†state.d")]
    _, execution = plan_execution(entries)
    assert [p.tool_name for p in execution.plans] == ["a", "b", "c", "d"]
    assert [u.members for u in execution.units] == [(0,), (1, 2), (3,)]


def test_group_waits_until_every_member_is_ready() -> None:
    """A group starts only when all its members can read what they need."""
    entries = [{"all": [call("ok", "†state.a"), {"_tool": "ok", "x": "†input.x", "_outputPath": "†state.b"}]}]
    context, execution = plan_execution(entries, registry(ok=ok))
    report = asyncio.run(execution.run())
    assert report.ran == ()
    assert execution.state(0).status is Status.READY
    context.append({"type": "input", "input": {"x": 1}})
    assert asyncio.run(execution.run()).ran == (0, 1)


def test_group_members_cannot_feed_each_other() -> None:
    """Members run together, so one reading another's destination is a structural error."""
    entries = [{"all": [call("ok", "†state.a"), {"_tool": "ok", "x": "†state.a", "_outputPath": "†state.b"}]}]
    context, execution = plan_execution(entries, registry(ok=ok))
    asyncio.run(execution.run())
    assert [s.status for s in execution.states] == [Status.FAILED, Status.FAILED]
    assert {m["data"]["error"]["type"] for m in context.messages[1:]} == {"group"}


def test_cancel_stops_a_running_call() -> None:
    """`cancel(index)` cancels a running activity: its status is cancelled and nothing is written."""
    record = []
    context, execution = plan_execution([call("slow", "†state.s")], registry(slow=slow_recorder(record)))

    async def scenario():
        tick = asyncio.ensure_future(execution.run())
        while record != ["started"]:
            await asyncio.sleep(0)
        execution.cancel(0)
        return await tick

    report = asyncio.run(scenario())
    assert report.ran == (0,)
    assert execution.state(0).status is Status.CANCELLED
    assert record == ["started", "cancelled"]
    assert context[1]["data"]["error"] == {"type": "cancelled", "message": "cancelled while running"}
    assert len(context) == 2  # recorded: it does not start again by itself


def test_fire_and_forget_is_not_awaited_and_writes_nothing() -> None:
    """An activity without output path: the tick ends while it runs; its result is recorded, not appended."""
    release = asyncio.Event()

    async def notify(*args):
        await release.wait()
        return "sent"

    context, execution = plan_execution([{"_tool": "notify"}], registry(notify=notify))
    finished = []
    execution.background_finished.connect(finished.append)

    async def scenario():
        report = await execution.run()
        during = (execution.state(0).status, execution.state(0).finished)
        release.set()
        await execution.drain()
        return report, during

    report, during = asyncio.run(scenario())
    assert report.ran == (0,)
    assert during == (Status.FIRE_AND_FORGET, False)
    assert (execution.state(0).finished, execution.state(0).result) == (True, "sent")
    assert [s.index for s in finished] == [0]
    assert context[1]["type"] == "_run"
    assert len(context) == 2


def test_fire_and_forget_failure_is_recorded_not_appended() -> None:
    """A fire-and-forget activity that raises: the run records the error; the context is unchanged."""
    context, execution = plan_execution([{"_tool": "fails"}], registry(fails=fails))

    async def scenario():
        await execution.run()
        await execution.drain()

    asyncio.run(scenario())
    assert execution.state(0).error == {"type": "ValueError", "message": "no"}
    assert [m["type"] for m in context.messages] == ["plan", "_run"]


def test_fire_and_forget_with_a_tiny_timeout_is_recorded_as_timed_out() -> None:
    """The per-activity timeout applies to fire-and-forget runs too."""
    record = []
    _context, execution = plan_execution([{"_tool": "slow"}], registry(slow=slow_recorder(record)), timeout=0.05)

    async def scenario():
        await execution.run()
        await execution.drain()

    asyncio.run(scenario())
    assert execution.state(0).error["type"] == "timeout"
    assert record == ["started", "cancelled"]


def test_reader_after_an_any_group_reads_the_winner() -> None:
    """Two members write the same path; the loser being cancelled does not block the reader."""
    record = []
    entries = [
        {"any": [call("slow", "†state.quote"), call("ok", "†state.quote")]},
        {"_tool": "use", "q": "†state.quote", "_outputPath": "†state.used", "_output": "†state.quote"},
    ]
    context, execution = plan_execution(entries, registry(ok=ok, slow=slow_recorder(record)))
    asyncio.run(execution.run())
    assert context.resolve("†state.used").value == "ok"


def test_reader_after_a_failed_all_group_stays_blocked() -> None:
    """When an `all` group fails, readers of its destinations are blocked, not run on old values."""
    entries = [
        {"all": [call("ok", "†state.a"), call("fails", "†state.b")]},
        {"_tool": "use", "a": "†state.a", "_outputPath": "†state.used", "_output": 1},
    ]
    context, execution = plan_execution(entries, registry(ok=ok, fails=fails))
    context.append({"type": "state", "data": {"a": "old"}})
    execution.reset()
    report = asyncio.run(execution.run())
    assert report.blocked == ((2, ("†state.a",)),)


def test_a_cancelled_tick_keeps_the_outputs_of_calls_that_finished() -> None:
    """A call that finished while a call started before it still runs is written when the tick is cancelled
    (Ctrl-C, SIGTERM): run again from that document, it is not made twice; the running one is cancelled."""
    record = []
    done = []

    async def quick(*args):
        done.append("quick")
        return "made"

    context, execution = plan_execution([call("slow", "†state.s"), call("quick", "†state.q")],
                                        registry(slow=slow_recorder(record), quick=quick))

    async def scenario():
        tick = asyncio.ensure_future(execution.run())
        while done != ["quick"]:
            await asyncio.sleep(0)
        for _ in range(10):  # the quick call's task ends (no real time passes: both activities are async)
            await asyncio.sleep(0)
        tick.cancel()
        await asyncio.gather(tick, return_exceptions=True)

    asyncio.run(scenario())
    assert execution.state(1).status is Status.DONE
    assert context.resolve("†state.q").value == "made"
    assert execution.state(0).status is Status.CANCELLED
    assert not context.resolve("†state.s").found


def test_an_all_group_interrupted_has_no_output_and_runs_whole_again() -> None:
    """All or nothing: a tick cancelled (Ctrl-C) while one member of an `all` group still runs writes nothing of
    the group, not even the member that finished, and a run started again from the document runs both."""
    done: list[str] = []

    async def quick(*args):
        done.append("quick")
        return "ok"

    context, execution = plan_execution([{"all": [call("quick", "†state.a"), call("slow", "†state.b")]}],
                                        registry(quick=quick, slow=slow_recorder([])))

    async def interrupted():
        tick = asyncio.ensure_future(execution.run())
        while not done:
            await asyncio.sleep(0)
        tick.cancel()
        await asyncio.gather(tick, return_exceptions=True)

    asyncio.run(interrupted())
    assert len(context) == 1  # the plan alone
    again = Execution(context, activities=registry(quick=quick, slow=ok), clock=CLOCK)
    assert asyncio.run(again.run()).ran == (0, 1)
    assert done == ["quick", "quick"]
