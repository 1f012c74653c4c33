"""Child processes of the application (the schema validation worker): a module of this package run as
`__main__` in a process of its own, started the same way from a checkout, an installed wheel and a frozen
bundle."""

from __future__ import annotations

import runpy
import sys
from collections.abc import Sequence

# The hidden option of the `contextdeck` executable that runs a module instead of the command line. A frozen
# bundle has no interpreter to give `-m` to: its executable is the command line, and this is its `-m`.
CHILD_OPTION = "--child-module"


def child_command(module: str) -> tuple[str, list[str]]:
    """The program and arguments that run `module` (a `contextdeck.` module) in a new process.

    Python runs it with `-m`, `-P` (the current folder is not searched for modules) and `-u` (unbuffered
    pipes); a bundle made by PyInstaller (`sys.frozen`) runs its own executable with `CHILD_OPTION`.
    """
    if getattr(sys, "frozen", False):
        return sys.executable, [CHILD_OPTION, module]
    return sys.executable, ["-P", "-u", "-m", module]


def run_child(argv: Sequence[str]) -> bool:
    """Runs the module `argv` names after `CHILD_OPTION` as `__main__`, the rest of `argv` its arguments, and
    returns True; False (having run nothing) for any other command line. Only this package's modules run: the
    option is no general `-m`."""
    if len(argv) < 2 or argv[0] != CHILD_OPTION or not argv[1].startswith("contextdeck."):
        return False
    sys.argv[1:] = argv[2:]
    runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    return True
