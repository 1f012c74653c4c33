"""ARCHITECTURE.md names only what exists: every module, file, class, member and function it quotes.

The map is only useful while it matches the code: a rename or a move that leaves the map behind fails here,
naming each quoted name that no longer exists.
"""

from __future__ import annotations

import importlib
import inspect
import re
import subprocess
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "ARCHITECTURE.md"
SOURCES = [*ROOT.glob("engine/**/*.py"), *ROOT.glob("gui/**/*.py"), *ROOT.glob("packaging/**/*.py")]
FILES = [*SOURCES, *ROOT.glob("tests/**/*.py"), *ROOT.glob("benchmarks/*.py")]


def _tracked() -> set[str]:
    """The repository's files (relative paths): git's list in a checkout, else every file outside .venv and build."""
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files"], capture_output=True, text=True, check=False)
    if listed.returncode == 0 and listed.stdout:
        return set(listed.stdout.split())
    skip = ("/.venv/", "/build/", "/.git/")
    return {str(p.relative_to(ROOT)) for p in ROOT.rglob("*") if p.is_file() and not any(s in str(p) for s in skip)}
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _engine_modules() -> list[ModuleType]:
    modules = []
    for path in sorted((ROOT / "engine").rglob("*.py")):
        parts = path.relative_to(ROOT / "engine").with_suffix("").parts
        dotted = ".".join(part for part in parts if part != "__init__")
        modules.append(importlib.import_module("contextdeck.engine" + ("." + dotted if dotted else "")))
    return modules


def _quoted(doc: Path) -> list[str]:
    return sorted(set(re.findall(r"`([^`\n]+)`", doc.read_text(encoding="utf-8"))))


def _missing(doc: Path = DOC) -> list[str]:
    modules = _engine_modules()
    by_name = {module.__name__.rsplit(".", 1)[-1]: module for module in modules}
    classes: dict[str, list[type]] = {}
    for module in modules:
        for value in vars(module).values():
            if inspect.isclass(value) and value.__module__ == module.__name__:
                classes.setdefault(value.__name__, []).append(value)
    text = "\n".join(path.read_text(encoding="utf-8") for path in SOURCES)
    words = set(NAME.findall(text))
    tracked = _tracked()
    missing = []
    for quoted in _quoted(doc):
        head = quoted.split("(")[0].strip()
        if " " in head or "=" in head or not head or head.startswith("†"):
            continue  # a call with arguments, a command, a setting, an expression
        if (ROOT / head).exists() or any(path == head or path.endswith("/" + head) for path in tracked):
            continue  # a file or folder of the repository
        if head.endswith("/"):  # a folder of the engine
            if not (ROOT / "engine" / head).is_dir():
                missing.append(quoted)
            continue
        if "/" in head and "/" in head.split(".")[0] and not head.endswith(".py"):  # `folder/_module.Name`
            path, _, name = head.rpartition(".")
            head = path.rsplit("/", 1)[-1] + "." + name
            if not any(str(file.with_suffix("")).endswith("/" + path) for file in SOURCES):
                missing.append(quoted)
                continue
        elif head.endswith(".py"):
            if head not in ("_thing.py", "__init__.py") and not any(
                str(file).endswith("/" + head) for file in FILES
            ):
                missing.append(quoted)
            continue
        owner, _, members = head.partition(".")
        if not members:
            if owner not in words:
                missing.append(quoted)
            continue
        if owner in by_name:  # `_module.name`
            if not all(hasattr(by_name[owner], member) for member in members.split("/")):
                missing.append(quoted)
        elif owner in classes:  # `Class.member` (instance attributes are found in the class's source)
            sources = "\n".join(inspect.getsource(cls) for cls in classes[owner])
            for member in members.split("/"):
                member = member.split(".")[0]
                if not any(hasattr(cls, member) for cls in classes[owner]) and not re.search(
                    rf"\b{re.escape(member)}\b", sources
                ):
                    missing.append(quoted)
        elif owner not in words:
            missing.append(quoted)
    return missing


def test_every_name_the_map_quotes_exists() -> None:
    assert _missing() == []


def test_a_name_that_exists_nowhere_is_reported(tmp_path: Path) -> None:
    """The check itself: names that moved or were renamed are reported, names that exist are not."""
    doc = tmp_path / "ARCHITECTURE.md"
    doc.write_text(
        "`Watchers.follow` `Watchers.no_such_member` `NoSuchClass` `_whole.no_such_function` `document/_context.py`"
        " `document/_nowhere.py` `resolve/_incremental/` `nowhere/` `Context._insert/_gone`\n",
        encoding="utf-8",
    )
    assert _missing(doc) == [
        "Context._insert/_gone", "NoSuchClass", "Watchers.no_such_member", "_whole.no_such_function",
        "document/_nowhere.py", "nowhere/",
    ]
