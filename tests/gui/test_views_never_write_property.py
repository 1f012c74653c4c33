"""A property of the real window: UI events that are not edits never change the document or its history, and
edits interleaved with them change the document exactly as the same edits applied to the engine (issue 31)."""

from __future__ import annotations

import json
import os
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule, run_state_machine_as_test
from PySide6.QtCore import QSize, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QDialog, QDockWidget

from contextdeck.engine import Edit, Insert, Move, Remove, Replace, parse_document
from contextdeck.gui._keyboard import focus_pane, panes
from contextdeck.gui._message_editor import NEW_MESSAGES
from contextdeck.gui._window import MainWindow

# Modest in `make test`; CONTEXTDECK_PROPERTY_EXAMPLES=200 for a long hunt.
EXAMPLES = int(os.environ.get("CONTEXTDECK_PROPERTY_EXAMPLES", "5"))
STEPS = int(os.environ.get("CONTEXTDECK_PROPERTY_STEPS", "20"))
FILTERS = ("", "kind:state", "refund", "@0", "zzz-no-match", "type:plan")
SIZES = (QSize(1280, 800), QSize(1600, 1000), QSize(900, 640), QSize(1400, 860))


def settle() -> None:
    for _ in range(3):
        QApplication.processEvents()


def cancel_dialogs() -> int:
    """Rejects every dialog on screen (as Escape would); how many there were."""
    dialogs = [widget for widget in QApplication.topLevelWidgets()
               if isinstance(widget, QDialog) and widget.isVisible()]
    for dialog in dialogs:
        dialog.reject()
    return len(dialogs)


def window_machine(window: MainWindow) -> type[RuleBasedStateMachine]:
    start = window.session.document.dumps()
    raw = start.encode()

    def reset() -> None:
        """The window as the first example found it: each example starts from the same state."""
        cancel_dialogs()
        stack = window.session.undo_stack
        stack.setIndex(0)
        stack.clear()
        window.timeline.filter_box.clear()
        window.set_follow_latest(False)
        window.set_theme("light")
        window.reset_layout()
        window.resize(1400, 860)
        window.editor.tabs.setCurrentIndex(0)
        window.select_message(len(window.context()) - 1)
        settle()

    class Window(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            reset()
            self.engine = parse_document(raw).context  # the same edits, applied to the engine alone
            self.edited = False

        # -- events that are not edits ----------------------------------------------------------------

        def _quietly(self, action: Any) -> None:
            """Runs a UI event that is no edit: the document and its history stay exactly as they were."""
            stack = window.session.undo_stack
            before = (window.session.document.dumps(), stack.count(), stack.index())
            action()
            settle()
            assert (window.session.document.dumps(), stack.count(), stack.index()) == before

        @rule(data=st.data())
        def select(self, data: st.DataObject) -> None:
            index = data.draw(st.integers(0, max(0, len(window.context()) - 1)))
            self._quietly(lambda: window.select_message(index))

        @rule(tab=st.integers(0, 2))
        def editor_tab(self, tab: int) -> None:
            self._quietly(lambda: window.editor.tabs.setCurrentIndex(tab))

        @rule()
        def theme(self) -> None:
            """Dark after light and light after dark: every switch recolours every view."""
            theme = "light" if window.settings.value("view/theme") == "dark" else "dark"
            self._quietly(window.actions_by_name[f"theme_{theme}"].trigger)

        @rule(which=st.integers(0, 3), shown=st.booleans())
        def dock_visibility(self, which: int, shown: bool) -> None:
            docks = window.findChildren(QDockWidget)
            self._quietly(lambda: docks[which % len(docks)].setVisible(shown))

        @rule(pair=st.tuples(st.integers(0, 9), st.integers(0, 9)))
        def tabify(self, pair: tuple[int, int]) -> None:
            docks = window.findChildren(QDockWidget)
            first, second = docks[pair[0] % len(docks)], docks[pair[1] % len(docks)]
            if first is not second:
                self._quietly(lambda: window.tabifyDockWidget(first, second))

        @rule(size=st.sampled_from(SIZES))
        def resize(self, size: QSize) -> None:
            self._quietly(lambda: window.resize(size))

        @rule(text=st.sampled_from(FILTERS))
        def filter(self, text: str) -> None:
            self._quietly(lambda: window.timeline.filter_box.setText(text))

        @rule()
        def follow_latest(self) -> None:
            self._quietly(window.actions_by_name["follow"].trigger)

        @rule(key=st.sampled_from((Qt.Key.Key_Up, Qt.Key.Key_Down, Qt.Key.Key_Home, Qt.Key.Key_End)))
        def time_cursor(self, key: Qt.Key) -> None:
            def move() -> None:
                window.timeline.table.setFocus()
                QTest.keyClick(window.timeline.table, key)
            self._quietly(move)

        @rule(which=st.sampled_from(("goto", "next_turn")))
        def dialog_cancelled(self, which: str) -> None:
            def open_and_cancel() -> None:
                if which == "goto":
                    window.go_to_dialog()
                else:
                    window.turns.next_turn.trigger()
                settle()
                cancel_dialogs()
            self._quietly(open_and_cancel)

        @rule(which=st.integers(0, 7))
        def focus(self, which: int) -> None:
            every = panes(window, window.inspector)
            self._quietly(lambda: focus_pane(window, every[which % len(every)]))

        # -- edits ---------------------------------------------------------------------------------------

        def _edit(self, edit: Edit, run: Any) -> None:
            run()
            settle()
            self.engine.apply(edit)
            self.edited = True

        @rule(template=st.sampled_from(sorted(NEW_MESSAGES)))
        def insert(self, template: str) -> None:
            at = window.selected_message()
            index = len(window.context()) if at is None else at + 1
            self._edit(Insert(index, dict(NEW_MESSAGES[template])), lambda: window.insert_message(template))

        @precondition(lambda self: window.selected_message() is not None and len(window.context()) > 1)
        @rule()
        def delete(self) -> None:
            index = window.selected_message()
            assert index is not None
            self._edit(Remove(index), window.actions_by_name["delete"].trigger)

        @precondition(lambda self: window.selected_message() not in (None, 0))
        @rule()
        def move_up(self) -> None:
            index = window.selected_message()
            assert index is not None
            self._edit(Move(index, index - 1), window.actions_by_name["move_up"].trigger)

        @precondition(lambda self: window.selected_message() is not None and window.editor.message() is not None)
        @rule(note=st.text("abc xyz", min_size=1, max_size=5))
        def type_in_json(self, note: str) -> None:
            """The user types a new message into the JSON tab."""
            index = window.selected_message()
            assert index is not None
            message = {**window.context()[index], "note": note}

            def type_it() -> None:
                window.editor.tabs.setCurrentWidget(window.editor.json)
                settle()
                window.editor.json.text.setPlainText(json.dumps(message, indent=2))
            self._edit(Replace(index, message), type_it)

        @invariant()
        def same_as_the_engine(self) -> None:
            document = window.session.document
            if not self.edited:
                assert document.dumps() == start
                assert window.session.undo_stack.count() == 0
            assert json.dumps(list(document.context)) == json.dumps(list(self.engine))

        def teardown(self) -> None:
            reset()
            assert window.session.document.dumps() == start

    return Window


def test_ui_events_never_change_the_document(qtbot: Any, refund_window: MainWindow) -> None:
    """Random sequences of selections, tab switches, themes, docks, resizes, filters, Follow Latest, cursor keys,
    cancelled dialogs and focus changes, interleaved with random edits: every event that is no edit leaves the
    document byte-identical and its undo history as it was, and the document always equals the engine's copy
    under the same edits."""
    machine = window_machine(refund_window)
    run_state_machine_as_test(machine, settings=settings(
        max_examples=EXAMPLES, stateful_step_count=STEPS, deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]))
