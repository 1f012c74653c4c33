"""`MessageEditor`: the selected message, through its header, a form for its body, and its whole JSON."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from html import escape
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QCoreApplication, QEvent, Qt, QTimer, Signal
from PySide6.QtWidgets import QApplication, QLabel, QScrollArea, QStackedWidget, QTabWidget, QVBoxLayout, QWidget

from contextdeck.engine import Form, body_of

from .._editor import DataEditor
from .._editor._base import show_once
from .._editor._json_editor import JsonEditor
from .._first_input import FirstInput, input_targets
from .._slices import slices
from ._bodies import BODIES
from ._catalog import Catalog
from ._focus import controls, leave, move_focus, show
from ._header import HeaderEditor
from ._model import Body, MessageModel, problem_of, read_message, retyped, with_body, with_header, with_output
from ._schema import SchemaNode

if TYPE_CHECKING:
    from .._document_model import DocumentModel

NOTHING_SELECTED = ("Select a message in the timeline to edit it here, or insert one: Edit → Insert Text Message "
                    "(Ctrl+Shift+T) and the other Insert entries.")
# From this many messages, a selected message is shown in slices after the selection's turn (`_show_later`): in
# such a document the selection's turn has the timeline's share and the views' already. Below it, it is shown in
# the selection's call, as scripts read it.
SHOWN_LATER_FROM = 10_000

def _same(a: Any, b: Any) -> bool:
    """The same JSON value, key order included (an edit that reorders keys is an edit)."""
    return json.dumps(a) == json.dumps(b)


class MessageEditor(QWidget):
    """Edits one message. Every edit — header, form or JSON tab — produces the whole new message
    (`message_edited`), and the editor then reads that message again (`read_message`): the header, the body's
    editor and the JSON tab always show what the message is now, whichever part made the change.

    `set_message(index, message)` loads a message (emits nothing; the echo of the editor's own edit changes
    nothing on screen); `show_item(value, title)` shows a value that is not a message, read-only.

    Only the part on screen edits: a body page or a tab that is not shown holds an older message's value, and
    an event that is not an edit (a theme switch recolouring it) must not write that value back.
    `message_edited(before, after)` names the message the edit was made from, so that its receiver can refuse
    an edit made from a message that is no longer the document's.
    """

    # dicts: `object` passes them as they are (a `dict` signal would sort their keys)
    message_edited = Signal(object, object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = QLabel()
        self.title.setObjectName("editorTitle")
        self.title.setTextFormat(Qt.TextFormat.RichText)
        heading = self.title.font()
        heading.setPointSize(11)
        self.title.setFont(heading)
        self.title.setContentsMargins(0, 2, 0, 4)
        self.header = HeaderEditor()
        self.bodies = QStackedWidget()
        self._pages: dict[Body, Any] = {}
        self._unshown_pages: list[Any] = []  # made ahead, never shown yet (`show_prepared`)
        self.json = JsonEditor(check=problem_of)
        self.schema = SchemaNode()  # a data message's `schema`
        self.schema_page = QScrollArea()
        self.schema_page.setWidgetResizable(True)
        schema_column = QWidget()
        column = QVBoxLayout(schema_column)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.schema)
        column.addStretch(1)  # the schema from the top down; the room left over stays below it
        self.schema_page.setWidget(schema_column)
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.bodies, "Form")
        self.tabs.addTab(self.schema_page, "Schema")
        self.tabs.addTab(self.json, "JSON")
        self.tabs.currentChanged.connect(lambda _index: self._tab_shown())
        layout = self._column = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        self.nothing = QLabel(NOTHING_SELECTED)  # instead of the tabs while no message is selected
        self.nothing.setObjectName("editorNothing")
        self.nothing.setWordWrap(True)
        self.nothing.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.nothing.setEnabled(False)  # drawn in the palette's muted text colour
        layout.addWidget(self.title)
        layout.addWidget(self.header)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(self.nothing, 1)
        self._index: int | None = None
        self._message: dict[str, Any] | None = None
        self._model: MessageModel | None = None
        self._item: Any = None
        self._emptying = False  # a document was replaced: what is shown goes in a slice of its own (`_empty`)
        self._later = False  # the selected message is shown in the coming slices (`_show_later`)
        self._unpainted = False  # shown by the last of them, with updates off: the next one repaints it
        # Until then, the next input shows it first: a key typed into the form before acts on the message now selected.
        self._input = FirstInput(self._show_now, self, targets=lambda: input_targets(self.window()))
        self._catalog_of: Callable[[], Catalog] = Catalog
        self.header.retyped.connect(lambda type_name: self._commit(retyped(self._current(), type_name), None))
        self.header.edited.connect(lambda key, value: self._commit(with_header(self._current(), key, value),
                                                                   self.header))
        self.json.edited.connect(lambda value: self._commit(value, self.json))
        self.schema.edited.connect(lambda schema: self._commit(with_header(self._current(), "schema", schema or None),
                                                               self.schema_page))
        self.set_message(None, None)

    # -- what is shown -----------------------------------------------------------------------------------

    def follow(self, document: DocumentModel) -> None:
        """Show `document`'s selected message: when it is selected, and again when it is replaced (an undo, a
        redo, a run; the echo of the editor's own edit changes nothing on screen)."""
        self._document = document
        document.messageSelected.connect(self._message_selected)  # bound methods: Qt drops them with the editor
        document.selectionCleared.connect(self._nothing_selected)
        document.messageReplaced.connect(self._message_replaced)
        document.documentReplaced.connect(self._document_replaced)
        document.changed.connect(self._changed)

    def _message_selected(self, index: int) -> None:
        context = self._document.context()
        message = context[index]
        if len(context) >= SHOWN_LATER_FROM and not (self._message is not None and _same(message, self._message)):
            self._later = True
            self._input.start()
            slices().start(self._show_later, first=True)
            return
        self._show_selected(index, message)

    def _show_now(self) -> None:
        self._input.stop()
        self._painted()
        index = self._document.selected_message() if self._later else None
        if index is not None:
            self._show_selected(index, self._document.context()[index])

    def _show_later(self) -> None:
        """A slice: the next piece of the selected message's form (made, then shown once out of sight: `prepare`),
        then the message shown (`show_apart`: its repaint in the next). Made, shown and painted in the selection's
        turn, a new form was most of it at a million messages. Meanwhile the message before stays on screen: an
        edit made from it is refused (the window edits the selected message, which it is not)."""
        if self._painted():  # (a selection made since is shown from the next slice on)
            if self._later:
                slices().start(self._show_later, first=True)
            return
        index = self._document.selected_message() if self._later else None
        if index is None:
            return
        message = self._document.context()[index]
        if self.show_prepared() or self.prepare(message, needed=True):
            slices().start(self._show_later, first=True)
        else:
            self._show_selected(index, message, apart=True)

    def show_apart(self, index: int, message: dict[str, Any]) -> None:
        """`set_message` with the editor's updates off, and on again in a slice after this one (a slice that shows a
        new form: its repaint in the same turn made it more than a frame at a million messages)."""
        self.setUpdatesEnabled(False)
        self._unpainted = True
        self.set_message(index, message)
        slices().start(self._show_later, first=True)

    def _painted(self) -> bool:
        """Updates on again after the message was shown (it repaints); whether they were off."""
        if not self._unpainted:
            return False
        self._unpainted = False
        self.setUpdatesEnabled(True)
        return True

    def _show_selected(self, index: int, message: dict[str, Any], *, apart: bool = False) -> None:
        self._input.stop()
        (self.show_apart if apart else self.set_message)(index, message)
        if self.hasFocus():  # held while another document opened (`_document_replaced`): the new form's
            self.focus_body()

    def _nothing_selected(self) -> None:
        self.set_message(None, None)

    def _message_replaced(self, index: int) -> None:
        if index == self._document.selected_message():
            self._message_selected(index)

    def _changed(self) -> None:
        """An insert, a delete or a move before the message shown changes its number only (a delete of the
        selected message selects the next, whose row Qt makes current before the old one is gone: its number then
        was one more)."""
        index = self._document.selected_message()
        if index is not None and index != self._index and self._message is not None and _same(
                self._document.context()[index], self._message):
            self._renumber(index)

    def _renumber(self, index: int) -> None:
        self._index = index
        assert self._model is not None
        self.title.setText(self._title(self._model))

    def _document_replaced(self) -> None:
        # A field with the focus goes with the old document's form, and Qt gave the focus to the window's next control
        # (the timeline's filter box: the next Ctrl+Z was the box's, and did nothing). The editor holds it until the
        # new document's message is shown, then its first field has it.
        focus = QApplication.focusWidget()
        if focus is not None and self.isAncestorOf(focus):
            self.setFocus(Qt.FocusReason.OtherFocusReason)
        # Emptied in the next slice, not in the hand-over's; meanwhile nothing is selected, so the window refuses an
        # edit made from what is still shown.
        self._emptying = True
        slices().start(self._empty, first=True)

    def _empty(self) -> None:
        if self._emptying:  # (not when something else was shown since)
            self.set_message(None, None)

    def show_selected(self) -> None:
        """Show the document's selected message again (an edit made of an older one was refused)."""
        index = self._document.selected_message()
        if index is None:
            self.set_message(None, None)
        else:
            self._message_selected(index)

    def set_message(self, index: int | None, message: dict[str, Any] | None) -> None:
        """Shows message `index` (None: nothing selected); emits nothing."""
        self._emptying = self._later = False
        if index is not None and message is not None and self._message is not None and _same(message, self._message):
            # The echo of our own edit coming back through the undo stack, or the same message at a new place (it
            # moved): the form is right as it is, only the title's number may change. Not laid out again: that lays
            # out the whole main window, in every edit's turns.
            if index != self._index:
                self._renumber(index)
                self._forget_pending()
            return
        with self._laid_out_once():
            self._set_message(index, message)

    @contextmanager
    def _laid_out_once(self) -> Iterator[None]:
        """The editor is laid out once, on the next turn of the event loop, after everything it shows changed.

        Showing a widget lays out every visible ancestor's layout at once (Qt activates them before the widget
        appears), so each header row or form widget shown for a message of another kind laid the editor out again:
        once per row shown, most of a select's form. With the editor's
        own layout disabled meanwhile, the chain stops there, and the editor is laid out on the next turn, before
        the repaint.

        That layout is asked for here, not left to the request the first change posted: the request can be handled
        while the layout is still disabled (hiding the page that held the focus moves the focus, and choosing the
        next control in visual order handles the layout requests posted), a disabled layout drops it, and Qt posts
        no other until the layout has run. The editor would keep the last message's sizes: a data message's four
        header rows squeezed into a plan's two."""
        layout = self._column
        if not layout.isEnabled():  # nested: the outer call lays out
            yield
            return
        layout.setEnabled(False)
        try:
            yield
        finally:
            layout.setEnabled(True)
            layout.invalidate()
            QCoreApplication.postEvent(self, QEvent(QEvent.Type.LayoutRequest))

    def _forget_pending(self) -> None:
        """Another message like the last (an insert of the same starting value) keeps the form as it is: what was
        typed into it and not made part of the message (a new tool's name) belonged to the last one."""
        forget = getattr(self.bodies.currentWidget(), "forget_pending", None)
        if forget is not None:
            forget()

    def _set_message(self, index: int | None, message: dict[str, Any] | None) -> None:
        self._index, self._message, self._item = index, message, None
        if message is None:
            self._model = None
            self.title.setText("<b>No message selected</b>")
            self.header.hide()
            self._show_value(None)
            self.tabs.hide()
            self.nothing.show()
            return
        self._shown()
        self._refresh(None)
        self._set_read_only(False)

    def show_item(self, value: Any, title: str) -> None:
        """A value that is not a message (a call, the solution), read-only, under `title` (rich text)."""
        self._emptying = self._later = False
        with self._laid_out_once():
            self._show_item(value, title)

    def _shown(self) -> None:
        if self.nothing.isVisible() or self.tabs.isHidden():
            self.nothing.hide()
            self.tabs.show()

    def _show_item(self, value: Any, title: str) -> None:
        self._shown()
        self._index, self._message, self._model, self._item = None, None, None, value
        self.title.setText(title)
        self.header.hide()
        self._show_value(value)

    def _show_value(self, value: Any) -> None:
        self._show_schema_tab(False)
        page = self._page(Body.PAYLOAD)
        self.bodies.setCurrentWidget(page)
        page.load(MessageModel(Form.DATA, "data", Body.PAYLOAD, value))
        self.json.set_value(value)
        self._set_read_only(True)

    def prepare(self, message: Any, *, push_out: bool = False, needed: bool = False) -> bool:
        """Makes now what showing `message` would make (its body's page, a payload's form, a plan's call boxes),
        shown or not; whether it made anything. Each such piece is a few milliseconds (`FormsAhead` asks for one
        per turn). `push_out`: a payload's form made ahead may push out the least recently shown of the forms kept
        aside. A plan's boxes are made only on a page not on screen (a document opening on a plan): the boxes of
        the plan shown stay as they are. `needed`: a payload's form the selection shows next, made whatever its
        size."""
        if not isinstance(message, dict) or problem_of(message) is not None:
            return False
        model = read_message(message)
        if model.body not in self._pages:
            self._unshown_pages.append(self._page(model.body))
            return True
        page = self._pages[model.body]
        if model.body is Body.CALLS and page is not self.bodies.currentWidget() and page.prepare(model):
            self._unshown_pages.append(page)  # its new boxes are shown once in a later turn
            return True
        return model.body is Body.PAYLOAD and bool(page.prepare(model, push_out=push_out or needed, needed=needed))

    def show_prepared(self) -> bool:
        """Shows once, out of sight, what `prepare` made last (the other half of its work, in a turn of its own:
        polished, laid out and shown now, not in the selection that shows it); whether there was anything."""
        while self._unshown_pages:
            page = self._unshown_pages.pop(0)
            if page is not self.bodies.currentWidget():
                show_once(page)
                return True
        payload = self._pages.get(Body.PAYLOAD)
        return payload is not None and bool(payload.data.show_prepared())

    def message(self) -> dict[str, Any] | None:
        """The message being edited (None when none, or when a read-only item is shown)."""
        return self._message

    def model(self) -> MessageModel | None:
        """What the edited message is, as of its latest edit."""
        return self._model

    def value(self) -> Any:
        """What is shown: the message, or the read-only item."""
        return self._message if self._message is not None else self._item

    @property
    def payload(self) -> DataEditor:
        """The data editor of a data message's payload (and of the read-only items)."""
        return self._page(Body.PAYLOAD).data  # type: ignore[no-any-return]

    def body(self) -> Any:
        """The body editor on screen."""
        return self.bodies.currentWidget()

    # -- edits -------------------------------------------------------------------------------------------

    def _current(self) -> dict[str, Any]:
        assert self._message is not None
        return self._message

    def _body_edited(self, page: QWidget, value: Any) -> None:
        if self._message is not None and page is self.bodies.currentWidget():
            self._commit(with_body(self._message, value), page)

    def _output_edited(self, page: QWidget, output: Any) -> None:
        if self._message is not None and page is self.bodies.currentWidget():
            self._commit(with_output(self._message, output), page)

    def _commit(self, message: dict[str, Any], source: QWidget | None) -> None:
        before = self._message
        if before is None or _same(message, before):
            return
        self._message = message
        self._refresh(source)
        self.message_edited.emit(before, message)

    def _refresh(self, source: QWidget | None) -> None:
        """Reads the message again and shows it in every part but the one that made the edit."""
        message = self._current()
        model = self._model = read_message(message)
        self.title.setText(self._title(model))
        self.header.show()
        self.header.show_message(message, model)
        page = self._page(model.body)
        if self.bodies.currentWidget() is not page:
            self.bodies.setCurrentWidget(page)
        if source is not page:
            page.load(model)
        has_schema = model.body is Body.PAYLOAD
        self._show_schema_tab(has_schema)
        if has_schema and source is not self.schema_page:
            self.schema.load(body_of(message).get("schema"))
        if source is not self.json:
            self.json.set_value(message)

    def _show_schema_tab(self, shown: bool) -> None:
        # Only when it changes: QTabWidget lays itself out again on every call, and with it the editor and the whole
        # main window, in every edit of a message.
        index = self.tabs.indexOf(self.schema_page)
        if self.tabs.isTabVisible(index) != shown:
            self.tabs.setTabVisible(index, shown)

    def _title(self, model: MessageModel) -> str:
        what = escape(model.kind if model.kind is not None else model.type)
        badge = f" <span style='color:#8b5cf6'>[{escape(model.instance)}]</span>" if model.instance is not None else ""
        part = {Body.PAYLOAD: "payload", Body.TEXT: "text", Body.TOOLS: "tools", Body.CALLS: "calls",
                Body.PARTS: "parts"}.get(
            model.body, "JSON")
        return f"<b>#{self._index} · {what}</b>{badge} <span style='color:gray'>({model.form} message; {part})</span>"

    def set_catalog_source(self, source: Callable[[], Catalog]) -> None:
        """Where the plan form gets the document's tools and references from (called when it shows a plan)."""
        self._catalog_of = source
        if Body.CALLS in self._pages:
            self._pages[Body.CALLS].set_catalog_source(source)

    def catalog_changed(self) -> None:
        """The document's written paths are in (read a slice at a time): the plan form offers and checks them."""
        if Body.CALLS in self._pages:
            self._pages[Body.CALLS].catalog_changed()

    def _page(self, body: Body) -> Any:
        page = self._pages.get(body)
        if page is None:
            page = self._pages[body] = BODIES[body]()
            if body is Body.CALLS:
                page.set_catalog_source(self._catalog_of)
                page.output_edited.connect(partial(self._output_edited, page))
            page.edited.connect(partial(self._body_edited, page))
            self.bodies.addWidget(page)
        return page

    def _set_read_only(self, flag: bool) -> None:
        self.header.set_read_only(flag)
        self.schema.setEnabled(not flag)
        for page in self._pages.values():
            page.set_read_only(flag)
        self.json.set_read_only(flag)

    # -- the keyboard ------------------------------------------------------------------------------------

    def focusNextPrevChild(self, next: bool) -> bool:
        """Tab and Shift+Tab go through the editor's controls in visual order, then leave it."""
        current = QApplication.focusWidget()
        if current is None or not self.isAncestorOf(current):
            return super().focusNextPrevChild(next)
        return move_focus(self, current, next) or leave(self, next)

    def _tab_shown(self) -> None:
        """Ctrl+Tab from a field left the focus where Qt's creation order put it in the new tab (a schema's
        `required` box, or the page itself before its form was made): it goes to the tab's first field instead. On
        the tab bar (arrows, a click) it stays there."""
        focus = QApplication.focusWidget()
        if focus is not None and focus is not self.tabs.tabBar() and self.tabs.isAncestorOf(focus):
            self.focus_body()

    def enter(self, forward: bool) -> None:
        """The focus comes in from outside: on the first control (Tab) or the last (Shift+Tab)."""
        chain = controls(self)
        if chain:
            target = chain[0] if forward else chain[-1]
            show(target)
            target.setFocus(Qt.FocusReason.TabFocusReason if forward else Qt.FocusReason.BacktabFocusReason)

    def first_field(self) -> QWidget | None:
        """The first control of the tab on screen (the body's first field on the Form tab), else the header's."""
        chain = controls(self)
        page = self.tabs.currentWidget()
        return next((widget for widget in chain if page.isAncestorOf(widget)), chain[0] if chain else None)

    def focus_body(self, tries: int = 3) -> None:
        """Puts the caret in the body's first field; a form still being made gets it on a next turn."""
        page = self.tabs.currentWidget()
        field = self.first_field()
        if field is not None and page.isAncestorOf(field):
            show(field)
            field.setFocus(Qt.FocusReason.OtherFocusReason)
        elif tries:
            QTimer.singleShot(0, lambda: self.focus_body(tries - 1))
        elif field is not None:
            field.setFocus(Qt.FocusReason.OtherFocusReason)

    def shutdown(self) -> None:
        """The payload editors ask the validation worker for nothing more."""
        for page in self._pages.values():
            if hasattr(page, "data"):
                page.data.close()
