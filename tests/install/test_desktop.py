"""Desktop integration files: icons at every size, AppStream metainfo and a .desktop entry that validate, and the
script that installs them for a pip/pipx install and for a bundle."""

from __future__ import annotations

import os
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from PySide6.QtGui import QImage

from contextdeck import APP_ID, __version__

PACKAGING = Path(__file__).resolve().parents[2] / "packaging"
DESKTOP = PACKAGING / f"{APP_ID}.desktop"
METAINFO = PACKAGING / f"{APP_ID}.metainfo.xml"
SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


@pytest.mark.parametrize("size", SIZES)
def test_a_png_icon_at_each_size(size: int) -> None:
    """packaging/icons holds the SVG rendered at each hicolor size, drawn (not blank)."""
    image = QImage(str(PACKAGING / "icons" / "hicolor" / f"{size}x{size}" / "apps" / f"{APP_ID}.png"))
    assert (image.width(), image.height()) == (size, size)
    assert image.pixelColor(size // 2, size // 2).alpha() == 255


def test_the_ids_agree() -> None:
    """The .desktop file is named after the id the window gives Qt, names the icon by it, and the metainfo
    launches it and names the package's version."""
    entry = dict(line.split("=", 1) for line in DESKTOP.read_text(encoding="utf-8").splitlines() if "=" in line)
    assert entry["Icon"] == APP_ID
    component = ET.parse(METAINFO).getroot()
    assert component.findtext("id") == APP_ID
    assert component.findtext("launchable") == DESKTOP.name
    assert component.find("releases/release").get("version") == __version__  # type: ignore[union-attr]


@pytest.mark.skipif(shutil.which("appstreamcli") is None, reason="appstreamcli: apt-get install appstream")
def test_the_metainfo_validates() -> None:
    """`appstreamcli validate` (Debian package appstream) accepts the metainfo, offline."""
    checked = subprocess.run(["appstreamcli", "validate", "--no-net", str(METAINFO)], capture_output=True,
                             text=True, check=False)
    assert checked.returncode == 0, checked.stdout


@pytest.mark.skipif(shutil.which("desktop-file-validate") is None,
                    reason="desktop-file-validate: apt-get install desktop-file-utils")
def test_the_desktop_entry_validates(tmp_path: Path) -> None:
    """`desktop-file-validate` accepts the entry, as shipped and as installed for a bundle."""
    bundle = fake_bundle(tmp_path / "Context Deck")
    data = tmp_path / "data"
    install(bundle / "install-desktop.sh", data)
    for entry in (DESKTOP, data / "applications" / DESKTOP.name):
        checked = subprocess.run(["desktop-file-validate", str(entry)], capture_output=True, text=True, check=False)
        assert (checked.returncode, checked.stdout) == (0, ""), entry


def install(script: Path, data: Path, *options: str) -> str:
    env = {**os.environ, "XDG_DATA_HOME": str(data)}
    return subprocess.run(["sh", str(script), *options], env=env, capture_output=True, text=True,
                          check=True).stdout


def fake_bundle(folder: Path) -> Path:
    """A bundle's folder as `make bundle` lays it out: the executable, _internal/, the desktop files."""
    shutil.copytree(PACKAGING, folder, ignore=shutil.ignore_patterns("contextdeck", "*.py", "*.spec"))
    shutil.copy2(PACKAGING.parent / "resources" / "icons" / "app.svg", folder / "contextdeck.svg")
    (folder / "_internal").mkdir()
    (folder / "contextdeck").write_text("#!/bin/sh\n")
    (folder / "contextdeck").chmod(0o755)
    return folder


def test_install_desktop_for_a_pip_install(tmp_path: Path) -> None:
    """After `pipx install .`: the entry starts contextdeck-gui; every icon, the SVG (the window's own icon) and the
    metainfo are installed; --uninstall removes them all."""
    data = tmp_path / "data"
    install(PACKAGING / "install-desktop.sh", data)
    entry = (data / "applications" / DESKTOP.name).read_text(encoding="utf-8")
    assert "\nExec=contextdeck-gui %f\n" in entry
    icons = sorted(path.relative_to(data).as_posix() for path in (data / "icons").rglob(f"{APP_ID}.*"))
    assert icons == sorted([f"icons/hicolor/{size}x{size}/apps/{APP_ID}.png" for size in SIZES]
                           + [f"icons/hicolor/scalable/apps/{APP_ID}.svg"])
    assert (data / "metainfo" / METAINFO.name).read_bytes() == METAINFO.read_bytes()
    svg = data / "icons" / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg"
    assert svg.read_bytes() == (PACKAGING.parent / "resources" / "icons" / "app.svg").read_bytes()
    install(PACKAGING / "install-desktop.sh", data, "--uninstall")
    assert list(data.rglob(f"{APP_ID}*")) == []


def test_install_desktop_from_a_bundle(tmp_path: Path) -> None:
    """From an unpacked bundle the entry starts the bundle's own executable, its path quoted."""
    bundle = fake_bundle(tmp_path / "Context Deck")
    data = tmp_path / "data"
    install(bundle / "install-desktop.sh", data)
    entry = (data / "applications" / DESKTOP.name).read_text(encoding="utf-8")
    assert f'\nExec="{bundle}/contextdeck" gui %f\n' in entry

