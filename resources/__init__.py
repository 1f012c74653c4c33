"""The application's files (`contextdeck.resources`): example documents, icons, style sheets, and once built,
the manual (README.md and docs/). Read through `importlib.resources`, so they are found in a checkout, in an
installed wheel and in a frozen bundle alike."""

from __future__ import annotations

import atexit
from contextlib import ExitStack
from importlib.resources import as_file, files
from pathlib import Path

_extracted = ExitStack()  # files that had to be copied out of an archive, kept until the process ends
atexit.register(_extracted.close)


def path(*parts: str) -> Path:
    """The file or folder `resources/<parts...>` on disk (Qt and the engine open files by name): where the package
    is a folder, as it always is when installed by pip or frozen by PyInstaller, the file itself; else a copy."""
    found = files(__name__).joinpath(*parts)
    if isinstance(found, Path):
        return found
    return _extracted.enter_context(as_file(found))


def examples() -> list[Path]:
    """The bundled example documents (`examples/*.json`), by name, then those of their folders (`delegates/`: a
    document and the delegate it calls)."""
    folder = path("examples")
    return sorted(folder.glob("*.json")) + sorted(folder.glob("*/*.json"))


def manual() -> Path:
    """The folder holding README.md and docs/: copied into the package as `manual` by the build (setup.py);
    in a checkout, the repository's root."""
    built = path("manual")
    return built if (built / "README.md").is_file() else Path(__file__).resolve().parent.parent
