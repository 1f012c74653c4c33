"""ContextDeck: a desktop workbench for designing and debugging LLM agent contexts.

`contextdeck.engine` is the Qt-free core; `contextdeck.gui` the PySide6 application.
"""

__version__ = "0.1.0"
