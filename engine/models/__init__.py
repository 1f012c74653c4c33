"""Asking a model (002, 004): prompts, an OpenAI-compatible provider, and cassettes that record and replay.
"""

from ._ask import Asker
from ._cassette import Cassette
from ._prompt import Prompt
from ._provider import Provider

__all__ = [
    "Asker",
    "Cassette",
    "Prompt",
    "Provider",
]
