"""The request the model receives (001, 002, 005, 012, 016, 017): rendered messages, composed schema, settings.
"""

from ._render import render, render_text
from ._request import Request, compose_request

__all__ = [
    "Request",
    "compose_request",
    "render",
    "render_text",
]
