"""`make bundle`: the one-folder desktop bundle in dist/contextdeck, then its smoke test.

A clean copy of the checkout's tracked files is built into a wheel (no stale build/lib leaks in), the wheel and
PyInstaller (from PyPI; a build tool, never a dependency) are installed into a venv of their own under
build/bundle, and PyInstaller runs packaging/contextdeck.spec there. Then packaging/smoke_bundle.py checks the
result; this fails when it fails. Prints the bundle's size and the time taken."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "build" / "bundle"
DIST = ROOT / "dist"
PYINSTALLER = "pyinstaller>=6.10"


def run(*command: str | Path) -> None:
    print("bundle:", " ".join(str(part) for part in command), flush=True)
    subprocess.run([str(part) for part in command], check=True)


def tracked_files() -> list[Path]:
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    return [Path(name) for name in listed if name and (ROOT / name).is_file()]


def size_mb(folder: Path) -> float:
    """What the folder takes on disk, as `du` counts it: PyInstaller links some libraries twice (symlinks)."""
    return sum(path.lstat().st_blocks * 512 for path in folder.rglob("*") if not path.is_symlink()) / 2**20


def main() -> int:
    started = time.monotonic()
    shutil.rmtree(WORK, ignore_errors=True)
    shutil.rmtree(DIST / "contextdeck", ignore_errors=True)
    source = WORK / "source"
    for name in tracked_files():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    venv.create(WORK / "venv", with_pip=True)
    python = WORK / "venv" / "bin" / "python"
    run(python, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", WORK / "wheel", source)
    [wheel] = (WORK / "wheel").glob("contextdeck-*.whl")
    run(python, "-m", "pip", "install", "--quiet", wheel, PYINSTALLER)
    run(WORK / "venv" / "bin" / "pyinstaller", "--noconfirm", "--log-level", "WARN", "--distpath", DIST,
        "--workpath", WORK / "pyinstaller", source / "packaging" / "contextdeck.spec")
    built = time.monotonic() - started
    bundle = DIST / "contextdeck"
    print(f"bundle: {bundle} built in {built:.0f} s, {size_mb(bundle):.0f} MiB "
          f"(_internal/PySide6 {size_mb(bundle / '_internal' / 'PySide6'):.0f} MiB)", flush=True)
    smoked = subprocess.run([sys.executable, str(ROOT / "packaging" / "smoke_bundle.py"), str(bundle)], check=False)
    return smoked.returncode


if __name__ == "__main__":
    raise SystemExit(main())
