"""The window's part of the per-document settings (`_sidecar.py`): pinned watches, expanded state paths, docks.

Read when a document is opened; watches and paths are kept as they change, the dock layout when the
document is left (another is opened, or the window closes). Breakpoints are kept by the debugger itself
(`window.session.sidecar`, key "breakpoints").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QByteArray

if TYPE_CHECKING:
    from ._window import MainWindow

WATCHES = "watches"
EXPANDED = "expanded"
LAYOUT = "layout"


class DocumentSettings:
    """Restores a document's watches and expanded paths when it opens; keeps them when they change."""

    def __init__(self, window: MainWindow) -> None:
        self._window = window
        self._restoring = False  # from a switch of documents to the end of `restore`: the panels show the old one's
        self._left_in: str | None = None  # the layout the window was in when the last document was left
        window.session.sidecar.switched.connect(self._switched)
        window.session.sidecar.switching.connect(self.keep_layout)
        model = window.watches.model
        for signal in (model.rowsInserted, model.rowsRemoved, model.dataChanged, model.modelReset):
            signal.connect(self._keep_watches)
        for signal in (window.state_view.expanded, window.state_view.collapsed, window.state_view.updated):
            signal.connect(self._keep_expanded)
        window.session.documentReplaced.connect(self.restore)
        window.session.documentReplaced.connect(self._restore_layout)
        self.restore()

    def _switched(self) -> None:
        self._restoring = True
        # Before the views take the new document: the watches panel would make the old document's pins on it,
        # and `restore` then remove them and make its own.
        self._window.watches.model.set_pins([])

    def restore(self) -> None:
        sidecar = self._window.session.sidecar
        self._restoring = True
        try:
            self._window.watches.model.set_pins(_strings(sidecar.value(WATCHES, [])))
            self._window.state_view.set_expanded_paths(_strings(sidecar.value(EXPANDED, [])))
        finally:
            self._restoring = False

    def _restore_layout(self) -> None:
        """The document's own dock layout; a document without one (or with one Qt cannot read) leaves the
        window as it is: opening a file never seen before does not rearrange the window. The layout the document
        before left the window in (the same document opened again, another kept in the same layout) is not restored
        again: restoring lays out every dock anew, most of a frame in the turn that hands a big document over."""
        kept = self._window.session.sidecar.value(LAYOUT)  # base64; anything else (a damaged file) is no layout
        if isinstance(kept, str) and kept != self._left_in:
            self._window.restoreState(QByteArray.fromBase64(kept.encode()))
        self._left_in = None

    def keep_layout(self) -> None:
        """Keep the docks' arrangement as the open document's (on leaving it)."""
        state = self._window.saveState().toBase64()
        self._left_in = bytes(state.data()).decode("ascii")
        self._window.session.sidecar.set_value(LAYOUT, self._left_in)

    def _keep_watches(self, *_changed: object) -> None:
        if not self._restoring:
            self._window.session.sidecar.set_value(WATCHES, [pin.label for pin in self._window.watches.model.pins])

    def _keep_expanded(self, *_changed: object) -> None:
        if not self._restoring:
            self._window.session.sidecar.set_value(EXPANDED, self._window.state_view.expanded_paths())


def _strings(value: Any) -> list[str]:
    """A stored list of strings; anything else (a hand-edited or damaged file) is ignored."""
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []
