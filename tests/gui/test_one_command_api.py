"""One command API: nothing in `gui/` but `gui/_commands.py` writes to the open document (ARCHITECTURE.md).

Views send edits as signals; the window and the installed components turn them into `Commands` calls,
and only `Commands` pushes undo steps, applies engine edits or sets the saved request's solution and
schema. Read from the source, so a new module that writes directly fails here before it can hide a
view that writes (a theme switch once wrote a stale JSON tab over a message).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import contextdeck.gui

GUI = Path(contextdeck.gui.__file__).resolve().parent
COMMANDS = GUI / "_commands.py"
SESSION = GUI / "_session.py"  # owns the file: a new document clears the history, Save As sets the shape
MUTATORS = {"apply", "append", "insert", "replace", "remove", "move"}  # engine `Context`'s writing methods
STACK_WRITES = {"push", "undo", "redo", "setIndex", "beginMacro", "endMacro"}
DOCUMENT_FIELDS = {"solution", "schema", "shape", "context"}
CONTEXT = re.compile(r"(^|[._])context(\(\))?$", re.IGNORECASE)  # `context`, `self._context`, `x.context()`


def _writes_by_call(node: ast.Call) -> bool:
    if not isinstance(node.func, ast.Attribute):
        return False
    receiver, name = ast.unparse(node.func.value), node.func.attr
    return (name in MUTATORS and CONTEXT.search(receiver) is not None) or \
        (name in STACK_WRITES and "undo_stack" in receiver)


def _document_fields_set(node: ast.Assign | ast.AugAssign) -> list[ast.Attribute]:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    each = [item for target in targets for item in (target.elts if isinstance(target, ast.Tuple) else [target])]
    return [item for item in each if isinstance(item, ast.Attribute) and item.attr in DOCUMENT_FIELDS
            and "document" in ast.unparse(item.value).lower()]


def writes(path: Path) -> list[str]:
    """Each direct write to the document in `path`: line and what it is."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and any(ast.unparse(base).endswith("QUndoCommand") for base in node.bases):
            found.append(f"{node.lineno}: an undo command ({node.name})")
        elif isinstance(node, ast.Call) and _writes_by_call(node):
            found.append(f"{node.lineno}: {ast.unparse(node.func)}(…)")
        elif isinstance(node, ast.Assign | ast.AugAssign) and path != SESSION:
            found += [f"{node.lineno}: {ast.unparse(field)} = …" for field in _document_fields_set(node)]
    return sorted(found, key=lambda item: int(item.split(":")[0]))


def test_only_the_command_api_writes_to_the_document() -> None:
    """No module of the GUI but the command API applies an edit, pushes an undo step or sets a document's
    solution, schema or shape (the session, which owns the file, may set the shape it is saved in)."""
    offenders = {str(path.relative_to(GUI)): found for path in sorted(GUI.rglob("*.py"))
                 if path != COMMANDS and (found := writes(path))}
    assert offenders == {}


def test_the_check_sees_each_kind_of_write(tmp_path: Path) -> None:
    """The scan finds every form of write it forbids (so an empty result above means something)."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        "class C(QUndoCommand): pass\n"
        "window.context().insert(0, m)\n"
        "self._context.apply(edit)\n"
        "document.context.append(m)\n"
        "window.session.undo_stack.push(c)\n"
        "self.window.session.document.solution = s\n"
        "document.schema, document.shape = after\n"
        "rows.insert(0, row)\n"  # not a context: allowed
        "text.replace('a', 'b')\n",
        encoding="utf-8")
    assert [line.split(":")[0] for line in writes(sample)] == ["1", "2", "3", "4", "5", "6", "7", "7"]
