"""Shared test set-up: the offscreen platform, and (for the headless run) a Qt that cannot be imported."""

from __future__ import annotations

import importlib.abc
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

EXAMPLES = Path(__file__).resolve().parent.parent / "resources" / "examples"
_QT_MODULES = ("PySide6", "shiboken6", "qasync")


class _BlockQt(importlib.abc.MetaPathFinder):
    """Makes `import PySide6` fail, so the engine's tests prove the engine needs no Qt."""

    def find_spec(self, fullname: str, path: object, target: object = None) -> None:
        if fullname.split(".")[0] in _QT_MODULES:
            raise ImportError(f"{fullname} is blocked: the engine must not need Qt")
        return None


if os.environ.get("CONTEXTDECK_BLOCK_QT"):
    if any(name.split(".")[0] in _QT_MODULES for name in sys.modules):
        raise RuntimeError("Qt was imported before the block could be installed")
    sys.meta_path.insert(0, _BlockQt())


@pytest.fixture
def fake_llm() -> Iterator[Any]:
    """An OpenAI-compatible server on 127.0.0.1 with scripted replies (tests/fake_llm.py)."""
    from fake_llm import FakeLLM

    with FakeLLM() as server:
        yield server


@pytest.fixture
def examples() -> Path:
    """The folder of bundled example documents."""
    return EXAMPLES
