"""The catalog a plan form offers (tools, written `†` paths, instances): a big document's written paths are read a
slice per turn of the event loop, never in one block, and the form takes them when they are in."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtWidgets import QLineEdit

from contextdeck.engine import Context, Replace, WrittenPaths, written_paths
from contextdeck.gui._message_editor import Catalogs, catalog_of
from contextdeck.gui._message_editor import _catalog as catalog_module
from contextdeck.gui._window import MainWindow

TOOL = {"type": "tool", "tool": {"greet": {"type": "object", "properties": {"who": {"type": "string"}}}}}
PLAN = {"type": "plan", "plan": [{"_tool": "greet", "who": "†state.user", "_outputPath": "†reply.text"}]}


def big(count: int) -> list[dict[str, Any]]:
    states = [{"type": "state", "data": {"user": f"u{n}", f"field{n % 7}": n}} for n in range(count - 2)]
    return [TOOL, *states, PLAN]


def test_a_big_documents_written_paths_are_read_a_slice_at_a_time(qtbot: Any, monkeypatch: Any) -> None:
    """At once: the tools (the context keeps them); the written paths after turns of the event loop, a slice
    each (here a step of 100 messages per slice), and an edit made meanwhile is in what is read."""
    steps: list[int] = []

    class Counted(WrittenPaths):
        def advance(self, count: int) -> None:
            steps.append(count)
            super().advance(count)

    monkeypatch.setattr(catalog_module, "WrittenPaths", Counted)
    monkeypatch.setattr(catalog_module, "SLICE_S", 0.0)  # one step per slice
    monkeypatch.setattr(catalog_module, "STEP", 100)
    count = catalog_module.SLICED_FROM + 100
    context = Context(big(count))
    catalogs = Catalogs(lambda: context)
    first = catalogs.current()
    assert list(first.tools) == ["greet"]
    assert first.written == {}
    assert first.references == ()
    assert catalogs.reading
    assert steps == []
    context.apply(Replace(1, {"type": "state", "data": {"edited": True}}))
    with qtbot.waitSignal(catalogs.changed, timeout=20000):
        pass
    assert len(steps) >= count // 100
    assert catalogs.current().written == written_paths(context)
    assert "†state.edited" in catalogs.current().references
    assert not catalogs.reading


def test_a_big_documents_written_paths_are_taken_in_a_slice_after_the_last_that_reads(
        qtbot: Any, monkeypatch: Any) -> None:
    """The paths read are taken (their references walked) in a slice of their own, not in the one that reads the
    last messages, and announced (the plan form's completions and problems) in the next."""
    seen: list[str] = []

    class Counted(WrittenPaths):
        def advance(self, count: int) -> None:
            seen.append("read")
            super().advance(count)

    read = Catalogs._read

    def reading(self: Catalogs) -> None:
        seen.append("slice")
        read(self)

    monkeypatch.setattr(catalog_module, "WrittenPaths", Counted)
    announce = Catalogs._announce

    def announcing(self: Catalogs) -> None:
        seen.append("slice")
        announce(self)

    monkeypatch.setattr(Catalogs, "_read", reading)
    monkeypatch.setattr(Catalogs, "_announce", announcing)
    context = Context(big(catalog_module.SLICED_FROM + 100))
    catalogs = Catalogs(lambda: context)
    catalogs.changed.connect(lambda: seen.append("changed"))
    catalogs.current()
    with qtbot.waitSignal(catalogs.changed, timeout=20000):
        pass
    assert seen[-4:] == ["read", "slice", "slice", "changed"]
    assert catalogs.current().written == written_paths(context)


def test_an_edit_between_the_paths_taken_and_announced_is_in_what_is_announced(
        qtbot: Any, monkeypatch: Any) -> None:
    """The paths taken, an edit before the slice that announces them: they are read again, and what the plan form
    is told of is the document as edited; `reading` until then."""
    context = Context(big(catalog_module.SLICED_FROM + 100))
    catalogs = Catalogs(lambda: context)
    take = Catalogs._take
    edited: list[bool] = []

    def taken_then_edited(self: Catalogs, written: dict[str, Any]) -> None:
        take(self, written)
        if not edited:
            edited.append(True)
            context.apply(Replace(1, {"type": "state", "data": {"edited": True}}))

    monkeypatch.setattr(Catalogs, "_take", taken_then_edited)
    catalogs.current()
    with qtbot.waitSignal(catalogs.changed, timeout=20000):
        pass
    assert edited
    assert not catalogs.reading
    assert catalogs.current().written == written_paths(context)
    assert "edited" in catalogs.current().written["state"]


def test_a_small_documents_catalog_is_whole_at_once(qtbot: Any) -> None:
    context = Context(big(50))
    catalogs = Catalogs(lambda: context)
    assert catalogs.current() == catalog_of(context)
    assert not catalogs.reading


def test_the_plan_form_completes_the_paths_read_after_it_showed(
        qtbot: Any, open_messages: Callable[[list[Any], str], MainWindow]) -> None:
    """A big document opens on its plan: the form shows at once, and its fields complete the written paths
    once they are read."""
    window = open_messages(big(catalog_module.SLICED_FROM + 100), "big.json")
    window.select_message(len(window.context()) - 1)
    plan = window.editor.body()
    line = plan.boxes[0].fields["who"]
    assert isinstance(line, QLineEdit)
    qtbot.waitUntil(lambda: not window.catalogs.reading, timeout=20000)
    choices = line.completer().model().stringList()
    assert "†state.user" in choices
    assert "†state.field3" in choices
