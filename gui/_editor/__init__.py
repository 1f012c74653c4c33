"""The data editor: a form generated from a JSON Schema beside a raw JSON tab, validated off the GUI thread."""

from ._editor import DataEditor
from ._validation import start_validation_ahead

__all__ = ["DataEditor", "start_validation_ahead"]
