"""`contextdeck run DOC [--activities FILE.py ...] [--out FILE] [--steps N] [--now ISO]`."""

import json
import os
import signal
import stat
import subprocess
import sys

import pytest

from contextdeck._cli import main

NOW = "2026-03-01T10:00:00Z"


def run(capsys, *argv):
    code = main(["run", *map(str, argv)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _written(path, doc):
    path.write_text(json.dumps(doc))
    return path


def test_run_writes_the_resulting_request_to_stdout(capsys, examples) -> None:
    """The refund request comes back as a request, with the outputs appended and dated by --now."""
    code, out, err = run(capsys, examples / "refund_workflow.json", "--now", NOW)
    result = json.loads(out)
    assert code == 0
    assert list(result) == ["schema", "context"]
    added = result["context"][5:]
    assert [m.get("_outputPath") for m in added] == ["†state.order", "†state.log", None, "†state.eligibility"]
    assert added[2]["type"] == "_run"  # notifyCustomer, latent without activities: a thought, recorded
    assert {m["_date"] for m in added} == {NOW}
    assert [m["_run"]["call"] for m in added] == [0, 1, 4, 2]
    assert "call 3 (issueRefund) is awaiting approval: †state.approvals.refund" in err


def test_run_writes_atomically_to_out(capsys, examples, tmp_path) -> None:
    """--out receives the document (nothing on stdout); no temporary file is left behind."""
    target = tmp_path / "out.json"
    code, out, _ = run(capsys, examples / "refund_workflow.json", "--out", target)
    assert (code, out) == (0, "")
    assert len(json.loads(target.read_text())["context"]) == 9
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_run_keeps_a_bare_array_an_array(capsys, tmp_path) -> None:
    """A bare-context document is written back as an array."""
    path = tmp_path / "bare.json"
    path.write_text(json.dumps([{"type": "plan", "plan": [{"_tool": "t", "_outputPath": "†state.a", "_output": 1}]}]))
    code, out, _ = run(capsys, path)
    result = json.loads(out)
    assert code == 0
    assert isinstance(result, list)
    assert result[1]["data"] == {"a": 1}


def test_run_keeps_jsonl_lines(capsys, tmp_path) -> None:
    """A JSON Lines document is written back one message per line."""
    path = tmp_path / "doc.jsonl"
    plan = {"type": "plan", "plan": [{"_tool": "t", "_outputPath": "†state.a", "_output": 1}]}
    path.write_text(json.dumps(plan) + "\n")
    code, out, _ = run(capsys, path)
    lines = out.splitlines()
    assert code == 0
    assert len(lines) == 2
    assert json.loads(lines[1])["_outputPath"] == "†state.a"


def test_steps_limits_how_many_calls_run(capsys, examples) -> None:
    """--steps 1 runs only the first ready call."""
    code, out, _ = run(capsys, examples / "refund_workflow.json", "--steps", 1)
    assert code == 0
    assert [m.get("_outputPath") for m in json.loads(out)["context"][5:]] == ["†state.order"]


def test_activities_file_runs_and_fire_and_forget_is_awaited(capsys, examples, tmp_path) -> None:
    """With approval given and the example activities, the refund is paid; notifyCustomer finishes before exit."""
    doc = json.loads((examples / "refund_workflow.json").read_text())
    doc["context"].insert(3, {"type": "state", "data": {"approvals": {"refund": "lead"}}})
    path = _written(tmp_path / "approved.json", doc)
    log = tmp_path / "sent.txt"
    notifier = tmp_path / "notify.py"
    notifier.write_text(
        "import asyncio\n"
        "async def notify(call, tool, context):\n"
        "    for _ in range(3):\n"
        "        await asyncio.sleep(0)\n"
        f"    open({str(log)!r}, 'w').write(call['email'])\n"
        "ACTIVITIES = {'notifyCustomer': notify}\n"
    )
    code, out, err = run(capsys, path, "--activities", examples / "refund_activities.py", notifier)
    assert code == 0, err
    refund = [m for m in json.loads(out)["context"] if m.get("_outputPath") == "†state.refund"]
    assert refund[0]["data"]["refund"]["refundId"] == "R-A-1042"
    assert log.read_text() == "maya@example.com"


def test_errors_and_blocked_calls_are_reported_on_stderr(capsys, tmp_path) -> None:
    """A failing call and a blocked call are named on stderr; the exit code stays 0."""
    doc = [{"type": "plan", "plan": [
        {"_tool": "t", "_outputPath": "†state.a", "_outputMethod": "bogus", "_output": 1},
        {"_tool": "u", "x": "†input.x", "_outputPath": "†state.b", "_output": 1},
    ]}]
    path = _written(tmp_path / "doc.json", doc)
    code, out, err = run(capsys, path)
    assert code == 0
    assert "call 0 (t) failed: outputMethod: unknown _outputMethod 'bogus'; expected one of set, merge, assign, " \
           "push, concat\n" in err  # as validate says it, not a Python list
    assert "call 1 (u) is blocked, waiting for †input.x" in err
    assert json.loads(out)[1]["type"] == "error"


def test_an_input_that_breaks_its_schema_is_refused_before_anything_runs(capsys, tmp_path) -> None:
    """006: the input is the prompt the request promised to take; `run` refuses a document whose input (global or
    an instance's) breaks its schema, with validate's words, exit 1, no call run and nothing written."""
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    path = _written(tmp_path / "doc.json", [
        {"type": "input", "input": {"n": 1}, "schema": schema},
        {"type": "input", "_instance": "②", "input": {"n": "five"}},
        {"type": "plan", "plan": [{"_tool": "t", "x": "†input.n", "_outputPath": "†state.r", "_output": 1}]}])
    for steps in ((), ("--steps", 1)):
        code, out, err = run(capsys, path, *steps)
        assert (code, out) == (1, "")
        assert err.splitlines() == [
            f"contextdeck: {path}: message 1: ¶input[②].n: 'five' is not of type 'integer' "
            "(the schema of message 0)",
            f"contextdeck: {path}: the input breaks its schema (006): nothing was run"]
    assert main(["validate", str(path)]) == 1
    assert f"{path}: message 1: ¶input[②].n: 'five'" in capsys.readouterr().out
    assert len(json.loads(path.read_text())) == 3


def test_refused_cycle_is_reported(capsys, tmp_path) -> None:
    """A cycle is named on stderr and nothing runs."""
    doc = [{"type": "plan", "plan": [
        {"_tool": "x", "v": "†state.b", "_outputPath": "†state.a", "_output": 1},
        {"_tool": "y", "v": "†state.a", "_outputPath": "†state.b", "_output": 1},
    ]}]
    path = _written(tmp_path / "doc.json", doc)
    code, _, err = run(capsys, path)
    assert code == 0
    assert err.count("form a cycle") == 1
    assert "refused: calls 0 (x), 1 (y) form a cycle: call 1 feeds call 0 through †state.b" in err


def test_a_cycle_or_group_of_copies_is_reported_as_written(capsys, tmp_path) -> None:
    """The calls a run repeats per instance (013) are named as the plan is written, with the instance each copy
    runs for: a refused cycle, a group's members and the links between them."""
    instances = [{"type": "state", "_instance": "①", "data": {"x": 1}},
                 {"type": "state", "_instance": "②", "data": {"x": 2}}]
    cycle = _written(tmp_path / "cycle.json", [*instances, {"type": "plan", "plan": [
        {"_tool": "a", "q": "†state.x", "_outputPath": "†state.y", "_output": 1},
        {"_tool": "b", "q": "†state.y", "_outputPath": "†state.x", "_output": 1}]}])
    _, _, err = run(capsys, cycle)
    assert [line for line in err.splitlines() if "refused" in line] == [
        f"contextdeck: refused: calls 0 (a), 1 (b) for instance {instance} form a cycle: call 1 feeds call 0 "
        "through †state.x; call 0 feeds call 1 through †state.y" for instance in "①②"]
    group = _written(tmp_path / "group.json", [*instances, {"type": "plan", "plan": [
        {"_tool": "z", "_outputPath": "†input.z", "_output": 1}, {"all": [
            {"_tool": "a", "q": "†state.x", "_outputPath": "†state.y", "_output": 1},
            {"_tool": "b", "q": "†state.y", "_outputPath": "†state.w", "_output": 1}]}]}])
    _, _, err = run(capsys, group)
    feeding = "group: calls of one 'all' group run together and cannot feed each other: call 1 feeds call 2"
    assert [line for line in err.splitlines() if "failed" in line] == [
        f"contextdeck: call {number} ({tool}) for instance {instance} failed: {feeding}"
        for instance in "①②" for number, tool in ((1, "a"), (2, "b"))]


def test_a_call_blocked_on_what_its_instance_never_finds_is_said_so(capsys, tmp_path) -> None:
    """A call whose `_instance` no data message has, reading a path only another instance has, is blocked for
    ever: when the run stops it says why, once, with the reference's position."""
    doc = _written(tmp_path / "doc.json", [
        {"type": "data", "kind": "state", "_instance": "①", "data": {"x": 1}},
        {"type": "plan", "plan": [{"_tool": "t", "_instance": "③", "q": "†state.x", "_outputPath": "†state.y"}]}])
    _, _, err = run(capsys, doc)
    assert [line for line in err.splitlines() if "blocked" in line] == [
        "contextdeck: call 0 (t) is blocked, waiting for †state.x: †state.x (at position 0) is never found for "
        "instance ③ (no data message has it): only instance ① has it, and no global data or output path writes "
        "it, so the call would wait forever (013)"]


@pytest.mark.parametrize("steps", [(), ("--steps", "5")])
def test_the_conflicts_the_runs_outputs_make_are_said_once(capsys, tmp_path, steps) -> None:
    """An output the fold cannot apply (a `push` onto a number, a `concat` of a string) is appended like any
    output; the run says each one it made, once, at its end, with the message index and the path, as `validate`
    does (and nothing of the conflicts the document held before)."""
    doc = _written(tmp_path / "doc.json", [
        {"type": "state", "data": {"x": 5, "s": "a"}},
        {"type": "state", "data": {"x": {"y": 1}}, "_outputPath": "†state.x", "_outputMethod": "concat"},
        {"type": "plan", "plan": [
            {"_tool": "t", "_outputPath": "†state.x", "_outputMethod": "push", "_output": 1},
            {"_tool": "t", "_outputPath": "†state.s", "_outputMethod": "concat", "_output": "b"},
            {"_tool": "t", "_outputPath": "†state.ok", "_outputMethod": "push", "_output": 3}]}])
    _, _, err = run(capsys, doc, *steps)
    assert [line for line in err.splitlines() if "fold skips" in line] == [
        "contextdeck: message 3: ¶state: push at x: push onto a number, not an array (an output of this run: the "
        "fold skips it)",
        "contextdeck: message 4: ¶state: concat at s: concat of a string, not an array (an output of this run: the "
        "fold skips it)"]


def test_unloadable_activities_file_exits_1(capsys, examples, tmp_path) -> None:
    """A broken activities file stops the run before anything happens, with exit 1 and the reason."""
    bad = tmp_path / "bad.py"
    bad.write_text("def (:\n")
    code, out, err = run(capsys, examples / "refund_workflow.json", "--activities", bad)
    assert (code, out) == (1, "")
    assert f"cannot load activities from {bad}:1:5: syntax error: " in err


def test_unreadable_document_exits_1(capsys, tmp_path) -> None:
    """A missing document is exit 1 with the file named."""
    code, _, err = run(capsys, tmp_path / "missing.json")
    assert code == 1
    assert "missing.json" in err


def test_bad_now_is_a_usage_error(capsys, examples) -> None:
    """--now must be ISO 8601."""
    with pytest.raises(SystemExit) as caught:
        main(["run", str(examples / "refund_workflow.json"), "--now", "yesterday"])
    assert caught.value.code == 2
    assert "not an ISO 8601" in capsys.readouterr().err


def test_run_as_a_process(examples) -> None:
    """The installed command runs the refund plan end to end."""
    result = subprocess.run(
        [sys.executable, "-m", "contextdeck", "run", str(examples / "refund_workflow.json"), "--now", NOW],
        capture_output=True, text=True, check=False,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["context"][-1]["_outputPath"] == "†state.eligibility"


def _approved_refund(tmp_path, examples):
    """The refund example with the approval given, and activities that append a line to a log per side effect."""
    doc = json.loads((examples / "refund_workflow.json").read_text())
    doc["context"].insert(3, {"type": "state", "data": {"approvals": {"refund": "lead"}}})
    log = tmp_path / "effects.txt"
    effects = tmp_path / "effects.py"
    effects.write_text(
        "def pay(call, tool, context):\n"
        f"    open({str(log)!r}, 'a').write('paid\\n')\n"
        "    return {'refundId': 'R-' + call['orderId']}\n"
        "def notify(call, tool, context):\n"
        f"    open({str(log)!r}, 'a').write('mailed\\n')\n"
        "ACTIVITIES = {'issueRefund': pay, 'notifyCustomer': notify}\n"
    )
    return _written(tmp_path / "approved.json", doc), effects, log


def test_run_on_its_own_output_appends_nothing_and_repeats_no_side_effect(capsys, examples, tmp_path) -> None:
    """Run, then run the result: the second document is identical and no activity ran again."""
    path, effects, log = _approved_refund(tmp_path, examples)
    first = tmp_path / "first.json"
    code, _, err = run(capsys, path, "--activities", effects, "--out", first)
    assert code == 0, err
    assert sorted(log.read_text().split()) == ["mailed", "paid"]
    second = tmp_path / "second.json"
    code, _, err = run(capsys, first, "--activities", effects, "--out", second)
    assert code == 0, err
    assert second.read_text() == first.read_text()
    assert sorted(log.read_text().split()) == ["mailed", "paid"]
    assert "0 call(s) run" in err


@pytest.mark.parametrize("out", ["missing/out.json", ".", "read-only.json", "linked.json"])
def test_an_out_that_cannot_be_written_is_refused_before_anything_runs(capsys, examples, tmp_path, out) -> None:
    """A folder that does not exist, a folder, a read-only file, a link to a file in a folder that does not
    exist (the link's own folder is writable: the file replaced is the link's target): said before any call
    runs, so that no side effect is made whose output would then be lost."""
    path, effects, log = _approved_refund(tmp_path, examples)
    (tmp_path / "read-only.json").write_text("[]")
    (tmp_path / "read-only.json").chmod(0o444)
    (tmp_path / "linked.json").symlink_to(tmp_path / "gone" / "out.json")
    code, _, err = run(capsys, path, "--activities", effects, "--out", tmp_path / out)
    assert code == 1
    assert f"cannot write {tmp_path / out}" in err
    assert not log.exists()
    assert (tmp_path / "read-only.json").read_text() == "[]"


def test_run_where_the_first_call_has_run_runs_only_the_rest(capsys, examples, tmp_path) -> None:
    """--steps 1 runs lookupOrder; running that output runs the other calls, and lookupOrder once in all."""
    path, effects, log = _approved_refund(tmp_path, examples)
    one = tmp_path / "one.json"
    code, _, err = run(capsys, path, "--activities", effects, "--steps", "1", "--out", one)
    assert code == 0, err
    rest = tmp_path / "rest.json"
    code, _, err = run(capsys, one, "--activities", effects, "--out", rest)
    assert code == 0, err
    assert "4 call(s) run" in err
    written = [m["_run"]["call"] for m in json.loads(rest.read_text())["context"] if "_run" in m]
    assert sorted(written) == [0, 1, 2, 3, 4]
    assert sorted(log.read_text().split()) == ["mailed", "paid"]


def test_timeout_fails_a_slow_activity_and_names_the_blocked_reader(capsys, tmp_path) -> None:
    """--timeout 0.2: a hung activity fails with a timeout error; the call reading its output names it."""
    slow = tmp_path / "slow.py"
    slow.write_text("import time\ndef hang(call, tool, context):\n    time.sleep(30)\nACTIVITIES = {'hang': hang}\n")
    doc = _written(tmp_path / "doc.json", [{"type": "plan", "plan": [
        {"_tool": "hang", "_outputPath": "†state.a"}, {"_tool": "use", "a": "†state.a", "_output": 1}]}])
    code, out, err = run(capsys, doc, "--activities", slow, "--timeout", "0.2")
    assert code == 0
    assert "call 0 (hang) failed: timeout: activity 'hang' did not finish within 0.2 s" in err
    assert "call 1 (use) is blocked, waiting for †state.a (its writer call 0 failed)" in err
    assert json.loads(out)[1]["data"]["error"]["type"] == "timeout"


@pytest.mark.parametrize("value", ["0", "-1", "soon", "nan"])
def test_timeout_must_be_a_positive_number(capsys, examples, value) -> None:
    """--timeout takes seconds above zero; anything else is a usage error."""
    with pytest.raises(SystemExit) as caught:
        main(["run", str(examples / "refund_workflow.json"), "--timeout", value])
    assert caught.value.code == 2


PRINTER = "import sys\ndef shout(call, tool, context):\n    print('LOUD')\n    print('ALSO', file=sys.stderr)\n" \
          "    return 1\nACTIVITIES = {'shout': shout}\n"


def _shout(tmp_path, activities: str, *options: str) -> subprocess.CompletedProcess[str]:
    """`contextdeck run` of one call of the activity `shout` (defined by `activities`) writing †state.a; it
    finished."""
    acts = tmp_path / "acts.py"
    acts.write_text(activities)
    doc = _written(tmp_path / "doc.json", [{"type": "plan", "plan": [{"_tool": "shout", "_outputPath": "†state.a"}]}])
    result = subprocess.run([sys.executable, "-m", "contextdeck", "run", str(doc), "--activities", str(acts),
                             *options], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    return result


def test_what_activities_print_never_corrupts_the_document_on_stdout(tmp_path) -> None:
    """An activity printing to stdout: the document on stdout is still JSON, what it printed is in the call's
    record (in its worker), and stderr carries only the command's report."""
    result = _shout(tmp_path, PRINTER)
    written = json.loads(result.stdout)
    assert (written[1]["_run"]["stdout"], written[1]["_run"]["stderr"]) == ("LOUD\n", "ALSO\n")
    assert "LOUD" not in result.stderr


def test_in_process_activities_print_to_stderr_not_into_the_document(tmp_path) -> None:
    """--in-process: the activity runs in the command's own process; what it prints goes to stderr, and the
    document on stdout is still JSON."""
    result = _shout(tmp_path, PRINTER, "--in-process")
    assert json.loads(result.stdout)[1]["data"] == {"a": 1}
    assert "LOUD" in result.stderr
    assert "ALSO" in result.stderr


def test_in_process_output_that_bypasses_sys_stdout_goes_to_stderr_too(tmp_path) -> None:
    """--in-process: an activity writing to file descriptor 1 itself, or starting a program that prints, leaves
    the document on stdout whole; before, those bytes came first and stdout was no longer JSON."""
    raw = ("import os, subprocess, sys\ndef shout(call, tool, context):\n    os.write(1, b'RAW\\n')\n"
           "    subprocess.run([sys.executable, '-c', 'print(\"CHILD\")'], check=True)\n    return 1\n"
           "ACTIVITIES = {'shout': shout}\n")
    result = _shout(tmp_path, raw, "--in-process")
    assert json.loads(result.stdout)[1]["data"] == {"a": 1}
    assert "RAW\n" in result.stderr
    assert "CHILD\n" in result.stderr


def test_a_busy_async_activity_obeys_the_timeout(capsys, tmp_path) -> None:
    """An async activity that never yields: --timeout 1 ends it (its worker is killed), the run ends."""
    busy = tmp_path / "busy.py"
    busy.write_text("async def spin(call, tool, context):\n    while True:\n        pass\n"
                    "ACTIVITIES = {'spin': spin}\n")
    doc = _written(tmp_path / "doc.json", [{"type": "plan", "plan": [{"_tool": "spin", "_outputPath": "†state.a"}]}])
    code, _, err = run(capsys, doc, "--activities", busy, "--timeout", "1")
    assert code == 0
    assert "call 0 (spin) failed: timeout: activity 'spin' did not finish within 1 s" in err


@pytest.mark.parametrize(("line", "reason"), [
    ("raise SystemExit(3)", "importing it called exit(3)"),
    ("import sys; sys.exit('bye')", "importing it called exit('bye')"),
    ("class E(Exception):\n    def __str__(self): raise RuntimeError\nraise E()",
     "importing it raised E: E (its message cannot be printed)"),
])
def test_an_activities_file_that_exits_or_fails_oddly_when_imported_exits_1(capsys, examples, tmp_path, line,
                                                                           reason) -> None:
    """A file that calls `sys.exit()` at import, or raises an exception that cannot be printed, is a file that
    cannot be loaded: exit 1 with the reason, not the exit code the file chose or a traceback."""
    bad = tmp_path / "exits.py"
    bad.write_text(line + "\n")
    code, out, err = run(capsys, examples / "refund_workflow.json", "--activities", bad)
    assert (code, out) == (1, "")
    assert f"cannot load activities from {bad}: {reason}" in err


@pytest.mark.parametrize(("stop", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_ctrl_c_or_sigterm_writes_what_the_run_had_made_before_it_stops(tmp_path, stop, code) -> None:
    """SIGINT (Ctrl-C) or SIGTERM (a supervisor's stop) while the second call's activity runs: exit 130 or 143,
    and --out holds the first call's output (run again, the first call would otherwise be made twice), written
    whole; the second call's is not there. SIGTERM used to end the process at once, writing nothing."""
    import time

    started = tmp_path / "started"
    acts = tmp_path / "acts.py"
    acts.write_text("import pathlib, time\n"
                    "def fast(call, tool, context):\n    return 1\n"
                    f"def slow(call, tool, context):\n    pathlib.Path({str(started)!r}).write_text('')\n"
                    "    time.sleep(60)\n    return 2\n"
                    "ACTIVITIES = {'fast': fast, 'slow': slow}\n")
    doc = _written(tmp_path / "doc.json", [{"type": "plan", "plan": [
        {"_tool": "fast", "_outputPath": "†state.a"},
        {"_tool": "slow", "x": "†state.a", "_outputPath": "†state.b"}]}])
    out = tmp_path / "out.json"
    # A child inherits an ignored SIGINT (a shell's background job): start it as from a terminal.
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        process = subprocess.Popen([sys.executable, "-m", "contextdeck", "run", str(doc), "--activities", str(acts),
                                    "--out", str(out)], stderr=subprocess.PIPE, text=True)
    finally:
        signal.signal(signal.SIGINT, inherited)
    deadline = time.monotonic() + 60
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(stop)
    _, err = process.communicate(timeout=60)
    assert process.returncode == code, err
    assert f"contextdeck: interrupted (what it had made is written to {out})" in err
    assert "Traceback" not in err
    written = json.loads(out.read_text())
    assert [m.get("_outputPath") for m in written[1:]] == ["†state.a"]
    assert written[1]["data"] == {"a": 1}


class _Signalled:
    """A stdout, or the file writer behind --out, that is sent `stops` (Ctrl-C, SIGTERM) halfway through what it is
    given, as a signal comes while a large document is written."""

    def __init__(self, stops: tuple[int, ...], write=None) -> None:
        self.stops, self.written, self.parts = stops, write, []

    def __call__(self, path, data: bytes) -> None:  # in place of `write_atomically`
        for stop in self.stops:
            signal.raise_signal(stop)
        self.written(path, data)

    def write(self, text: str) -> int:
        self.parts.append(text[: len(text) // 2])
        for stop in self.stops:
            signal.raise_signal(stop)
        self.parts.append(text[len(text) // 2 :])
        return len(text)

    def flush(self) -> None:
        pass


@pytest.fixture
def interruptible():
    """Ctrl-C raising KeyboardInterrupt, as in a command started from a terminal: a test worker may ignore SIGINT
    (as a shell's background job does), and a command keeps the handlers it was given."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def _one_call(tmp_path):
    acts = tmp_path / "acts.py"
    acts.write_text("def fast(call, tool, context):\n    return 1\nACTIVITIES = {'fast': fast}\n")
    doc = _written(tmp_path / "doc.json", [{"type": "plan", "plan": [{"_tool": "fast", "_outputPath": "†state.a"}]}])
    return doc, acts


@pytest.mark.parametrize(("stop", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_interrupt_while_out_is_written_comes_after_the_whole_document(capsys, monkeypatch, tmp_path, stop,
                                                                           code, interruptible) -> None:
    """Ctrl-C or SIGTERM while the finished run's document is written to --out: the write ends first, whole, with
    the call's output, then the command stops as interrupted (130, 143). It used to leave no file at all."""
    import contextdeck._out

    doc, acts = _one_call(tmp_path)
    out = tmp_path / "out.json"
    monkeypatch.setattr(contextdeck._out, "write_atomically", _Signalled((stop,), contextdeck._out.write_atomically))
    result, _, err = run(capsys, doc, "--activities", acts, "--out", out)
    assert result == code, err
    assert f"contextdeck: interrupted (what it had made is written to {out})" in err
    assert json.loads(out.read_text())[1]["data"] == {"a": 1}


@pytest.mark.parametrize(("stop", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_interrupt_while_stdout_is_written_never_cuts_the_document(capsys, monkeypatch, tmp_path, stop,
                                                                       code, interruptible) -> None:
    """Ctrl-C or SIGTERM halfway through the document on stdout: all of it is written, then the command stops as
    interrupted. It used to stop there, leaving half a JSON."""
    doc, acts = _one_call(tmp_path)
    stdout = _Signalled((stop,))
    monkeypatch.setattr(sys, "stdout", stdout)
    result, _, err = run(capsys, doc, "--activities", acts)
    assert result == code, err
    assert "contextdeck: interrupted (what it had made is written to stdout)" in err
    assert json.loads("".join(stdout.parts))[1]["data"] == {"a": 1}


def test_a_second_interrupt_while_the_document_is_written_stops_at_once(capsys, monkeypatch, tmp_path,
                                                                        interruptible) -> None:
    """A second Ctrl-C does not wait for the write (a FIFO nobody reads would hold the command for ever): the
    command stops there, and says only that it was interrupted."""
    doc, acts = _one_call(tmp_path)
    stdout = _Signalled((signal.SIGINT, signal.SIGINT))
    monkeypatch.setattr(sys, "stdout", stdout)
    result, _, err = run(capsys, doc, "--activities", acts)
    assert result == 130, err
    assert err.endswith("contextdeck: interrupted\n")
    assert len(stdout.parts) == 1


@pytest.mark.parametrize(("returns", "said"), [
    ("{1: 'a'}", "result: key 1 is not a string"),
    ("{'x': {True: 1}}", "result.x: key True is not a string"),
])
def test_an_in_process_result_with_a_key_that_is_not_a_string_fails_its_call(capsys, tmp_path, returns,
                                                                            said) -> None:
    """--in-process, an activity returning a dict with a key that is not a string: its call fails with the
    reason and the rest of the document is written (exit 0). Before, the error message kept the result in its
    `_run` audit and the run stopped on it ("the run stopped: ContentError ... a key that is not a string")."""
    acts = tmp_path / "acts.py"
    acts.write_text(f"def keyed(call, tool, context):\n    return {returns}\nACTIVITIES = {{'keyed': keyed}}\n")
    doc = _written(tmp_path / "doc.json", [{"type": "plan", "plan": [{"_tool": "keyed", "_outputPath": "†state.k"}]}])
    code, out, err = run(capsys, doc, "--activities", acts, "--in-process", "--now", NOW)
    assert code == 0, err
    assert f"call 0 (keyed) failed: output: {said}" in err
    (error,) = json.loads(out)[1:]
    assert error["type"] == "error"
    assert "result" not in error["_run"]


def test_a_ready_member_of_a_group_another_member_holds_back_is_said(capsys, tmp_path) -> None:
    """SPEC 6.10: a group starts when all its members are ready. A ready member whose group mate is blocked does
    not run, and the run says what it waits for, as it says of the blocked one."""
    group = {"all": [{"_tool": "t", "_output": "†state.never", "_outputPath": "†state.a"},
                     {"_tool": "t", "_output": 1, "_outputPath": "†state.b"}]}
    path = _written(tmp_path / "doc.json", [{"type": "plan", "plan": [group]}])
    code, out, err = run(capsys, path)
    assert (code, len(json.loads(out))) == (0, 1)
    assert "call 0 (t) is blocked, waiting for †state.never" in err
    assert "call 1 (t) is ready, but its group starts together: it waits for call 0" in err


def test_a_branch_not_taken_is_said_and_holds_no_reader_back(capsys, tmp_path) -> None:
    """012's branching plan runs to its end: the call on the branch the weather did not take is named as such, and
    the call both branches feed runs on what the branch taken wrote."""
    doc = _written(tmp_path / "weather.json", [{"type": "input", "input": {"city": "Paris"}}, {"type": "plan", "plan": [
        {"_tool": "getWeather", "city": "†input.city", "_output": "sun", "_outputPath": "†state.sunny || †state.rainy"},
        {"_tool": "findPark", "w": "†state.sunny", "_output": "park", "_outputPath": "†state.suggestion"},
        {"_tool": "findMovie", "w": "†state.rainy", "_output": "movie", "_outputPath": "†state.suggestion"},
        {"_tool": "present", "s": "†state.suggestion", "_output": "†state.suggestion", "_outputPath": "†out.shown"}]}])
    code, out, err = run(capsys, doc, "--now", NOW)
    assert code == 0, err
    assert ("call 2 (findMovie) is blocked, waiting for †state.rainy (a branch not taken: no call left in the plan "
            "writes it)") in err
    assert [m["data"] for m in json.loads(out) if m.get("kind") == "out"] == [{"shown": "park"}]


def test_an_out_that_is_a_device_is_written_into(capsys, examples, full_device) -> None:
    """--out naming a device (here one like /dev/full) writes into it, as a shell's `>` does: its own failure is
    said, and it stays a device rather than becoming a regular file that took the document."""
    code, _, err = run(capsys, examples / "refund_workflow.json", "--now", NOW, "--out", full_device)
    assert code == 1
    assert f"contextdeck: cannot write {full_device}: No space left on device" in err
    assert stat.S_ISCHR(full_device.stat().st_mode)


@pytest.mark.skipif(not os.path.exists("/proc/self/fd/1"), reason="needs /proc/self/fd (Linux)")
def test_an_out_that_links_to_the_commands_stdout_gets_the_document(examples, tmp_path) -> None:
    """--out naming a link to the process's own stdout (as /dev/stdout is) writes the whole document into the
    pipe it is, where the link's target (`pipe:[N]`) is no file a temporary could be made beside."""
    link = tmp_path / "stdout"
    link.symlink_to("/proc/self/fd/1")
    done = subprocess.run([sys.executable, "-m", "contextdeck", "run", str(examples / "refund_workflow.json"),
                           "--now", NOW, "--out", str(link)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert len(json.loads(done.stdout)["context"]) == 9
    assert link.is_symlink()
