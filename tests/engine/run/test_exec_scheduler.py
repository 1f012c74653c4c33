"""The scheduler (SPEC 6.8–6.9): readiness, concurrency, blocked and awaiting calls, cycles, the refund plan."""

import asyncio

from exec_support import registry

from contextdeck.engine import Context, Decision, Execution, Status, fixed_clock, load_activities, load_document

CLOCK = fixed_clock("2026-01-01T00:00:00Z")


def make(messages, calls, activities=None, **options):
    context = Context(messages)
    return context, Execution(context, {"calls": calls}, activities=activities, clock=CLOCK, **options)


GREET = {"_tool": "greetUser", "userName": "†input.userName", "_outputPath": "†state.greeting"}


def greet(call, tool, context):
    return "Hello, " + call["userName"]


def test_call_reading_a_missing_path_is_blocked_and_reported_with_it() -> None:
    """greetUser without an input waits: the report names the call once with the path it waits for."""
    _context, execution = make([], [GREET], registry(greetUser=greet))
    report = asyncio.run(execution.run())
    assert report.blocked == ((0, ("†input.userName",)),)
    assert report.ran == ()
    assert execution.state(0).status is Status.BLOCKED
    assert execution.state(0).waiting_for == ("†input.userName",)


def test_a_gate_waits_for_every_missing_reference_and_names_them_all() -> None:
    """SPEC 6.8: `†state.a && †input.q` waits for both paths, so the report names both (an alternative of one
    reference names it alone); once one appears, only the other is named."""
    call = {"_tool": "greetUser", "userName": "†state.a && †input.q || †state.b", "_outputPath": "†state.g"}
    context, execution = make([], [call], registry(greetUser=greet))
    assert asyncio.run(execution.run()).blocked == ((0, ("†state.a", "†input.q", "†state.b")),)
    context.append({"type": "input", "input": {"q": "x"}})
    assert asyncio.run(execution.run()).blocked == ((0, ("†state.a", "†state.b")),)


def test_blocked_call_runs_once_its_path_appears() -> None:
    """Appending the input makes greetUser ready; the next tick runs it."""
    context, execution = make([], [GREET], registry(greetUser=greet))
    asyncio.run(execution.run())
    context.append({"type": "input", "input": {"userName": "Alex"}})
    report = asyncio.run(execution.run())
    assert report.ran == (0,)
    assert context.resolve("†state.greeting").value == "Hello, Alex"


def test_each_call_runs_at_most_once() -> None:
    """A second tick runs nothing that already ran."""
    count = []
    _context, execution = make([], [{"_tool": "t", "_outputPath": "†state.a"}], registry(t=lambda *a: count.append(1)))
    asyncio.run(execution.run())
    report = asyncio.run(execution.run())
    assert (count, report.ran) == ([1], ())


def test_output_path_is_never_a_read() -> None:
    """A destination that does not exist yet does not block its call."""
    _context, execution = make([], [{"_tool": "t", "_outputPath": "†state.deep.new", "_output": 1}])
    assert execution.ready() == [0]


def test_found_alternative_is_enough_and_null_is_found() -> None:
    """`†a || †b` is ready when one is found; a null value counts as found."""
    calls = [{"_tool": "t", "x": "†input.nope || †state.nothing", "_outputPath": "†state.r",
              "_output": "†state.nothing"}]
    context, execution = make([{"type": "state", "data": {"nothing": None}}], calls)
    asyncio.run(execution.run())
    assert context.resolve("†state.r").found


def test_chained_calls_run_in_data_flow_order() -> None:
    """A call reading what another writes waits for it, even when plan order says otherwise."""
    calls = [{"_tool": "b", "x": "†state.a", "_outputPath": "†state.b", "_output": "†state.a"},
             {"_tool": "a", "_outputPath": "†state.a", "_output": "from a"}]
    context, execution = make([], calls)
    report = asyncio.run(execution.run())
    assert report.ran == (1, 0)
    assert context.resolve("†state.b").value == "from a"


def test_reader_waits_for_its_writer_even_when_the_old_value_exists() -> None:
    """The refund's checkEligibility reads †state.order (null at first) only after lookupOrder wrote it."""
    seen = []

    def check(call, tool, context):
        seen.append(call["order"])
        return {"eligible": True}

    calls = [{"_tool": "check", "order": "†state.order", "_outputPath": "†state.eligibility"},
             {"_tool": "lookup", "_outputPath": "†state.order", "_output": {"id": "A"}}]
    _context, execution = make([{"type": "state", "data": {"order": None}}], calls, registry(check=check))
    assert execution.state(0).waiting_for == ("†state.order",)
    asyncio.run(execution.run())
    assert seen == [{"id": "A"}]


def test_reader_of_a_failed_writer_stays_blocked() -> None:
    """When the writer of a path fails, its readers do not run on the stale value."""
    def boom(*args):
        raise RuntimeError("down")

    calls = [{"_tool": "lookup", "_outputPath": "†state.order"},
             {"_tool": "check", "order": "†state.order", "_outputPath": "†state.ok", "_output": 1}]
    _context, execution = make([{"type": "state", "data": {"order": None}}], calls, registry(lookup=boom))
    report = asyncio.run(execution.run())
    assert report.blocked == ((1, ("†state.order",)),)


def test_ready_calls_run_concurrently() -> None:
    """Two activities that each wait for the other finish: run() starts them together."""
    a_started, b_started = asyncio.Event(), asyncio.Event()

    async def a(*args):
        a_started.set()
        await b_started.wait()
        return "a"

    async def b(*args):
        b_started.set()
        await a_started.wait()
        return "b"

    calls = [{"_tool": "a", "_outputPath": "†state.a"}, {"_tool": "b", "_outputPath": "†state.b"}]
    context, execution = make([], calls, registry(a=a, b=b), timeout=5)
    asyncio.run(execution.run())
    assert (context.resolve("†state.a").value, context.resolve("†state.b").value) == ("a", "b")


def test_approvals_path_makes_a_call_awaiting_approval() -> None:
    """A call waiting for †state.approvals.* is awaiting approval, not blocked and not an error."""
    calls = [{"_tool": "pay", "by": "†state.approvals.refund", "_outputPath": "†state.paid", "_output": True}]
    context, execution = make([], calls)
    report = asyncio.run(execution.run())
    assert report.awaiting_approval == ((0, ("†state.approvals.refund",)),)
    assert report.blocked == ()
    assert report.errors == ()
    assert execution.state(0).status is Status.AWAITING_APPROVAL
    context.append({"type": "state", "data": {"approvals": {"refund": "manager"}}})
    asyncio.run(execution.run())
    assert context.resolve("†state.paid").value is True


def test_approvals_prefix_must_be_a_whole_segment() -> None:
    """†state.approvalsLog is an ordinary blocked path."""
    _context, execution = make([], [{"_tool": "t", "x": "†state.approvalsLog"}])
    assert execution.state(0).status is Status.BLOCKED


def test_instance_calls_read_their_own_layer(examples) -> None:
    """Moderation batch: each instanced call reads its instance's input and writes its own verdict."""
    document = load_document(examples / "moderation_batch.json")
    seen = {}

    def classify(call, tool, context):
        seen[call["_instance"]] = call["post"]
        return "allow"

    execution = Execution(document, activities=registry(classifyPost=classify), clock=CLOCK)
    asyncio.run(execution.run())
    assert seen == {"②": "Lovely weather in Lisbon today.", "③": "Call me on +1 555 0100, I'm selling my car."}
    assert document.context.resolve("†state.verdict", instance="②").value == "allow"
    assert document.context.resolve("†state.verdict", instance="①").value == "remove"
    assert document.context.resolve("†state.verdict").value is None


def test_activity_context_is_limited_by_scopes_and_instance() -> None:
    """`context` holds only the kinds `_scopes` names, global or of the call's instance."""
    seen = []
    messages = [
        {"type": "state", "data": {"g": 1}},
        {"type": "state", "_instance": "①", "data": {"mine": 1}},
        {"type": "state", "_instance": "②", "data": {"theirs": 1}},
        {"type": "input", "input": {"i": 1}},
        {"type": "text", "role": "user", "text": "hi"},
    ]
    calls = [{"_tool": "t", "_instance": "①", "_scopes": ["state"], "_outputPath": "†state.r"},
             {"_tool": "t", "_outputPath": "†state.s"}]
    _make_ctx, execution = make(messages, calls, registry(t=lambda call, tool, ctx: seen.append(ctx) or 1))
    asyncio.run(execution.run())
    assert seen[0] == [messages[0], messages[1]]
    assert seen[1] == []


def test_cycle_is_refused_before_anything_runs() -> None:
    """Two calls feeding each other: nothing runs, each gets an error naming both calls and the paths."""
    calls = [{"_tool": "x", "v": "†state.b", "_outputPath": "†state.a", "_output": 1},
             {"_tool": "y", "v": "†state.a", "_outputPath": "†state.b", "_output": 1},
             {"_tool": "z", "_outputPath": "†state.c", "_output": 1}]
    context, execution = make([{"type": "state", "data": {"a": 0, "b": 0}}], calls)
    report = asyncio.run(execution.run())
    assert report.refused == ((0, 1),)
    assert report.ran == ()
    cycle_errors = [m["data"]["error"] for m in context.messages if m["type"] == "error"]
    assert [e["type"] for e in cycle_errors] == ["cycle", "cycle"]
    assert cycle_errors[0]["message"] == (
        "calls 0 (x), 1 (y) form a cycle: call 1 feeds call 0 through †state.b; call 0 feeds call 1 through †state.a")
    assert not context.resolve("†state.c").found
    assert execution.state(2).status is Status.PENDING


def test_cycle_through_a_parent_path_is_found() -> None:
    """Writing †state.a.b feeds a reader of †state.a (a parent), closing the loop."""
    calls = [{"_tool": "x", "v": "†state.c", "_outputPath": "†state.a.b"},
             {"_tool": "y", "v": "†state.a", "_outputPath": "†state.c.d"}]
    _context, execution = make([], calls)
    assert execution.refused == ((0, 1),)


def test_a_call_reading_its_own_destination_is_not_a_cycle() -> None:
    """A counter that reads and writes †state.n runs once, reading the value before its write."""
    calls = [{"_tool": "inc", "n": "†state.n", "_outputPath": "†state.n"}]
    context, execution = make([{"type": "state", "data": {"n": 1}}], calls, registry(inc=lambda c, t, x: c["n"] + 1))
    asyncio.run(execution.run())
    assert (execution.refused, context.resolve("†state.n").value) == ((), 2)


def test_different_instances_do_not_feed_each_other() -> None:
    """Calls of instances ① and ② reading and writing the same path are not a cycle."""
    calls = [{"_tool": "x", "_instance": "①", "v": "†state.a", "_outputPath": "†state.b", "_output": 1},
             {"_tool": "y", "_instance": "②", "v": "†state.b", "_outputPath": "†state.a", "_output": 1}]
    _context, execution = make([{"type": "state", "data": {"a": 0, "b": 0}}], calls)
    assert execution.refused == ()


def test_refund_plan_runs_until_the_approval_gate(examples) -> None:
    """The refund example: order, log and eligibility are written; the refund awaits approval."""
    document = load_document(examples / "refund_workflow.json")
    execution = Execution(document, clock=CLOCK)
    report = asyncio.run(execution.run())
    context = document.context
    assert context.resolve("†state.order.id").value == "A-1042"
    assert context.resolve("†state.log").value == ["order looked up"]
    assert context.resolve("†state.eligibility").value == {"eligible": True, "maxAmount": 89.5}
    assert report.awaiting_approval == ((3, ("†state.approvals.refund",)),)
    assert execution.state(4).status is Status.DONE  # notifyCustomer: latent, no path: a thought
    assert report.errors == ()


def test_refund_plan_with_activities_pays_after_approval(examples) -> None:
    """With the example activities, approval lets issueRefund run; notifyCustomer is fire-and-forget."""
    document = load_document(examples / "refund_workflow.json")
    activities = load_activities(examples / "refund_activities.py")
    execution = Execution(document, activities=activities, clock=CLOCK)

    async def scenario():
        await execution.run()
        document.context.append({"type": "state", "data": {"approvals": {"refund": "lead"}}})
        report = await execution.run()
        await execution.drain()
        return report

    report = asyncio.run(scenario())
    assert report.ran == (3,)
    assert document.context.resolve("†state.refund").value == {
        "refundId": "R-A-1042", "amount": 89.5, "approvedBy": "lead"}
    notify = execution.state(4)
    assert (notify.status, notify.finished) == (Status.FIRE_AND_FORGET, True)
    assert notify.result == "to maya@example.com: †refund issued for order A-1042"


def test_solution_calls_win_over_the_plan_message() -> None:
    """A saved request's solution calls are run instead of the last plan message."""
    plan = {"type": "plan", "plan": [{"_tool": "p", "_outputPath": "†state.p", "_output": 1}]}
    context, execution = make([plan], [{"_tool": "s", "_outputPath": "†state.s", "_output": 1}])
    asyncio.run(execution.run())
    assert context.resolve("†state.s").found
    assert not context.resolve("†state.p").found


def test_delegate_files_outside_the_document_are_never_opened(tmp_path, monkeypatch) -> None:
    """A `_delegate` is followed only next to a saved document (014): here no file is opened, the call fails."""
    import builtins

    opened = []
    real_open = builtins.open
    monkeypatch.setattr(builtins, "open", lambda *a, **k: opened.append(a[0]) or real_open(*a, **k))
    secret = tmp_path / "secret.json"
    secret.write_text("[]")
    calls = [{"_tool": "t", "_delegate": str(secret), "_outputPath": "†state.a", "_output": 1}]
    context, execution = make([], calls)
    asyncio.run(execution.run())
    assert opened == []
    assert not context.resolve("†state.a").found
    assert execution.state(0).error["type"] == "delegate"
    assert "this document is not saved" in execution.state(0).error["message"]


def test_three_call_cycle_and_long_chain_are_told_apart() -> None:
    """A 3-cycle is found among other calls; a chain of 2000 calls is no cycle (and no recursion limit)."""
    loop = [{"_tool": f"c{i}", "v": f"†state.c{(i + 1) % 3}", "_outputPath": f"†state.c{i}"} for i in range(3)]
    free = [{"_tool": "free", "_outputPath": "†state.free"}]
    _, execution = make([], free + loop)
    assert execution.refused == ((1, 2, 3),)
    chain = [{"_tool": "t", "x": f"†state.p{i - 1}", "_outputPath": f"†state.p{i}"} for i in range(2000)]
    _, long_one = make([], chain)
    assert long_one.refused == ()


def test_a_tick_awaits_its_pace_between_the_calls_it_starts_and_settles() -> None:
    """`pace` is awaited after each call started, before each call's own work and after each settled: a window
    turns its event loop there. Here it hands the loop on each time, and the outputs land over many of its
    iterations instead of in one."""
    calls = [{"_tool": "t", "n": n, "_outputPath": f"†state.s{n}", "_output": n} for n in range(6)]
    context, execution = make([{"type": "state", "data": {}}], calls)
    seen: list[int] = []

    async def pace() -> None:
        seen.append(len(context))
        await asyncio.sleep(0)

    execution.pace = pace
    report = asyncio.run(execution.run())
    assert report.ran == tuple(range(6))
    assert len(seen) == 18  # six started, six at work, six settled
    assert seen[:12] == [1] * 12  # nothing lands while the calls start and begin their work
    assert seen[12:] == [2, 3, 4, 5, 6, 7]  # one output per settled call, the loop turning in between


def test_a_ticks_outputs_land_in_the_order_the_calls_started_whatever_ends_first() -> None:
    """Call 0 ends only after call 1 has: its output is still appended first, so the same tick gives the same
    messages in the same order whatever the activities' timing (the next request is the same question)."""
    second_done = asyncio.Event()

    async def first(call, tool, context):
        await second_done.wait()
        for _ in range(20):  # turns of the loop in which the tick has taken call 1's completion
            await asyncio.sleep(0)
        return "first"

    async def second(call, tool, context):
        second_done.set()
        return "second"

    calls = [{"_tool": "first", "_outputPath": "†a"}, {"_tool": "second", "_outputPath": "†b"}]
    context, execution = make([], calls, registry(first=first, second=second))

    async def tick():
        return await execution.run()

    assert asyncio.run(tick()).ran == (0, 1)
    assert [message["kind"] for message in context.messages] == ["a", "b"]


def test_a_tick_keeps_a_bounded_number_of_calls_started(monkeypatch) -> None:
    """With room for three, ten ready calls never run more than three at a time, and all of them run, started in
    plan order, each as a running one settles."""
    monkeypatch.setattr("contextdeck.engine.run._execution.MOST_STARTED", 3)
    active, most = [0], [0]

    async def slow(call, tool, context):
        active[0] += 1
        most[0] = max(most[0], active[0])
        for _ in range(3):
            await asyncio.sleep(0)
        active[0] -= 1
        return call["n"]

    calls = [{"_tool": "slow", "n": n, "_outputPath": f"†state.s{n}"} for n in range(10)]
    context, execution = make([{"type": "state", "data": {}}], calls, registry(slow=slow))
    report = asyncio.run(execution.run())
    assert report.ran == tuple(range(10))
    assert most[0] == 3
    assert context.resolve("†state").value == {f"s{n}": n for n in range(10)}


def test_queued_calls_keep_breakpoints_pauses_and_dependents(monkeypatch) -> None:
    """Calls waiting for room still stop at a breakpoint, hold after a pause, and their dependents run in the same
    tick once the queue is drained."""
    monkeypatch.setattr("contextdeck.engine.run._execution.MOST_STARTED", 2)
    calls = [{"_tool": "t", "_outputPath": f"†state.s{n}", "_output": n} for n in range(6)]
    calls.append({"_tool": "t", "x": "†state.s5", "_outputPath": "†state.after", "_output": "†state.s5"})
    _context, execution = make([{"type": "state", "data": {}}], calls, breakpoints={4})
    report = asyncio.run(execution.run())
    assert (report.ran, report.stopped_at) == ((0, 1, 2, 3), 4)
    assert [s.status for s in execution.states[4:]] == [Status.READY, Status.READY, Status.BLOCKED]
    report = asyncio.run(execution.run())
    assert report.ran == (4, 5, 6)  # the reader of call 5 ran in the same tick

    def hook(state):
        if state.index == 2:
            execution.pause()
        return Decision.approve()

    _context, execution = make([{"type": "state", "data": {}}], calls, approver=hook)
    report = asyncio.run(execution.run())
    assert report.ran == (0, 1, 2)
    assert [s.status for s in execution.states[3:6]] == [Status.READY] * 3


def test_a_call_waits_for_its_parameters_references_before_its_outputs() -> None:
    """A call's reads are its parameters' expressions, then its `_output`'s, wherever `_output` is written in
    the call (the plan is read once, in the call's order): what it waits for is said in that order."""
    call = {"_output": "†state.later", "_tool": "note", "text": "†state.first", "_outputPath": "†state.done"}
    execution = Execution(Context([{"type": "plan", "plan": [call]}]))
    assert [str(read) for read in execution.plans[0].reads] == ["†state.first", "†state.later"]
    assert execution.states[0].waiting_for == ("†state.first", "†state.later")


def _branch_plan(weather: str) -> list:
    """012's branching plan: the weather call writes one of two paths, a call reads each, both write the suggestion
    the last call presents."""
    return [
        {"_tool": "getWeather", "city": "†input.city", "_output": weather,
         "_outputPath": "†state.sunny || †state.rainy"},
        {"_tool": "findPark", "weather": "†state.sunny", "_output": "park", "_outputPath": "†state.suggestion"},
        {"_tool": "findMovie", "weather": "†state.rainy", "_output": "movie", "_outputPath": "†state.suggestion"},
        {"_tool": "present", "suggestion": "†state.suggestion", "_output": "†state.suggestion",
         "_outputPath": "†state.presented"},
    ]


def test_a_branch_not_taken_holds_no_reader_back() -> None:
    """012: the weather call takes one branch of `†state.sunny || †state.rainy`; the call on the other branch never
    runs, so it no longer holds back the call both branches feed, which presents what the branch taken wrote."""
    context, execution = make([{"type": "input", "input": {"city": "Paris"}}], _branch_plan("sun"))
    report = asyncio.run(execution.run())
    assert report.ran == (0, 1, 3)
    assert context.resolve("†state.presented").value == "park"
    assert report.blocked == ((2, ("†state.rainy",)),)
    assert execution.state(2).not_taken
    assert not execution.state(1).not_taken


def test_a_call_fed_only_by_a_branch_not_taken_is_not_taken_either() -> None:
    """Not taken passes down: a call reading what only the call on the branch not taken writes never runs, and holds
    back no reader of its own."""
    calls = [*_branch_plan("sun")[:3],
             {"_tool": "rate", "movie": "†state.suggestion.title", "_output": "rated", "_outputPath": "†state.rating"},
             {"_tool": "show", "x": "†state.rating || †state.suggestion", "_output": "shown",
              "_outputPath": "†state.shown"}]
    calls[2] = {**calls[2], "_outputPath": "†state.movie"}
    calls[3] = {**calls[3], "movie": "†state.movie"}
    context, execution = make([{"type": "input", "input": {"city": "Paris"}}], calls)
    report = asyncio.run(execution.run())
    assert [index for index, _ in report.blocked] == [2, 3]
    assert execution.state(3).not_taken
    assert context.resolve("†state.shown").value == "shown"


def test_a_call_waiting_for_what_no_call_writes_still_holds_its_readers_back() -> None:
    """A path no call of the plan writes may come from outside (an input added later): the call waiting for it is
    blocked, not skipped, and the calls reading what it writes wait for it."""
    calls = [{"_tool": "findMovie", "weather": "†input.rainy", "_output": "movie", "_outputPath": "†state.suggestion"},
             {"_tool": "findPark", "_output": "park", "_outputPath": "†state.suggestion"},
             {"_tool": "present", "suggestion": "†state.suggestion", "_output": 1, "_outputPath": "†state.presented"}]
    context, execution = make([], calls)
    report = asyncio.run(execution.run())
    assert report.ran == (1,)
    assert report.blocked == ((0, ("†input.rainy",)), (2, ("†state.suggestion",)))
    assert not execution.state(0).not_taken
    context.append({"type": "input", "input": {"rainy": True}})
    assert asyncio.run(execution.run()).ran == (0, 2)


def test_a_failed_writer_is_no_branch_not_taken() -> None:
    """A call whose writer failed may run once that writer is run again: it is blocked, not skipped, and still holds
    its readers back."""
    def fail(call, tool, context):
        raise ValueError("no weather")

    calls = [{"_tool": "getWeather", "_outputPath": "†state.weather"},
             {"_tool": "findPark", "weather": "†state.weather", "_output": "park", "_outputPath": "†state.suggestion"},
             {"_tool": "present", "suggestion": "†state.suggestion", "_output": 1, "_outputPath": "†state.presented"}]
    _context, execution = make([], calls, registry(getWeather=fail))
    report = asyncio.run(execution.run())
    assert report.ran == (0,)
    assert report.blocked == ((1, ("†state.weather",)), (2, ("†state.suggestion",)))
    assert execution.state(1).failed_writers == (0,)
    assert not execution.state(1).not_taken


def test_a_found_alternative_does_not_wait_for_the_writers_of_the_next() -> None:
    """`†input.data || †state.fallback` reads the input once it is found and nothing still to run writes it: a
    pending writer of the fallback (here one that waits for ever) does not hold the call back."""
    calls = [{"_tool": "makeFallback", "x": "†input.never", "_output": "d", "_outputPath": "†state.fallback"},
             {"_tool": "process", "data": "†input.data || †state.fallback", "_output": "ok", "_outputPath": "†state.r"}]
    context, execution = make([{"type": "input", "input": {"data": "given"}}], calls)
    report = asyncio.run(execution.run())
    assert report.ran == (1,)
    assert report.blocked == ((0, ("†input.never",)),)
    assert context.resolve("†state.r").value == "ok"


def test_an_alternative_still_to_be_written_is_waited_for() -> None:
    """`†state.a || †input.b`: while a call that writes †state.a has not run, the reader waits for it even though
    †input.b is found (the first alternative found decides the value)."""
    calls = [{"_tool": "makeA", "x": "†input.go", "_output": "a", "_outputPath": "†state.a"},
             {"_tool": "use", "v": "†state.a || †input.b", "_output": "†state.a || †input.b",
              "_outputPath": "†state.r"}]
    context, execution = make([{"type": "input", "input": {"b": "b"}}], calls)
    report = asyncio.run(execution.run())
    assert report.ran == ()
    assert report.blocked == ((0, ("†input.go",)), (1, ("†state.a",)))
    context.append({"type": "input", "input": {"go": True}})
    asyncio.run(execution.run())
    assert context.resolve("†state.r").value == "a"
