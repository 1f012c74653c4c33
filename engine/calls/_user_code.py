"""Importing a Python file the user named (activities, tool registries): the only way code gets in."""

from __future__ import annotations

import importlib.util
import itertools
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from ..protocol._errors import describe_exception

_module_numbers = itertools.count(1)


def import_user_file(file: Path, prefix: str, error: Callable[..., Exception]) -> ModuleType:
    """Import `file` as a fresh module named `prefix` + a number; a failure raises `error(path, reason)` (a syntax
    error: `error(path, reason, line, column)`)."""
    module_name = f"{prefix}{next(_module_numbers)}"
    spec = importlib.util.spec_from_file_location(module_name, file)
    if spec is None or spec.loader is None:
        raise error(str(file), "not a loadable Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # dataclasses and pickling inside the file need it registered
    try:
        spec.loader.exec_module(module)
    except SyntaxError as failure:
        raise error(str(file), f"syntax error: {failure.msg}", failure.lineno, failure.offset) from None
    except SystemExit as failure:  # `sys.exit()` at the top of the file must not end the program loading it
        raise error(str(file), f"importing it called exit({failure.code!r})") from None
    except Exception as failure:
        raise error(str(file), f"importing it raised {type(failure).__name__}: {describe_exception(failure)}") from None
    return module
