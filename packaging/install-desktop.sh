#!/usr/bin/env sh
# Register ContextDeck with the desktop, for this user: the menu entry, its icons (16-512 px and SVG), the
# AppStream metainfo (software centres) and "Open with" for JSON files. `--uninstall` removes them again.
#   after `pipx install .` or `pip install .`:  packaging/install-desktop.sh   (starts contextdeck-gui from PATH)
#   from an unpacked bundle:                   ./install-desktop.sh           (starts the bundle's executable)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
data=${XDG_DATA_HOME:-$HOME/.local/share}
id=io.github.contextdeck.ContextDeck

if [ "${1:-}" = "--uninstall" ]; then
    rm -f "$data/applications/$id.desktop" "$data/metainfo/$id.metainfo.xml" \
        "$data/icons/hicolor/scalable/apps/$id.svg" "$data"/icons/hicolor/*/apps/"$id.png"
    command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database "$data/applications" || true
    command -v gtk-update-icon-cache >/dev/null 2>&1 && gtk-update-icon-cache -qtf "$data/icons/hicolor" || true
    echo "ContextDeck removed from $data"
    exit 0
fi

if [ -x "$here/contextdeck" ] && [ -d "$here/_internal" ]; then
    command="\"$here/contextdeck\" gui %f"  # a bundle: this folder's executable (quoted: the path may hold spaces)
else
    command="contextdeck-gui %f"
    command -v contextdeck-gui >/dev/null 2>&1 ||
        echo "install-desktop: contextdeck-gui is not on PATH yet (pipx install . puts it in ~/.local/bin)" >&2
fi
escaped=$(printf '%s' "$command" | sed 's/[\\&|]/\\&/g')

mkdir -p "$data/applications" "$data/metainfo"
sed "s|^Exec=.*|Exec=$escaped|" "$here/$id.desktop" > "$data/applications/$id.desktop"
chmod 644 "$data/applications/$id.desktop"
install -m644 "$here/$id.metainfo.xml" "$data/metainfo/$id.metainfo.xml"
svg="$here/contextdeck.svg"  # a bundle's copy; in a checkout, the icon the window shows
[ -f "$svg" ] || svg="$here/../resources/icons/app.svg"
install -Dm644 "$svg" "$data/icons/hicolor/scalable/apps/$id.svg"
for png in "$here"/icons/hicolor/*/apps/"$id.png"; do
    size=$(basename "$(dirname "$(dirname "$png")")")
    install -Dm644 "$png" "$data/icons/hicolor/$size/apps/$id.png"
done
command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database "$data/applications" || true
command -v gtk-update-icon-cache >/dev/null 2>&1 && gtk-update-icon-cache -qtf "$data/icons/hicolor" || true
echo "ContextDeck registered in $data (menu entry $id.desktop)"
