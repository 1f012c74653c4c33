"""The output audit: an output message's call, date, method, path, and the value before and after it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from contextdeck.engine import Context, Execution, fixed_clock, load_document
from contextdeck.gui._inspector._audit import OutputAudit
from contextdeck.gui._inspector._audit_data import audit

REFUND_OUTPUTS = [
    {"type": "data", "kind": "state", "data": {"order": {"id": "A-1042"}},
     "_call": {"_tool": "lookupOrder", "orderId": "†input.orderId", "_outputPath": "†state.order",
               "_output": {"id": "A-1042", "total": 89.5, "daysSinceDelivery": 4, "items": ["kettle"]}},
     "_date": "2026-01-02T03:04:05Z", "_outputPath": "†state.order"},
    {"type": "data", "kind": "state", "data": {"log": "order looked up"},
     "_call": {"_tool": "logStep", "entry": "order looked up", "_outputPath": "†state.log",
               "_outputMethod": "push", "_output": "order looked up"},
     "_date": "2026-01-02T03:04:06Z", "_outputMethod": "push", "_outputPath": "†state.log"},
]


def refund_after_two_calls(examples: Path) -> Context:
    document = load_document(examples / "refund_workflow.json")
    for message in REFUND_OUTPUTS:
        document.context.append(message)
    return document.context


def test_audit_reads_the_metadata_and_links_the_call(examples: Path) -> None:
    """The audit of lookupOrder's output names call #0, its date, method and path, and null → the order."""
    context = refund_after_two_calls(examples)
    found = audit(context, 5)
    assert found is not None
    assert (found.call_index, found.date) == (0, "2026-01-02T03:04:05Z")
    assert (found.method, found.path) == ("set", "†state.order")
    assert found.before is None
    assert found.after == {"id": "A-1042"}
    assert "-null" in found.diff
    assert '+  "id": "A-1042"' in found.diff


def test_push_shows_the_array_growing(examples: Path) -> None:
    """logStep's push: the log was [] before and holds the entry after."""
    found = audit(refund_after_two_calls(examples), 6)
    assert found is not None
    assert (found.method, found.before, found.after) == ("push", [], ["order looked up"])


def test_a_message_without_call_is_not_audited(examples: Path) -> None:
    """Only output messages (with _call) have an audit."""
    assert audit(refund_after_two_calls(examples), 1) is None


def test_audit_panel_link_selects_the_call(qtbot: Any, examples: Path) -> None:
    """The panel shows the audit; clicking the call link emits that call's index."""
    context = refund_after_two_calls(examples)
    panel = OutputAudit()
    qtbot.addWidget(panel)
    panel.show_message(context, 6)
    assert panel.method.text() == "push"
    assert panel.path.text() == "†state.log"
    assert "#1 logStep" in panel.call_link.text()
    with qtbot.waitSignal(panel.callActivated) as link:
        panel.call_link.linkActivated.emit("call:1")
    assert link.args == [1]
    panel.show_message(context, 0)
    assert panel.audit is None
    assert "Not an output message" in panel.heading.text()


def test_the_call_link_takes_the_keys_only_when_it_links_a_pending_call(qtbot: Any, examples: Path) -> None:
    """Tab stops on the call link only while it links a pending call, where Enter follows it; showing "—" (no
    output message) or a call not in the pending calls, it is no stop for the keys."""
    context = refund_after_two_calls(examples)
    panel = OutputAudit()
    qtbot.addWidget(panel)
    panel.show_message(context, 6)
    assert panel.call_link.focusPolicy() == Qt.FocusPolicy.StrongFocus
    with qtbot.waitSignal(panel.callActivated) as link:
        qtbot.keyClick(panel.call_link, Qt.Key.Key_Return)
    assert link.args == [1]
    panel.show_message(context, 0)
    assert panel.call_link.text() == "—"
    assert panel.call_link.focusPolicy() == Qt.FocusPolicy.NoFocus
    with qtbot.assertNotEmitted(panel.callActivated):
        qtbot.keyClick(panel.call_link, Qt.Key.Key_Return)
    panel.show_message(load_document(examples / "seed_output.json").context, 1)
    assert "not in the pending calls" in panel.call_link.text()
    assert panel.call_link.focusPolicy() == Qt.FocusPolicy.NoFocus


def test_seed_output_audit_derives_the_path_from_the_call(qtbot: Any, examples: Path) -> None:
    """Seed 000's output has no _outputPath of its own: the audit takes it from _call and shows active → inactive."""
    context = load_document(examples / "seed_output.json").context
    found = audit(context, 1)
    assert found is not None
    assert (found.path, found.method, found.date) == ("†data.user.status", "set", "2025-10-26T12:00:00Z")
    assert (found.before, found.after) == ("active", "inactive")
    assert found.call_index is None
    panel = OutputAudit()
    qtbot.addWidget(panel)
    panel.show_message(context, 1)
    assert "not in the pending calls" in panel.call_link.text()


def test_audit_shows_how_the_call_ran(qtbot: Any, examples: Path) -> None:
    """An output written by a run: the `_run` row says when it started, how long it took and what it received;
    a message from before runs were recorded says so."""
    document = load_document(examples / "refund_workflow.json")
    context = document.context
    ticks = iter([1.0, 1.5])
    asyncio.run(Execution(document, clock=fixed_clock("2026-01-02T03:04:05Z"), timer=lambda: next(ticks)).step())
    panel = OutputAudit()
    qtbot.addWidget(panel)
    panel.show_message(context, len(context) - 1)
    assert panel.run.text() == "started 2026-01-02T03:04:05Z · took 0.500 s · received orderId, _output"
    assert '"orderId": "A-1042"' in panel.run.toolTip()
    assert "#0 lookupOrder" in panel.call_link.text()
    panel.show_message(refund_after_two_calls(examples), 5)
    assert panel.run.text() == "— (written before runs were recorded)"


def test_the_diff_follows_the_theme(qtbot: Any, examples: Path, theme: Callable[[str], None]) -> None:
    """The added lines' background is pale in the light theme and dark in the dark one, and the text on it
    stays readable: a switch while an audit is shown writes the diff again in the new colours."""
    def added_line() -> tuple[int, int]:
        block = panel.diff.document().begin()
        while not block.text().startswith("+"):
            block = block.next()
        background = block.blockFormat().background().color()
        text = block.begin().fragment().charFormat().foreground().color()
        return background.lightness(), text.lightness()

    panel = OutputAudit()
    qtbot.addWidget(panel)
    panel.show_message(refund_after_two_calls(examples), 5)
    light_background, light_text = added_line()
    assert light_background > 180 > 100 > light_text
    theme("dark")
    dark_background, dark_text = added_line()
    assert dark_background < 100 < 150 < dark_text
    theme("light")
    assert added_line() == (light_background, light_text)
