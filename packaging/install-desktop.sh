#!/usr/bin/env sh
# Register ContextDeck with the desktop (menu entry, icon, "Open with" for JSON files), for this user.
# Run after installing the package (for example `pipx install .`), so that `contextdeck` is on PATH.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
data=${XDG_DATA_HOME:-$HOME/.local/share}
install -Dm644 "$here/contextdeck.desktop" "$data/applications/contextdeck.desktop"
install -Dm644 "$here/contextdeck.svg" "$data/icons/hicolor/scalable/apps/contextdeck.svg"
command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database "$data/applications" || true
echo "ContextDeck registered in $data/applications"
