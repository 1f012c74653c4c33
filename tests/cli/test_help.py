"""The command line introduces itself."""

import subprocess
import sys


def test_help_lists_every_subcommand() -> None:
    """`contextdeck --help` succeeds and names each subcommand."""
    result = subprocess.run(
        [sys.executable, "-m", "contextdeck", "--help"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    for command in ("resolve", "render", "validate", "gui"):
        assert command in result.stdout
