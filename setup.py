"""The package's layout, which pyproject.toml cannot express: four folders at the root, mapped onto one package.

    packaging/contextdeck -> contextdeck            (version, command line, child processes)
    engine                -> contextdeck.engine
    gui                   -> contextdeck.gui
    resources             -> contextdeck.resources  (examples, icons; the manual is copied in)

setuptools' `packages.find` only finds packages under the names of their folders (`engine.run`, never
`contextdeck.engine.run`), so with this mapping pyproject.toml had to list every subpackage by hand, and a new
one was silently left out of the wheel. Here every folder below each root is found and named, whatever the
subpackages are called: a folder without `__init__.py` ships as a namespace package rather than not at all.
Everything else (metadata, dependencies, entry points, package data) is in pyproject.toml.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import find_namespace_packages, setup
from setuptools.command.build_py import build_py

ROOTS = {
    "contextdeck": "packaging/contextdeck",
    "contextdeck.engine": "engine",
    "contextdeck.gui": "gui",
    "contextdeck.resources": "resources",
}

# Help → Contents shows these, from inside the installed package (a wheel or a bundle has no checkout).
MANUAL = ("README.md", "docs")


def packages() -> list[str]:
    found = []
    for name, folder in ROOTS.items():
        found.append(name)
        found += [f"{name}.{sub}" for sub in find_namespace_packages(folder, exclude=["*__pycache__*"])]
    return found


class BuildWithManual(build_py):
    """Builds the package afresh and copies the README and docs/ into contextdeck/resources/manual (links
    between them keep working)."""

    def run(self) -> None:
        # setuptools copies into build/lib and never empties it: a module deleted or moved since the last build
        # of this checkout would still be packed into the wheel
        shutil.rmtree(Path(self.build_lib, "contextdeck"), ignore_errors=True)
        super().run()
        target = Path(self.build_lib, "contextdeck", "resources", "manual")
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        for name in MANUAL:
            if Path(name).is_dir():
                shutil.copytree(name, target / name)
            else:
                shutil.copy2(name, target / name)


setup(packages=packages(), package_dir=ROOTS, cmdclass={"build_py": BuildWithManual})
