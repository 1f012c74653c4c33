"""The message editor: a header, a form for the message's body, and the whole message as JSON."""

from ._ahead import FormsAhead
from ._calls import reference_completer
from ._catalog import Catalog, Catalogs, catalog_of
from ._editor import MessageEditor
from ._model import NEW_MESSAGES, Body, MessageModel, read_message, retyped, template, with_body, with_key

__all__ = [
    "NEW_MESSAGES",
    "Body",
    "Catalog",
    "Catalogs",
    "FormsAhead",
    "MessageEditor",
    "MessageModel",
    "catalog_of",
    "read_message",
    "reference_completer",
    "retyped",
    "template",
    "with_body",
    "with_key",
]
