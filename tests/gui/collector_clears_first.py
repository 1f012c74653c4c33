"""Run by tests/gui/test_idle.py in a process of its own (a regression ends it with a segfault, not the suite).

The collector frees a cycle by clearing each of its objects in turn (`tp_clear`). Shiboken's clear of a Qt
object's wrapper hands the C++ object to Python when its Qt parent is alive, so the wrapper's last reference
deletes it. That is what crashed the GUI suite inside `gc.collect()`, twice: a JSON editor left alive after
its window was deleted (it had no Qt parent) held, in a cycle, a syntax highlighter whose wrapper was cleared
first; when the editor's wrapper went, the highlighter was deleted from inside that teardown, and its
destructor's signal reached the editor's slot after the editor's wrapper was gone. This does the same in a
fixed order: a data editor without its JSON tab is shown a value, closed and deleted as a window's widgets
are, then its JSON editor's highlighter is cleared the way the collector does, and the editor is dropped.
"""

from __future__ import annotations

import ctypes

from PySide6.QtCore import QCoreApplication, QEvent
from PySide6.QtWidgets import QApplication

from contextdeck.gui._editor import DataEditor

PY_TP_CLEAR = 51  # the type slot number of tp_clear (Include/typeslots.h)


def clear_as_the_collector_does(thing: object) -> None:
    """Call `type(thing)`'s tp_clear on `thing`, holding the GIL, as `gc.collect()` does to cyclic garbage."""
    get_slot = ctypes.pythonapi.PyType_GetSlot
    get_slot.restype = ctypes.c_void_p
    get_slot.argtypes = [ctypes.py_object, ctypes.c_int]
    clear = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object)(get_slot(type(thing), PY_TP_CLEAR))
    clear(thing)


def main() -> None:
    app = QApplication([])
    editor = DataEditor(json_tab=False)
    editor.set_value({"amount": 12, "reason": "late"}, None)
    editor.show()
    app.processEvents()
    json = editor.json
    editor.close()
    editor.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    del editor
    highlighter = json.highlighter
    clear_as_the_collector_does(highlighter)
    del highlighter
    del json  # the JSON editor's last reference: its wrapper goes
    print("survived")


if __name__ == "__main__":
    main()
