"""A message's content parts (a text and an image, as chat completions takes them) in the trace conventions' words,
and back: OpenTelemetry GenAI's parts of `gen_ai.input.messages` (`text`, `blob`, `uri`, `file`) and OpenInference's
flattened `message.contents` (`text`, `image`, `audio`). Each direction reads what the other writes, so a message of
parts exported comes back as the same parts (`comes_back` says of one part whether it does)."""

from __future__ import annotations

import mimetypes
from typing import Any

# chat completions' `input_audio` formats and their MIME types (OpenInference maps them so).
_AUDIO = {"wav": "audio/wav", "mp3": "audio/mpeg"}
_FORMATS = {**{mime: kind for kind, mime in _AUDIO.items()}, "audio/x-wav": "wav", "audio/wave": "wav",
            "audio/mp3": "mp3"}
_BASE64 = ";base64"


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _data_url(url: str) -> tuple[str, str] | None:
    """A base64 `data:` URL's MIME type and payload; None for any other URL (a `data:` URL of plain text too)."""
    header, comma, payload = url[5:].partition(",") if url.startswith("data:") else ("", "", "")
    return (header[:-len(_BASE64)], payload) if comma and header.endswith(_BASE64) else None


def _modality(mime: str | None) -> str:
    kind = (mime or "").partition("/")[0]
    return kind if kind in ("image", "audio", "video") else "document"


def _by_url(url: str, modality: str) -> dict[str, Any]:
    """A URL as GenAI says it: the bytes of a base64 `data:` URL as a `blob`, any other URL as a `uri`."""
    found = _data_url(url)
    if found is None:
        return {"type": "uri", "modality": modality, "uri": url}
    mime, content = found
    return {"type": "blob", "modality": modality, **({"mime_type": mime} if mime else {}), "content": content}


def text_parts(content: str | list[Any]) -> list[Any]:
    """A message's content as chat completions' parts: a text as its one `text` part, parts as they are."""
    return content if isinstance(content, list) else [{"type": "text", "text": content}]


def genai_parts(content: str | list[Any]) -> list[dict[str, Any]]:
    """A message's content, a text or parts the API takes (`api_parts`), as GenAI's parts."""
    return [_genai_part(part) for part in text_parts(content)]


def comes_back(part: dict[str, Any]) -> bool:
    """Whether a part the API takes comes back as it is from either convention's words (`chat_part`,
    `openinference_part`): not one with a key the API has no field for, nor a file given both by its id and by its
    data, nor an unnamed file of an image's data URL (read back as an image)."""
    at = ".message.contents.0."  # (where `openinference_contents` writes a message's one part, under no prefix)
    said = {key[len(at):]: value for key, value in openinference_contents("", [part]).items() if value is not None}
    return chat_part(_genai_part(part)) == part and openinference_part(said) == part


def _genai_part(part: dict[str, Any]) -> dict[str, Any]:
    """One chat completions part the API takes as a GenAI part. The API's own settings no GenAI field says (an
    image's `detail`, a file's `filename`) stay beside it; a refusal, which no GenAI part says, is written as it is
    (a generic part)."""
    kind, image, audio, file = (part.get("type"), _dict(part.get("image_url")), _dict(part.get("input_audio")),
                                _dict(part.get("file")))
    if kind == "text":
        return {"type": "text", "content": part["text"]}
    if kind == "image_url":
        return {**_by_url(image["url"], "image"), **{key: image[key] for key in ("detail",) if key in image}}
    if kind == "input_audio":
        return {"type": "blob", "modality": "audio", "mime_type": _AUDIO[audio["format"]], "content": audio["data"]}
    if kind != "file":
        return part
    named = _named(file)
    guessed = mimetypes.guess_type(file.get("filename") or "")[0]
    if isinstance(file.get("file_id"), str):
        return {"type": "file", "modality": _modality(guessed), "file_id": file["file_id"], **named}
    found = _data_url(file["file_data"])
    mime, content = found if found is not None else (None, file["file_data"])
    return {"type": "blob", "modality": _modality(mime or guessed), **({"mime_type": mime} if mime else {}),
            "content": content, **named}


def chat_part(part: dict[str, Any]) -> dict[str, Any]:
    """A GenAI part of a message that is not all text, as chat completions writes it (what `genai_parts` writes comes
    back as it was): a text as `text`; an image by its URI or as a data URL of its bytes as `image_url`; a wav or mp3
    blob as `input_audio`; a file by its id, a named blob or one of a document as `file`; any other part as it is."""
    kind, modality, mime = part.get("type"), part.get("modality"), part.get("mime_type")
    content = part.get("content")
    if kind == "text":
        return {"type": "text", "text": str(part.get("content", ""))}
    if kind == "file" and isinstance(part.get("file_id"), str):
        return {"type": "file", "file": {"file_id": part["file_id"], **_named(part)}}
    if kind not in ("uri", "blob") or not isinstance(part.get("uri" if kind == "uri" else "content"), str):
        return part
    if kind == "blob" and ("filename" in part or modality not in ("image", "audio", "video")):
        data = f"data:{mime}{_BASE64},{content}" if isinstance(mime, str) else content
        return {"type": "file", "file": {"file_data": data, **_named(part)}}
    if modality == "image":
        mime = mime if isinstance(mime, str) else "image/*"
        url = part["uri"] if kind == "uri" else f"data:{mime}{_BASE64},{content}"
        return {"type": "image_url", "image_url": {"url": url, **{k: part[k] for k in ("detail",) if k in part}}}
    if kind == "blob" and modality == "audio" and mime in _FORMATS:
        return {"type": "input_audio", "input_audio": {"data": content, "format": _FORMATS[mime]}}
    return part


def _named(part: dict[str, Any]) -> dict[str, Any]:
    return {"filename": part["filename"]} if isinstance(part.get("filename"), str) else {}


def openinference_contents(prefix: str, parts: list[Any]) -> dict[str, Any]:
    """A message's parts as OpenInference's flattened `message.contents` under `prefix` (`llm.input_messages.0`): a
    text, an image or an audio by its URL (audio as a data URL of its bytes, with its MIME type). OpenInference says
    no refusal, no file and no image detail: each goes under names of its own in OpenInference's pattern, which
    `openinference_part` reads back (a refusal's text with its own type; a file's `file.file.url`, `.id`, `.name`;
    a detail beside its image's URL, `image.image.detail`)."""
    found: dict[str, Any] = {}
    for m, part in enumerate(parts):
        at = f"{prefix}.message.contents.{m}.message_content"
        kind, audio, file = part.get("type"), _dict(part.get("input_audio")), _dict(part.get("file"))
        if kind == "image_url":  # (its detail too, which OpenInference has no field for: the import reads it back)
            found |= {f"{at}.type": "image", **{f"{at}.image.image.{key}": value for key, value in
                                                part["image_url"].items() if key in ("url", "detail")}}
        elif kind == "input_audio":
            mime = _AUDIO[audio["format"]]
            found |= {f"{at}.type": "audio", f"{at}.audio.audio.url": f"data:{mime}{_BASE64},{audio['data']}",
                      f"{at}.audio.audio.mime_type": mime}
        elif kind == "file":
            found |= {f"{at}.type": "file", **{f"{at}.file.file.{key}": file[own] for own, key in _FILE.items()
                                                if own in file}}
        else:
            found |= {f"{at}.type": kind, f"{at}.text": part.get("text", part.get("refusal"))}
    return found


_FILE = {"file_data": "url", "file_id": "id", "filename": "name"}  # a chat file's fields, OpenInference's file's


def openinference_part(part: dict[str, Any]) -> dict[str, Any]:
    """One of OpenInference's `message.contents` as the chat API writes it (what `openinference_contents` writes comes
    back as it was): a text, an image by its URL, a wav or mp3 audio data URL as `input_audio`, a refusal, a file;
    another medium (an audio by its URL, a video) as OpenInference says it, `{"type": "video", "video": {"url": …}}`."""
    kind = part.get("message_content.type", "text")
    medium = f"message_content.{kind}.{kind}."
    said = {key[len(medium):]: value for key, value in part.items() if key.startswith(medium)}
    found = _data_url(str(said.get("url", "")))
    if kind == "image":
        return {"type": "image_url", "image_url": {"url": said.get("url", ""), **{
            key: said[key] for key in ("detail",) if key in said}}}
    if kind == "audio" and found is not None and found[0] in _FORMATS:
        return {"type": "input_audio", "input_audio": {"data": found[1], "format": _FORMATS[found[0]]}}
    if kind == "file":
        return {"type": "file", "file": {own: said[key] for own, key in _FILE.items() if key in said}}
    if kind == "refusal":
        return {"type": "refusal", "refusal": part.get("message_content.text", "")}
    return {"type": kind, kind: said} if said else {"type": kind, "text": part.get("message_content.text", "")}
