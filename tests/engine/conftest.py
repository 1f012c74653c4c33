"""The engine's tests, in folders that mirror engine/'s: this folder holds their shared support.

Being a conftest outside a package, its folder is put on `sys.path`, so a test in any subfolder imports
`strategies`, `reference`, `incremental_strategies`, `chapter_support` and `exec_support` by name.

Every property test (`@given`) runs in paranoid mode (`resolve/_paranoid.py`): each answer the incremental
engine gives or keeps during the test is checked against the reference fold as it is given, so a wrong cache
fails at the edit that made it wrong, whatever the test itself asserts.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from contextdeck.engine.resolve import _paranoid


@pytest.fixture(autouse=True)
def _paranoid_property_tests(request: pytest.FixtureRequest) -> Iterator[None]:
    if not getattr(request.function, "is_hypothesis_test", False):
        yield
        return
    was, _paranoid.ENABLED = _paranoid.ENABLED, True
    try:
        yield
    finally:
        _paranoid.ENABLED = was
