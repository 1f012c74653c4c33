"""Activities loaded from a file run in worker processes: cancel and timeouts end them for real, a crash is
the call's error, what they print is the call's record, and they never touch the document's messages."""

from __future__ import annotations

import asyncio
import contextlib
import os
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from contextdeck.engine import Activities, Context, Execution, Status, fixed_clock, load_activities

NOW = "2026-01-01T00:00:00Z"

ACTIVITIES = '''
import asyncio, ctypes, os, subprocess, sys, time
from pathlib import Path

def loud(call, tool, context):
    print("to stdout")
    print("to stderr", file=sys.stderr)
    return {"ok": True}

def die(call, tool, context):
    os._exit(3)

def segfault(call, tool, context):
    return ctypes.string_at(0)

def recurse(call, tool, context):
    return recurse(call, tool, context)

def leave(call, tool, context):
    sys.exit(2)

def ok(call, tool, context):
    return call.get("n", 1)

def mutate(call, tool, context):
    call["order"]["amount"] = -1
    context[0]["data"]["order"]["amount"] = -1
    tool.schema["description"] = "changed"
    return call["order"]["amount"]

def huge(call, tool, context):
    return 10**5000

class Unprintable(Exception):
    def __str__(self):
        raise ValueError("no")

def unprintable(call, tool, context):
    raise Unprintable()

def waits(call, tool, context):
    folder = Path(call["folder"])
    print("waiting for go")
    (folder / "pid").write_text(str(os.getpid()))
    while not (folder / "go").exists():
        time.sleep(0.01)
    (folder / "side-effect").write_text("done")
    return 1

def chatty_hang(call, tool, context):
    print("working on it")
    time.sleep(60)

def parent(call, tool, context):
    folder = Path(call["folder"])
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    (folder / "child").write_text(str(child.pid))
    (folder / "pid").write_text(str(os.getpid()))
    child.wait()

async def spins(call, tool, context):
    folder = Path(call["folder"])
    (folder / "pid").write_text(str(os.getpid()))
    while True:
        pass

ACTIVITIES = {name: fn for name, fn in dict(globals()).items() if callable(fn) and not name[0].isupper()
              and fn.__module__ == __name__}
'''


@pytest.fixture(scope="module")
def activities(tmp_path_factory: pytest.TempPathFactory) -> Activities:
    file = tmp_path_factory.mktemp("activities") / "faulty.py"
    file.write_text(textwrap.dedent(ACTIVITIES))
    return load_activities(file)


def run(activities: Activities, *calls: dict[str, Any], messages: list[dict[str, Any]] | None = None,
        **options: Any) -> tuple[Context, Execution]:
    context = Context(messages or [{"type": "state", "data": {}}])
    execution = Execution(context, {"calls": list(calls)}, activities=activities, clock=fixed_clock(NOW), **options)
    asyncio.run(execution.run())
    return context, execution


def error_of(execution: Execution, index: int) -> tuple[str, str]:
    error = execution.state(index).error
    assert error is not None
    return error["type"], error["message"]


def test_what_an_activity_prints_is_kept_in_its_record_not_in_the_applications_output(
        activities: Activities, capfd: pytest.CaptureFixture[str]) -> None:
    """stdout and stderr go to the call's `_run.stdout` / `_run.stderr`; nothing reaches this process's own."""
    context, _ = run(activities, {"_tool": "loud", "_outputPath": "†state.a"})
    audit = context[1]["_run"]
    assert (audit["stdout"], audit["stderr"]) == ("to stdout\n", "to stderr\n")
    printed = capfd.readouterr()
    assert "to stdout" not in printed.out + printed.err


@pytest.mark.parametrize(("tool", "kind", "message"), [
    ("die", "crash", "activity 'die': its worker process exited with code 3 before it answered"),
    ("segfault", "crash", "activity 'segfault': its worker process killed by SIGSEGV before it answered"),
    ("recurse", "RecursionError", "maximum recursion depth exceeded"),
    ("leave", "SystemExit", "2"),
    ("unprintable", "Unprintable", "Unprintable (its message cannot be printed)"),
    ("huge", "output", "result: an integer of about 5000 digits (at most 4300 can be saved)"),
])
def test_a_faulty_activity_is_its_calls_error_and_the_run_goes_on(activities: Activities, tool: str, kind: str,
                                                                  message: str) -> None:
    """`os._exit`, a segfault, endless recursion, `sys.exit`, an unprintable exception, a huge integer: each is
    an error of that call, and the next call of the run still runs (in a new worker when needed)."""
    context, execution = run(activities, {"_tool": tool, "_outputPath": "†state.a"},
                             {"_tool": "ok", "n": 7, "_outputPath": "†state.b"})
    assert error_of(execution, 0)[0] == kind
    assert message in error_of(execution, 0)[1]
    assert execution.state(1).status is Status.DONE
    assert context.resolve("†state.b").value == 7


def test_an_activity_that_changes_its_arguments_changes_nothing_else(activities: Activities) -> None:
    """The call, the tool's schema and the context an activity gets are copies: the document and the record
    keep what it was given."""
    tool = {"type": "tool", "tool": {"mutate": {"type": "object", "description": "as written"}}}
    order = {"type": "state", "data": {"order": {"amount": 5}}}
    context, execution = run(activities, {"_tool": "mutate", "order": "†state.order", "_outputPath": "†state.r",
                                          "_scopes": ["state"]}, messages=[order, tool])
    assert execution.state(0).status is Status.DONE
    assert context[0] == {"type": "state", "data": {"order": {"amount": 5}}}
    assert context[1]["tool"]["mutate"]["description"] == "as written"
    assert context[2]["_run"]["inputs"] == {"order": {"amount": 5}}


def test_an_activity_in_process_that_changes_its_arguments_changes_nothing_else() -> None:
    """The same in-process (a function registered in code): copies too, and the record shows the true inputs."""
    def mutate(call: Any, tool: Any, context: Any) -> Any:
        call["order"]["amount"] = -1
        context[0]["data"]["order"]["amount"] = -1
        tool.schema["description"] = "changed"
        return 1

    code = Activities()
    code.add(mutate, "mutate")
    tool = {"type": "tool", "tool": {"mutate": {"type": "object", "description": "as written"}}}
    order = {"type": "state", "data": {"order": {"amount": 5}}}
    context, _ = run(code, {"_tool": "mutate", "order": "†state.order", "_outputPath": "†state.r",
                            "_scopes": ["state"]}, messages=[order, tool])
    assert context[0] == {"type": "state", "data": {"order": {"amount": 5}}}
    assert context[1]["tool"]["mutate"]["description"] == "as written"
    assert context[2]["_run"]["inputs"] == {"order": {"amount": 5}}


@pytest.mark.parametrize("typed", [False, True])
def test_an_activity_in_process_that_changes_what_it_returned_later_changes_nothing(typed: bool) -> None:
    """A result the activity keeps and changes in a later call: the earlier call's output and its record keep
    what it returned, whether it is copied (no annotations) or made anew by its return type's check (typed)."""
    kept: dict[str, Any] = {"n": 1, "deep": [{"m": 1}]}

    def keep() -> dict[str, Any]:
        return kept

    code = Activities()
    code.add(keep if typed else lambda call, tool, context: kept, "keep")
    code.add(lambda call, tool, context: kept["deep"][0].update(m=999) or kept.update(n=999) or 2, "later")
    context, _ = run(code, {"_tool": "keep", "_outputPath": "†state.r"})
    asyncio.run(Execution(context, {"calls": [{"_tool": "later", "_outputPath": "†state.q"}]}, activities=code,
                          clock=fixed_clock(NOW)).run())
    assert context[1]["_run"]["result"] == context[1]["data"]["r"] == {"n": 1, "deep": [{"m": 1}]}


def ends(pid: int, within: float = 30.0) -> bool:
    """Whether process `pid` ends within `within` seconds: one killed is gone once the system has delivered the
    signal, which can take a moment on a busy machine."""
    deadline = time.monotonic() + within
    while not gone(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return gone(pid)


def gone(pid: int) -> bool:
    """Whether process `pid` has ended (a zombie not reaped yet has)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    return False


async def started(folder: Path) -> int:
    while not (folder / "pid").exists() or not (folder / "pid").read_text():
        await asyncio.sleep(0.01)
    return int((folder / "pid").read_text())


def test_a_cancelled_activitys_side_effect_never_happens(activities: Activities, tmp_path: Path) -> None:
    """When `cancel()` returns, the activity's process is gone: the file it would write once told to never
    appears, and the call is cancelled."""
    context = Context([{"type": "state", "data": {}}])
    execution = Execution(context, {"calls": [{"_tool": "waits", "folder": str(tmp_path), "_outputPath": "†state.a"}]},
                          activities=activities, clock=fixed_clock(NOW))

    async def scenario() -> int:
        tick = asyncio.ensure_future(execution.run())
        pid = await started(tmp_path)
        execution.cancel()
        assert gone(pid)
        (tmp_path / "go").write_text("")
        await tick
        return pid

    asyncio.run(scenario())
    assert not (tmp_path / "side-effect").exists()
    assert execution.state(0).status is Status.CANCELLED
    assert context[1]["data"]["error"]["type"] == "cancelled"
    assert context[1]["_run"]["stdout"] == "waiting for go\n"  # what it printed until then


def test_a_busy_async_activity_is_ended_by_its_timeout(activities: Activities, tmp_path: Path) -> None:
    """An async activity that never yields cannot hold the run: the timeout ends its process."""
    _, execution = run(activities, {"_tool": "spins", "folder": str(tmp_path), "_outputPath": "†state.a"},
                             timeout=0.5)
    assert error_of(execution, 0) == ("timeout", "activity 'spins' did not finish within 0.5 s")
    assert gone(int((tmp_path / "pid").read_text()))


def test_a_timed_out_activitys_side_effect_never_happens(activities: Activities, tmp_path: Path) -> None:
    """The timeout kills the worker: told to go on afterwards, the activity writes nothing."""
    _, execution = run(activities, {"_tool": "waits", "folder": str(tmp_path), "_outputPath": "†state.a"},
                       timeout=0.5)
    assert error_of(execution, 0)[0] == "timeout"
    assert gone(int((tmp_path / "pid").read_text()))
    (tmp_path / "go").write_text("")
    assert not (tmp_path / "side-effect").exists()


@pytest.mark.skipif(os.name != "posix", reason="a process group is POSIX's")
def test_a_timeout_ends_the_processes_an_activity_started(activities: Activities, tmp_path: Path) -> None:
    """A child process the activity started (and waits for) ends with its worker: nothing it started runs on."""
    _, execution = run(activities, {"_tool": "parent", "folder": str(tmp_path), "_outputPath": "†state.a"},
                       timeout=2)  # time for the child to start
    assert error_of(execution, 0)[0] == "timeout"
    assert gone(int((tmp_path / "pid").read_text()))
    assert ends(int((tmp_path / "child").read_text()))  # (killed with its group, not waited for)


def test_in_process_runs_a_file_activity_here(activities: Activities, capfd: pytest.CaptureFixture[str]) -> None:
    """`in_process=True` gives up the worker: the activity prints to this process's streams."""
    context, _ = run(activities, {"_tool": "loud", "_outputPath": "†state.a"}, in_process=True)
    assert "stdout" not in context[1]["_run"]
    assert "to stdout" in capfd.readouterr().out


def test_sync_activities_in_process_share_a_few_threads(activities: Activities) -> None:
    """200 sync calls run in-process at once start at most `IN_PROCESS_THREADS` threads, not one each."""
    import threading
    import time

    from contextdeck.engine.run._running import IN_PROCESS_THREADS

    seen: list[int] = []

    def count(call: Any, tool: Any, context: Any) -> int:
        seen.append(threading.active_count())
        time.sleep(0.005)
        return 1

    code = Activities()
    code.add(count, "count")
    before = threading.active_count()
    _, execution = run(code, *({"_tool": "count", "_outputPath": f"†state.c{i}"} for i in range(200)))
    assert all(state.status is Status.DONE for state in execution.states)
    assert max(seen) <= before + IN_PROCESS_THREADS


def test_a_timed_out_call_keeps_what_it_printed(activities: Activities) -> None:
    """What a call printed before its timeout is in its error's `_run.stdout`: where it was when it hung."""
    context, execution = run(activities, {"_tool": "chatty_hang", "_outputPath": "†state.a"}, timeout=1)
    assert error_of(execution, 0)[0] == "timeout"
    assert context[1]["_run"]["stdout"] == "working on it\n"


def test_a_prestarted_worker_takes_the_first_call(tmp_path: Path) -> None:
    """`prestart` starts a worker ahead (the window does on loading activities): the first call runs in it."""
    from contextdeck.engine.run._pool import Jobs, WorkerPool

    file = tmp_path / "pid.py"
    file.write_text("import os\ndef pid(call, tool, context):\n    return os.getpid()\nACTIVITIES = {'pid': pid}\n")
    pool = WorkerPool(2)
    pool.prestart()
    (worker,) = pool._idle
    request = {"file": str(file), "name": "pid", "call": {}, "tool": None, "context": []}
    ran = asyncio.run(Jobs(pool).run(0, request, 60.0))
    pool.shutdown()
    assert ran.result == worker.process.pid


def test_an_unprintable_exception_in_process_is_the_calls_error(activities: Activities) -> None:
    """In-process too, an exception whose message raises when printed is named, not a crash of the run."""
    context, execution = run(activities, {"_tool": "unprintable", "_outputPath": "†state.a"},
                             {"_tool": "ok", "n": 2, "_outputPath": "†state.b"}, in_process=True)
    assert error_of(execution, 0) == ("Unprintable", "Unprintable (its message cannot be printed)")
    assert context.resolve("†state.b").value == 2


def test_an_idle_worker_is_let_go(tmp_path: Path) -> None:
    """A worker left idle for `idle_seconds` is ended; the next call starts a new one."""
    from contextdeck.engine.run._pool import Jobs, WorkerPool

    file = tmp_path / "pid.py"
    file.write_text("import os\ndef pid(call, tool, context):\n    return os.getpid()\nACTIVITIES = {'pid': pid}\n")
    pool = WorkerPool(1, idle_seconds=0.2)
    request = {"file": str(file), "name": "pid", "call": {}, "tool": None, "context": []}
    first = asyncio.run(Jobs(pool).run(0, request, 60.0)).result
    assert ends(first)
    assert pool._idle == []
    second = asyncio.run(Jobs(pool).run(0, request, 60.0)).result
    pool.shutdown()
    assert second != first


def test_a_waiter_cancelled_as_it_is_woken_passes_its_turn_on() -> None:
    """A call waiting for a worker (all busy), woken by a release and cancelled before it ran (a race's loser, a
    cancelled run), took the wake-up with it: the next waiter waited for another release, for ever if none came.
    Its turn now goes to the next waiter, as does one sent to a loop that has closed."""
    from types import SimpleNamespace

    from contextdeck.engine.run._pool import WorkerPool

    async def scenario() -> None:
        pool = WorkerPool(1)
        worker: Any = SimpleNamespace(alive=True, idle_since=0.0)  # no process: the pool's turns are judged
        pool._idle.append(worker)
        held = await pool._acquire()
        first, second = asyncio.ensure_future(pool._acquire()), asyncio.ensure_future(pool._acquire())
        await asyncio.sleep(0)  # both wait for the one worker
        closed = asyncio.new_event_loop()
        closed.close()
        pool._waiting.appendleft((closed, asyncio.Future(loop=closed)))
        pool._release(held)  # the closed loop's waiter is passed over; `first` is woken...
        first.cancel()  # ...and cancelled before it runs
        for _ in range(5):
            await asyncio.sleep(0)
        assert second.done()
        assert second.result() is worker
        assert first.cancelled()

    asyncio.run(scenario())
