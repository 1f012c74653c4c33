"""Help → Contents (the manual: the README and docs/, shipped inside the package) and Help → About."""

from __future__ import annotations

import platform

import PySide6
from PySide6.QtCore import QUrl, qVersion
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QMessageBox, QTextBrowser, QToolBar, QVBoxLayout, QWidget

from contextdeck import __version__, resources

HOME = "README.md"


class HelpBrowser(QDialog):
    """The manual in a window of its own: Markdown pages linked to each other, links to the web opened by the
    system's browser. Not modal: it stays open beside the workbench."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("HelpBrowser")
        self.setWindowTitle("ContextDeck Help")
        self.resize(900, 760)
        self.browser = QTextBrowser(self)
        self.browser.setOpenExternalLinks(True)
        self.browser.setOpenLinks(True)
        self.browser.sourceChanged.connect(self._titled)
        toolbar = QToolBar(self)
        # Each with its keys: the toolbar's buttons take no focus, and Tab in the page goes from link to link.
        for text, run, key in (("Back", self.browser.backward, QKeySequence(QKeySequence.StandardKey.Back)),
                               ("Forward", self.browser.forward, QKeySequence(QKeySequence.StandardKey.Forward)),
                               ("Contents", self.home, QKeySequence("Alt+Home"))):
            action = toolbar.addAction(text)
            action.triggered.connect(lambda _checked=False, run=run: run())
            action.setShortcut(key)
            action.setToolTip(f"{text} ({key.toString(QKeySequence.SequenceFormat.NativeText)})")
        self.browser.backwardAvailable.connect(toolbar.actions()[0].setEnabled)
        self.browser.forwardAvailable.connect(toolbar.actions()[1].setEnabled)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(toolbar)
        layout.addWidget(self.browser)
        layout.addWidget(buttons)
        self.home()

    def home(self) -> None:
        """Show the README, the manual's first page."""
        self.browser.setSource(QUrl.fromLocalFile(str(resources.manual() / HOME)))

    def _titled(self, url: QUrl) -> None:
        """The page's title, or its file's name (a Markdown page has no title). Read from `url`: when this is said,
        `source()` is still the page before (the first page's title ended in "Help — ")."""
        self.setWindowTitle(f"ContextDeck Help — {self.browser.documentTitle() or url.fileName()}")


def show_help(window: QWidget) -> HelpBrowser:
    """Open the manual (or raise the one already open) beside `window`."""
    browser = window.findChild(HelpBrowser)
    if not isinstance(browser, HelpBrowser):
        browser = HelpBrowser(window)
    browser.show()
    browser.raise_()
    browser.activateWindow()
    return browser


def about_text() -> str:
    """What About says: the version of ContextDeck and of what it runs on, the licence, where the log is."""
    from ._crash import log_path

    log = log_path()
    return (f"<h3>ContextDeck {__version__}</h3>"
            "<p>A workbench for designing and debugging LLM agent contexts.</p>"
            f"<p>Python {platform.python_version()}, Qt {qVersion()}, PySide6 {PySide6.__version__}<br>"
            "Licensed under the MIT licence; Qt under the LGPL-3.0.</p>"
            + (f"<p>Log: {log}</p>" if log is not None else ""))


def show_about(window: QWidget) -> None:
    QMessageBox.about(window, "About ContextDeck", about_text())
