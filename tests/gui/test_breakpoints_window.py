"""Breakpoints follow their call's identity and are kept in the document's sidecar settings; conditions; failures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import test_inspector_window as shared
from PySide6.QtCore import Qt
from test_run_record_window import open_document, trigger

from contextdeck.engine import Decision, Replace
from contextdeck.gui._inspector._breakpoints import entries_of, place
from contextdeck.gui._window import MainWindow

parts = shared.parts


@pytest.fixture
def window(refund_window: MainWindow) -> MainWindow:
    return refund_window


def plan_index(window: MainWindow) -> int:
    return next(i for i in range(len(window.context())) if window.context()[i].get("type") == "plan")


def test_place_follows_inserts_and_edits() -> None:
    """A kept breakpoint goes to the same call after an insert before it, and to an edited call at its row."""
    a, b, c = {"_tool": "a"}, {"_tool": "b", "x": 1}, {"_tool": "c"}
    kept = entries_of({1: "†state.go"}, [a, b, c])
    assert kept == [{"call": b, "index": 1, "condition": "†state.go"}]
    assert place(kept, [{"_tool": "new"}, a, b, c]) == {2: "†state.go"}
    assert place(kept, [a, {"_tool": "b", "x": 2}, c]) == {1: "†state.go"}
    assert place(kept, [a, c]) == {}
    assert place("not a list", [a]) == {}


def test_a_breakpoint_follows_its_call_and_is_there_after_reopening(qtbot: Any, window: MainWindow,
                                                                    tmp_path: Path) -> None:
    """Break on checkEligibility (row 2), insert a call before it: the breakpoint moves to row 3; save, reopen:
    it is still on checkEligibility, and Continue stops there."""
    inspector = parts(window)
    assert window.session.save_as(tmp_path / "refund.json")
    inspector.panel.view.clicked.emit(inspector.model.index(2, 0))  # the gutter
    assert inspector.model.breakpoints == {2}
    index = plan_index(window)
    plan = json.loads(json.dumps(window.context()[index]))
    plan["plan"].insert(0, {"_tool": "think", "_output": "first, a thought"})
    window.apply_edit(Replace(index, plan))
    qtbot.waitUntil(lambda: inspector.model.rowCount() == 6)
    assert inspector.model.breakpoints == {3}
    assert window.session.save()
    window.session.sidecar.flush()
    open_document(qtbot, window, tmp_path / "refund.json")
    inspector = parts(window)
    qtbot.waitUntil(lambda: inspector.model.rowCount() == 6)
    assert inspector.model.breakpoints == {3}
    assert inspector.model.plan(3).tool_name == "checkEligibility"
    trigger(qtbot, window, "Continue")
    assert inspector.debugger.last_stop == "breakpoint at #3"


def test_a_conditional_breakpoint_stops_only_when_true(qtbot: Any, window: MainWindow) -> None:
    """A breakpoint on checkEligibility whose condition is not found lets Continue run past it; with the
    condition †state.order (set by lookupOrder before it) Continue stops there."""
    inspector = parts(window)
    inspector.model.set_breakpoint(2, True, "†state.policy.never")
    trigger(qtbot, window, "Continue")
    assert inspector.model.status(2).value == "done"
    trigger(qtbot, window, "Restart")
    inspector.model.set_breakpoint(2, True, "†state.order")
    trigger(qtbot, window, "Continue")
    assert inspector.debugger.last_stop == "breakpoint at #2"
    assert "when †state.order" in inspector.model.index(2, 0).data(Qt.ItemDataRole.ToolTipRole)


def test_break_on_failure_stops_continue_at_the_failed_call(qtbot: Any, window: MainWindow) -> None:
    """With Run → Break on Failure, a rejected call stops Continue and the line names it."""
    inspector = parts(window)
    next(a for a in window.menu("Run").actions() if a.text().replace("&", "") == "Break on Failure").setChecked(True)
    inspector.debugger.approval_enabled = True
    inspector.debugger.approver = lambda call: Decision.reject("not now") if call.index == 0 else Decision.approve()
    trigger(qtbot, window, "Continue")
    assert inspector.debugger.last_stop == "#0 failed: rejected: not now"
