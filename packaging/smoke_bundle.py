"""The bundle's smoke test (`make bundle` runs it): python3 packaging/smoke_bundle.py dist/contextdeck

From an empty folder, with empty user folders and no Python of the checkout on any path, the bundle's own
executable must: name its version; list, validate and run the bundled examples; answer a request through its
validation worker; start the window offscreen, open the bundled example, show the error a form field's
pattern gives (the worker started through the bundle's executable) and render the window to a PNG; and its
desktop files must install. Exit 0 when all hold, 1 with what failed. Standard library only."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


def main(bundle: Path) -> int:
    executable = bundle / "contextdeck"
    failures: list[str] = []
    with tempfile.TemporaryDirectory(prefix="contextdeck-bundle-smoke-") as scratch:
        base = Path(scratch)
        env = {key: value for key, value in os.environ.items()
               if key not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "DISPLAY", "WAYLAND_DISPLAY")}
        env |= {"HOME": str(base / "home"), "XDG_CONFIG_HOME": str(base / "config"),
                "XDG_DATA_HOME": str(base / "data"), "XDG_STATE_HOME": str(base / "state"),
                "XDG_CACHE_HOME": str(base / "cache"), "QT_QPA_PLATFORM": "offscreen"}

        def run(*argv: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
            done = subprocess.run([str(executable), *argv], cwd=base, env=env, input=stdin, capture_output=True,
                                  text=True, timeout=300, check=False)
            print(f"smoke: contextdeck {' '.join(argv)} -> {done.returncode}", flush=True)
            return done

        def check(holds: bool, what: str, done: subprocess.CompletedProcess[str] | None = None) -> None:
            if not holds:
                failures.append(what + (f"\n  stdout: {done.stdout[-2000:]}\n  stderr: {done.stderr[-2000:]}"
                                        if done is not None else ""))

        version = run("--version")
        check(version.returncode == 0 and version.stdout.startswith("contextdeck "), "--version", version)
        listed = run("examples")
        examples = [Path(line) for line in listed.stdout.splitlines()]
        check(listed.returncode == 0 and len(examples) > 0, "examples lists the bundled documents", listed)
        check(all(path.is_relative_to(bundle) for path in examples), "the examples are inside the bundle", listed)
        folder = bundle / "_internal" / "contextdeck" / "resources" / "examples"
        for example in [*examples, folder / "delegates" / "report.json"]:
            checked = run("validate", str(example))
            check(checked.returncode == 0, f"validate {example.name}", checked)
        ran = run("run", str(folder / "refund_workflow.json"), "--activities", str(folder / "refund_activities.py"),
                  "--now", "2026-03-01T10:00:00Z", "--out", "out.json")
        check(ran.returncode == 0 and "4 call(s) run" in ran.stderr, "run the refund example", ran)
        request = json.dumps({"id": 1, "schema": {"type": "string", "pattern": "^[A-Z]$"}, "value": "ab"}) + "\n"
        worker = run("--child-module", "contextdeck._validation_worker", stdin=request)
        check(worker.returncode == 0 and "does not match" in worker.stdout, "the validation worker answers", worker)
        shot = base / "window.png"
        window = run("--child-module", "contextdeck.gui._smoke", str(shot))
        print(window.stdout, end="")
        check(window.returncode == 0 and shot.is_file() and shot.stat().st_size > 10_000,
              "the window opens the example, validates a form field and renders", window)
        if shot.is_file():
            shutil.copy2(shot, bundle.parent / "contextdeck-smoke.png")
        picture = base / "screenshot.png"
        screenshot = run("gui", "--screenshot", str(picture))
        check(screenshot.returncode == 0 and picture.is_file(), "gui --screenshot", screenshot)
        installed = subprocess.run(["sh", str(bundle / "install-desktop.sh")], env=env, capture_output=True,
                                   text=True, check=False)
        entry = base / "data" / "applications" / "io.github.contextdeck.ContextDeck.desktop"
        check(installed.returncode == 0 and f'Exec="{executable}" gui %f' in entry.read_text(encoding="utf-8"),
              "install-desktop.sh registers the bundle's executable")
        if shutil.which("desktop-file-validate"):
            valid = subprocess.run(["desktop-file-validate", str(entry)], capture_output=True, text=True, check=False)
            check(valid.returncode == 0 and not valid.stdout, f"desktop-file-validate: {valid.stdout}")
        left = [path for name in ("config", "state", "cache") for path in (base / name).rglob("*") if path.is_file()]
        check(left == [], f"the checks leave nothing in the user's folders: {left}")
    for failure in failures:
        print(f"smoke: FAILED: {failure}", file=sys.stderr)
    print(f"smoke: {'FAILED' if failures else 'passed'}", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: smoke_bundle.py BUNDLE_FOLDER", file=sys.stderr)
        raise SystemExit(2)
    raise SystemExit(main(Path(sys.argv[1]).resolve()))
