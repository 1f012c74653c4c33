"""ContextDeck: a desktop workbench for designing and debugging LLM agent contexts.

`contextdeck.engine` is the Qt-free core; `contextdeck.gui` the PySide6 application.
"""

__version__ = "0.1.0"

# The application's id: the name of its .desktop file, its AppStream metainfo and its icon (packaging/).
APP_ID = "io.github.contextdeck.ContextDeck"
