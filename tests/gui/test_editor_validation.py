"""The data editor's validation: off the GUI process, shown at the field the error's path names."""

from __future__ import annotations

import itertools
import os
import signal
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from PySide6.QtCore import QObject, QProcess, QTimer
from PySide6.QtWidgets import QLabel, QLineEdit

from contextdeck._child import child_command
from contextdeck.gui._editor import DataEditor, _validation
from contextdeck.gui._editor._validation import (
    LIMIT_MS,
    TIMED_OUT,
    Validator,
    Worker,
    shared_worker,
    start_validation_ahead,
)

pytestmark = pytest.mark.usefixtures("qapp")

WAIT = 20_000  # a worker process starting on a busy machine; the wait ends as soon as the signal comes
# workers that say they are ready and never answer, or never say it
NEVER_ANSWERS = (sys.executable, ["-c", "import sys; print('{\"ready\": true}', flush=True); sys.stdin.read()"])
NEVER_READY = (sys.executable, ["-c", "import sys; sys.stdin.read()"])
DIES_READY = (sys.executable, ["-c", "print('{\"ready\": true}', flush=True)"])  # says it is ready, and ends


def workers(monkeypatch: Any, *commands: tuple[str, list[str]]) -> list[int]:
    """Has the workers started next run `commands` in turn, then the real worker; returns the count started."""
    started = [0]

    def command(module: str) -> tuple[str, list[str]]:
        started[0] += 1
        return commands[started[0] - 1] if started[0] <= len(commands) else child_command(module)

    monkeypatch.setattr(_validation, "child_command", command)
    return started


@pytest.fixture
def fresh_shared_worker() -> Iterator[Worker]:
    """The application's worker, stopped before the test (its next request starts a process) and after it."""
    worker = shared_worker()
    worker.stop()
    yield worker
    worker.stop()


@pytest.fixture
def worker() -> Iterator[Worker]:
    """A worker of the test's own, stopped after it."""
    made = Worker()
    yield made
    made.stop()
    made.deleteLater()


def load(qtbot: Any, editor: DataEditor, value: Any, schema: dict[str, Any] | None) -> list[Any]:
    """Loads a value and waits for its validation; returns the problems."""
    with qtbot.waitSignal(editor.validation_changed, timeout=WAIT) as blocker:
        editor.set_value(value, schema)
    problems: list[Any] = blocker.args[0]
    return problems


SCHEMA = {
    "type": "object",
    "properties": {
        "orderId": {"type": "string", "pattern": "^[A-Z]-[0-9]{4}$"},
        "customer": {
            "type": "object",
            "properties": {"email": {"type": "string"}, "age": {"type": "integer", "minimum": 18}},
            "required": ["email"],
        },
        "lines": {
            "type": "array",
            "items": {"type": "object", "properties": {"qty": {"type": "integer", "minimum": 1}}},
        },
    },
    "required": ["orderId"],
    "additionalProperties": False,
}


def test_a_valid_value_has_no_problems(qtbot: Any, editor: DataEditor) -> None:
    """A value the schema accepts validates to an empty list and shows no error."""
    problems = load(qtbot, editor, {"orderId": "A-1042", "customer": {"email": "m@x"}}, SCHEMA)
    assert problems == []
    assert editor.errors() == []
    assert not editor.form.summary.isVisible()


def test_errors_show_at_nested_fields(qtbot: Any, editor: DataEditor) -> None:
    """An error inside a nested object shows under that field, with a red frame and in its tooltip."""
    load(qtbot, editor, {"orderId": "A-1042", "customer": {"email": "m@x", "age": 12}}, SCHEMA)
    assert editor.errors() == [(("customer", "age"), "12 is less than the minimum of 18")]
    slot = editor.form.locate(("customer", "age"))
    assert slot is not None
    assert slot.messages == ("12 is less than the minimum of 18",)
    assert slot.findChild(QLabel, "fieldError").isVisible()
    assert "minimum of 18" in slot.editor.toolTip()
    assert editor.form.locate(("orderId",)).messages == ()


def test_errors_show_at_array_items(qtbot: Any, editor: DataEditor) -> None:
    """An error in the second item of an array shows at that item's field, not the first's."""
    load(qtbot, editor, {"orderId": "A-1042", "lines": [{"qty": 2}, {"qty": 0}]}, SCHEMA)
    assert editor.form.locate(("lines", 1, "qty")).messages == ("0 is less than the minimum of 1",)
    assert editor.form.locate(("lines", 0, "qty")).messages == ()


def test_root_errors_go_to_the_summary(qtbot: Any, editor: DataEditor) -> None:
    """Errors about the whole value (a missing required key, an unknown key) show in the summary on top."""
    load(qtbot, editor, {"customer": {"email": "m@x"}, "zzz": 1}, SCHEMA)
    assert editor.form.summary.isVisible()
    assert "'orderId' is a required property" in editor.form.summary.text()
    assert "'zzz' was unexpected" in editor.form.summary.text()


def test_editing_a_field_revalidates(qtbot: Any, editor: DataEditor) -> None:
    """Fixing a field's value clears its error after the next validation."""
    load(qtbot, editor, {"orderId": "bad"}, SCHEMA)
    slot = editor.form.locate(("orderId",))
    assert "does not match" in slot.messages[0]
    line = slot.editor.findChild(QLineEdit)
    line.selectAll()
    with qtbot.waitSignal(editor.validation_changed, timeout=WAIT, check_params_cb=lambda p: p == []):
        qtbot.keyClicks(line, "B-2000")
    assert editor.form.locate(("orderId",)).messages == ()


def test_only_the_latest_request_is_reported(qtbot: Any, editor: DataEditor) -> None:
    """Several quick edits give one validation, of the last value."""
    reports: list[Any] = []
    editor.validation_changed.connect(reports.append)
    editor.set_value({"orderId": "bad"}, SCHEMA)
    editor.set_value({"orderId": "A-0001"}, SCHEMA)
    qtbot.waitUntil(lambda: reports != [], timeout=WAIT)
    # the worker answers in order, so a stale answer would come before the answer to this next request
    problems = load(qtbot, editor, {"orderId": "A-0001", "zzz": 1}, SCHEMA)
    assert reports == [[], problems]


CATASTROPHIC = {"type": "object", "properties": {"code": {"type": "string", "pattern": "^(a|a)+$"}}}
_slow_texts = itertools.count(40)


def slow_text() -> str:
    """A text `CATASTROPHIC`'s pattern backtracks on, new to the worker: one it searched already is kept, and
    answered at once."""
    return "a" * next(_slow_texts) + "!"


def test_a_catastrophic_pattern_does_not_block_the_event_loop(qtbot: Any, editor: DataEditor) -> None:
    """While `^(a|a)+$` backtracks on "aaa…!", the event loop keeps running, and the pattern's deadline is
    reported at its field."""
    load(qtbot, editor, {"code": "aaa"}, CATASTROPHIC)  # the worker is up
    ticks: list[int] = []
    timer = QTimer(interval=10)
    timer.timeout.connect(lambda: ticks.append(1))
    timer.start()
    with qtbot.waitSignal(editor.validation_changed, timeout=WAIT) as blocker:
        editor.set_value({"code": slow_text()}, CATASTROPHIC)
    timer.stop()
    ((path, message),) = blocker.args[0]
    assert path == ("code",)
    assert message.startswith("the pattern took too long")
    assert "'^(a|a)+$'" in message
    # the match ran for the whole 0.5 s budget: a blocked loop would not have ticked at all before the answer
    # (a few ticks, not fifty: on a loaded machine the thread gets a share of a core)
    assert len(ticks) >= 3
    # and the next validation works (the stuck worker was replaced)
    assert load(qtbot, editor, {"code": "aaa"}, CATASTROPHIC) == []


def test_a_worker_past_the_guard_is_replaced_and_the_summary_says_so(qtbot: Any, worker: Worker) -> None:
    """A validation still unanswered at the guard's limit is abandoned: "validation timed out" at the root, and
    the next request goes to a new worker, which answers it."""
    validator = Validator(debounce_ms=0, worker=worker)
    with qtbot.waitSignal(validator.finished, timeout=WAIT):
        validator.request({"code": "aaa"}, CATASTROPHIC)  # the worker is up
    first = worker._process
    worker._deadline.setInterval(200)  # under the pattern's 0.5 s of CPU: the guard comes first
    with qtbot.waitSignal(validator.finished, timeout=WAIT) as blocker:
        validator.request({"code": slow_text()}, CATASTROPHIC)
    assert blocker.args[0] == [((), TIMED_OUT)]
    worker._deadline.setInterval(LIMIT_MS)  # (a new worker's first check, on a busy machine)
    with qtbot.waitSignal(validator.finished, timeout=WAIT) as blocker:
        validator.request({"code": 1}, CATASTROPHIC)
    assert blocker.args[0] == [(("code",), "1 is not of type 'string'")]
    assert worker._process is not first


def test_one_worker_started_ahead_answers_every_editor(qtbot: Any, fresh_shared_worker: Worker) -> None:
    """The application's worker, started ahead once its window is idle, answers the first validation of every
    editor made after: none starts a process of its own."""
    worker = fresh_shared_worker
    started = worker.started + 1
    owner = QObject()
    start_validation_ahead(owner, lambda: False)
    qtbot.waitUntil(lambda: worker._ready, timeout=WAIT)
    assert worker.started == started
    for _ in range(3):
        editor = DataEditor()
        qtbot.addWidget(editor)
        assert load(qtbot, editor, {"orderId": 1}, SCHEMA) == [(("orderId",), "1 is not of type 'string'")]
    assert worker.started == started


def test_a_value_loaded_to_be_checked_at_once_skips_the_typing_debounce(qtbot: Any, editor: DataEditor) -> None:
    """A value loaded with `check_at_once` (an output dialog's first value, which Write waits for) is sent in the
    next turn, not after the debounce that gathers typing."""
    editor.validator._debounce_ms = 600_000  # the typing's debounce: never, within this test
    with qtbot.waitSignal(editor.validation_changed, timeout=WAIT) as blocker:
        editor.set_value({"orderId": 1}, SCHEMA, check_at_once=True)
    assert blocker.args[0] == [(("orderId",), "1 is not of type 'string'")]


def test_a_request_waiting_behind_a_long_one_is_answered_after_it(qtbot: Any, worker: Worker) -> None:
    """While the worker checks one editor's long request, another editor's waits and is answered once the worker
    is free: neither is lost, neither times out."""
    stuck, waiting = Validator(debounce_ms=0, worker=worker), Validator(debounce_ms=0, worker=worker)
    with qtbot.waitSignal(stuck.finished, timeout=WAIT):
        stuck.request({"code": "aaa"}, CATASTROPHIC)  # the worker is up
    answers: list[tuple[str, Any]] = []
    stuck.finished.connect(lambda problems: answers.append(("stuck", problems)))
    waiting.finished.connect(lambda problems: answers.append(("waiting", problems)))
    stuck.request({"code": slow_text()}, CATASTROPHIC)
    qtbot.waitUntil(stuck.is_running, timeout=WAIT)
    waiting.request({"code": 1}, CATASTROPHIC)
    qtbot.waitUntil(lambda: len(answers) == 2, timeout=WAIT)
    assert [who for who, _ in answers] == ["stuck", "waiting"]
    assert answers[0][1][0][1].startswith("the pattern took too long")
    assert answers[1][1] == [(("code",), "1 is not of type 'string'")]


def test_without_a_schema_there_is_nothing_to_validate(qtbot: Any, editor: DataEditor) -> None:
    """An inferred form reports no problems."""
    assert load(qtbot, editor, {"a": 1}, None) == []


def test_a_broken_schema_is_reported_not_raised(qtbot: Any, editor: DataEditor) -> None:
    """A schema that is not a valid JSON Schema is named in the summary."""
    problems = load(qtbot, editor, {"a": 1}, {"type": "object", "properties": {"a": {"type": "nonsense"}}})
    assert problems[0][1].startswith("the schema cannot be used: invalid schema")
    assert editor.form.summary.isVisible()


def test_errors_in_items_not_built_go_to_the_summary(qtbot: Any, editor: DataEditor) -> None:
    """An error in an array item beyond the built page is listed in the summary with its path."""
    lines = [{"qty": 1}] * 60 + [{"qty": 0}]
    load(qtbot, editor, {"orderId": "A-1042", "lines": lines}, SCHEMA)
    assert "lines[60].qty: 0 is less than the minimum of 1" in editor.form.summary.text()


def test_a_late_answer_for_an_older_schema_is_dropped(qtbot: Any, editor: DataEditor) -> None:
    """After switching to a value without schema, the answer still due for the previous value is not shown."""
    reports: list[Any] = []
    editor.validation_changed.connect(reports.append)
    load(qtbot, editor, {"code": "aaa"}, CATASTROPHIC)  # the worker is up
    reports.clear()
    editor.set_value({"code": slow_text()}, CATASTROPHIC)
    qtbot.waitUntil(lambda: editor.validator.is_running(), timeout=WAIT)  # sent, and stuck
    editor.set_value({"x": 1}, None)
    qtbot.waitUntil(lambda: reports == [[]], timeout=WAIT)
    # the stuck request times out silently; the next validation is the next thing reported
    problems = load(qtbot, editor, {"orderId": 5}, SCHEMA)
    assert reports == [[], problems]
    assert problems == [(("orderId",), "5 is not of type 'string'")]


def test_errors_inside_one_of_show_at_the_branch_field(qtbot: Any, editor: DataEditor) -> None:
    """An error inside the chosen oneOf branch is shown at that branch's field."""
    schema = {
        "type": "object",
        "properties": {
            "pay": {
                "oneOf": [
                    {
                        "type": "object",
                        "properties": {"m": {"const": "card"}, "last4": {"type": "string", "maxLength": 4}},
                    },
                    {"type": "object", "properties": {"m": {"const": "iban"}, "iban": {"type": "string"}}},
                ]
            }
        },
    }
    load(qtbot, editor, {"pay": {"m": "card", "last4": "123456"}}, schema)
    assert editor.form.locate(("pay", "last4")).messages == ("'123456' is too long",)


def test_formats_are_checked(qtbot: Any, editor: DataEditor) -> None:
    """`format: email` is checked, as in the refund example's input."""
    schema = {"type": "object", "properties": {"email": {"type": "string", "format": "email"}}}
    load(qtbot, editor, {"email": "maya at example"}, schema)
    assert editor.form.locate(("email",)).messages == ("'maya at example' is not a 'email'",)


def test_remote_refs_are_not_fetched(qtbot: Any, editor: DataEditor) -> None:
    """A `$ref` to a URL is reported as unresolvable instead of being downloaded."""
    schema = {"type": "object", "properties": {"a": {"$ref": "https://example.invalid/schema.json"}}}
    problems = load(qtbot, editor, {"a": 1}, schema)
    assert "$ref 'https://example.invalid/schema.json' cannot be resolved" in problems[0][1]


def test_the_refund_example_input_is_valid(qtbot: Any, editor: DataEditor, examples: Any) -> None:
    """The bundled refund workflow's input opens as a form with no problems."""
    from contextdeck.engine import load_document, payload_of

    message = load_document(examples / "refund_workflow.json").context[1]
    assert load(qtbot, editor, payload_of(message), message["schema"]) == []
    assert editor.form.locate(("customer", "tier")).editor.key == "enum"


def test_an_ambiguous_one_of_failure_shows_at_the_choice(qtbot: Any, editor: DataEditor) -> None:
    """When no single oneOf branch fits the value's discriminator, the failure shows at the oneOf field."""
    schema = {
        "type": "object",
        "properties": {
            "pay": {
                "oneOf": [
                    {"type": "object", "properties": {"m": {"const": "card"}}},
                    {"type": "object", "properties": {"m": {"const": "iban"}}},
                ]
            }
        },
    }
    load(qtbot, editor, {"pay": {"m": "cash"}}, schema)
    messages = editor.form.locate(("pay",)).messages
    assert len(messages) == 1
    assert "is not valid under any of the given schemas" in messages[0]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_an_editor_destroyed_mid_validation_leaves_the_worker_to_the_others(qtbot: Any, worker: Worker,
                                                                            qtlog: Any) -> None:
    """Destroying an editor (without closing it) while its request is being checked drops its answer, and the
    worker goes on for the others; stopped, it ends cleanly, before Qt would have to."""
    gone = Validator(debounce_ms=0, worker=worker)
    other = Validator(debounce_ms=0, worker=worker)
    with qtbot.waitSignal(gone.finished, timeout=WAIT):
        gone.request({"code": "aaa"}, CATASTROPHIC)  # the worker is up
    gone.request({"code": slow_text()}, CATASTROPHIC)
    qtbot.waitUntil(gone.is_running, timeout=WAIT)
    destroyed: list[bool] = []
    gone.destroyed.connect(lambda: destroyed.append(True))
    gone.deleteLater()
    qtbot.waitUntil(lambda: destroyed == [True])
    with qtbot.waitSignal(other.finished, timeout=WAIT) as blocker:
        other.request({"code": 1}, CATASTROPHIC)
    assert blocker.args[0] == [(("code",), "1 is not of type 'string'")]
    process = worker._process
    assert process is not None
    pid = process.processId()
    worker.stop()
    assert not _alive(pid)
    assert not [r for r in qtlog.records if "Destroyed while process" in r.message]


def test_validation_resumes_after_a_close(qtbot: Any, editor: DataEditor) -> None:
    """An editor closed mid-validation (its worker stopped) and shown again validates again."""
    load(qtbot, editor, {"code": "aaa"}, CATASTROPHIC)
    editor.set_value({"code": slow_text()}, CATASTROPHIC)
    qtbot.waitUntil(lambda: editor.validator.is_running(), timeout=WAIT)
    editor.close()
    editor.show()
    assert load(qtbot, editor, {"orderId": 1}, SCHEMA) == [(("orderId",), "1 is not of type 'string'")]


def test_set_value_never_reports_during_the_call(qtbot: Any, editor: DataEditor) -> None:
    """validation_changed comes after set_value returns, even when there is nothing to validate."""
    reports: list[Any] = []
    editor.validation_changed.connect(reports.append)
    editor.set_value({"x": 1}, None)
    assert reports == []
    qtbot.waitUntil(lambda: reports == [[]], timeout=WAIT)


def test_a_worker_killed_mid_validation_is_replaced_and_the_request_sent_again(
        qtbot: Any, editor: DataEditor, fresh_shared_worker: Worker, monkeypatch: Any) -> None:
    """A worker that dies once mid-validation is replaced and the request checked by the new one: the editor gets
    its answer, not an error."""
    workers(monkeypatch, NEVER_ANSWERS)
    worker = editor.validator.worker
    editor.set_value({"code": 1}, CATASTROPHIC)
    qtbot.waitUntil(editor.validator.is_running, timeout=WAIT)
    first = worker._process
    with qtbot.waitSignal(editor.validation_changed, timeout=WAIT) as blocker:
        os.kill(first.processId(), signal.SIGKILL)
    assert blocker.args[0] == [(("code",), "1 is not of type 'string'")]
    assert worker._process is not first


def test_a_worker_that_dies_twice_on_a_request_is_reported_and_replaced(
        qtbot: Any, editor: DataEditor, fresh_shared_worker: Worker, monkeypatch: Any) -> None:
    """A worker that dies on the same request twice is reported in the summary, and the next validation starts a
    new one."""
    workers(monkeypatch, NEVER_ANSWERS, NEVER_ANSWERS)
    worker = editor.validator.worker
    editor.set_value({"code": 1}, CATASTROPHIC)
    with qtbot.waitSignal(editor.validation_changed, timeout=WAIT) as blocker:
        for _ in range(2):
            qtbot.waitUntil(editor.validator.is_running, timeout=WAIT)
            os.kill(worker._process.processId(), signal.SIGKILL)
            qtbot.waitUntil(lambda: not editor.validator.is_running(), timeout=WAIT)
    assert blocker.args[0] == [((), "validation unavailable: the worker was killed; edit the value to check it again")]
    assert "validation unavailable" in editor.form.summary.text()
    assert load(qtbot, editor, {"code": "b"}, CATASTROPHIC) == [(("code",), "'b' does not match '^(a|a)+$'")]


def test_a_withdrawn_request_is_not_sent_again_when_its_worker_dies(qtbot: Any, worker: Worker,
                                                                    monkeypatch: Any) -> None:
    """A request whose editor has closed is not sent again when the worker dies on it, or is stopped: no process is
    started for an answer nobody wants."""
    workers(monkeypatch, NEVER_ANSWERS, NEVER_ANSWERS)
    validator = Validator(debounce_ms=0, worker=worker)
    validator.request({"code": 1}, CATASTROPHIC)
    qtbot.waitUntil(validator.is_running, timeout=WAIT)
    validator.shutdown()
    first = worker._process
    os.kill(first.processId(), signal.SIGKILL)
    qtbot.waitUntil(lambda: worker._process is not first, timeout=WAIT)
    assert worker._process is None
    assert worker.started == 1
    assert not worker._waiting
    validator.request({"code": 1}, CATASTROPHIC)
    qtbot.waitUntil(validator.is_running, timeout=WAIT)
    validator.shutdown()
    worker.stop()
    assert not worker._waiting


def test_a_worker_that_never_says_ready_is_reported_after_the_start_limit(qtbot: Any, monkeypatch: Any) -> None:
    """A worker that starts but never says it is ready leaves no request waiting for ever: after the start's own
    limit the editors waiting are told validation is unavailable because the worker did not start, and the process
    is gone; no other is started ahead (on a machine too slow to start one in time, the next request starts it)."""
    workers(monkeypatch, NEVER_READY)
    worker = Worker(start_limit_ms=200, revive_ms=50)
    validator = Validator(debounce_ms=0, worker=worker)
    with qtbot.waitSignal(validator.finished, timeout=WAIT) as blocker:
        validator.request({"code": 1}, CATASTROPHIC)
    assert blocker.args[0] == [((), "validation unavailable: the worker did not start within 0.2 s; "
                                    "edit the value to check it again")]
    qtbot.waitUntil(lambda: not worker.findChildren(QProcess), timeout=WAIT)
    assert not worker._revive.isActive()
    qtbot.wait(200)
    assert worker.started == 1
    worker.stop()


def test_a_worker_that_cannot_start_is_reported_to_every_editor_waiting(qtbot: Any, monkeypatch: Any) -> None:
    """A worker that fails to start tells each editor waiting that validation is unavailable, none is started again
    until the next request, and the process object that failed is deleted."""
    monkeypatch.setattr(_validation, "child_command", lambda module: ("/nonexistent/python", []))
    worker = Worker()
    first, second = Validator(debounce_ms=0, worker=worker), Validator(debounce_ms=0, worker=worker)
    answers: list[Any] = []
    for validator in (first, second):
        validator.finished.connect(answers.append)
    first.request({"code": 1}, CATASTROPHIC)
    second.request({"code": 1}, CATASTROPHIC)
    qtbot.waitUntil(lambda: len(answers) == 2, timeout=WAIT)
    assert all(problems[0][1].startswith("validation unavailable: ") for problems in answers)
    started = worker.started
    qtbot.wait(50)
    assert worker.started == started  # none started again at once: a start ahead waits (`REVIVE_MS`)
    qtbot.waitUntil(lambda: not worker.findChildren(QProcess), timeout=WAIT)
    worker.stop()


def test_a_slow_start_has_its_own_limit_not_the_checks(qtbot: Any, monkeypatch: Any) -> None:
    """A worker slower to say it is ready than a check may take still checks the request waiting for it: the
    start's wait is bounded by its own limit, and the check's time begins once it is sent."""
    slow = (sys.executable, ["-c", "import runpy, time; time.sleep(1.5); "
                                   "runpy.run_module('contextdeck._validation_worker', run_name='__main__')"])
    workers(monkeypatch, slow)
    worker = Worker(limit_ms=1_000, start_limit_ms=WAIT)
    validator = Validator(debounce_ms=0, worker=worker)
    with qtbot.waitSignal(validator.finished, timeout=WAIT) as blocker:
        validator.request({"code": 1}, CATASTROPHIC)
    assert blocker.args[0] == [(("code",), "1 is not of type 'string'")]
    worker.stop()


def test_a_worker_that_dies_while_idle_is_started_again_ahead(qtbot: Any, monkeypatch: Any) -> None:
    """A worker that ends while nothing waits for it is replaced ahead, with no request asking: the next request
    finds one ready and pays no start."""
    worker = Worker(revive_ms=50)
    worker.start()
    qtbot.waitUntil(lambda: worker._ready, timeout=WAIT)
    os.kill(worker._process.processId(), signal.SIGKILL)
    qtbot.waitUntil(lambda: worker.started == 2 and worker._ready, timeout=WAIT)
    validator = Validator(debounce_ms=0, worker=worker)
    with qtbot.waitSignal(validator.finished, timeout=WAIT) as blocker:
        validator.request({"code": 1}, CATASTROPHIC)
    assert blocker.args[0] == [(("code",), "1 is not of type 'string'")]
    assert worker.started == 2
    worker.stop()


def test_a_worker_that_keeps_dying_is_started_again_less_and_less_often(qtbot: Any, monkeypatch: Any) -> None:
    """Each worker that ends before answering anything is replaced after twice the wait of the one before, so a
    worker that keeps dying does not spin; one that answers a request makes the next wait the first again. A start
    ahead waits while the window is busy, and `stop` (the application quitting) starts none."""
    workers(monkeypatch, DIES_READY, DIES_READY, DIES_READY)
    worker = Worker(revive_ms=50)
    waits = []
    worker.start()
    for started in (1, 2, 3):
        qtbot.waitUntil(lambda started=started: worker._revive.isActive() and worker.started == started,  # type: ignore[misc]
                        timeout=WAIT)
        waits.append(worker._revive.interval())
    assert waits == [50, 100, 200]
    qtbot.waitUntil(lambda: worker.started == 4 and worker._ready, timeout=WAIT)  # the real worker
    validator = Validator(debounce_ms=0, worker=worker)
    with qtbot.waitSignal(validator.finished, timeout=WAIT):
        validator.request({"code": 1}, CATASTROPHIC)
    busy = [True]
    worker.busy = lambda: busy[0]
    os.kill(worker._process.processId(), signal.SIGKILL)
    qtbot.waitUntil(lambda: worker._process is None and worker._revive.isActive(), timeout=WAIT)
    assert worker._revive.interval() == 50
    qtbot.waitUntil(lambda: worker._revive.interval() == _validation.AHEAD_MS, timeout=WAIT)  # waits for the window
    assert worker._process is None
    busy[0] = False
    qtbot.waitUntil(lambda: worker.started == 5 and worker._ready, timeout=WAIT)
    worker.stop()
    assert not worker._revive.isActive()
    assert worker._process is None
    assert not worker._live
