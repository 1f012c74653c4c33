"""One-line summaries of messages and calls, bounded in length whatever the size of the payload."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from contextdeck.engine import Form, MessageInfo, body_of, group_of, part_text, payload_of, text_of

LIMIT = 160


def counted(count: int, word: str, plural: str | None = None) -> str:
    """`count` and the word for that many: `1 model turn`, `2 model turns`, `0 activities` (`plural` when the word
    does not take an s). Said in words, not `turn(s)`."""
    return f"{count:,} {word if count == 1 else plural or word + 's'}"


def short_json(value: Any, limit: int = LIMIT) -> str:
    """Compact JSON of `value`, `clipped` to `limit`, without serializing all of a huge value."""
    parts: list[str] = []
    budget = limit + 1  # one character past the limit says there is more
    for token in _tokens(value):
        if budget <= 0:
            break
        token = token[:budget]  # a long leaf is cut as soon as it is made
        parts.append(token)
        budget -= len(token)
    return clipped("".join(parts), limit)


def _tokens(item: Any) -> Iterator[str]:
    """`item` as compact JSON, a piece at a time. A generator rather than a self-calling closure: a summary
    is made for every row painted, and a closure that calls itself is a cycle only the collector frees."""
    if isinstance(item, dict):
        yield "{"
        for position, (key, sub) in enumerate(item.items()):
            if position:
                yield ", "
            yield f"{key}: "
            yield from _tokens(sub)
        yield "}"
    elif isinstance(item, list):
        yield "["
        for position, sub in enumerate(item):
            if position:
                yield ", "
            yield from _tokens(sub)
        yield "]"
    else:
        yield json.dumps(item, ensure_ascii=False)


def clipped(text: str, limit: int) -> str:
    """`text` whole when it has at most `limit` characters, else its first `limit` and an ellipsis (`limit`: the
    characters before the ellipsis, in every summary here)."""
    return text if len(text) <= limit else text[:limit].rstrip() + "…"


def one_line(text: str, limit: int = LIMIT) -> str:
    """`text` on one line (its runs of white space one space each), `clipped` to `limit`."""
    return clipped(" ".join(text[: limit * 2].split()), limit)


PART_NAMES = {"image_url": "image", "input_audio": "audio", "file": "file"}  # OpenAI's part types, in words


def part_name(part: dict[str, Any]) -> str:
    """What a content part that is not text is, in a word (`image`), as the timeline and the editor say it."""
    kind = part.get("type")
    return PART_NAMES.get(kind, kind) if isinstance(kind, str) else "part"


def _parts_line(parts: list[Any]) -> str:
    """A message's parts as a line: their texts, and each other part by its type (an image's data URL can be
    megabytes), read only as far as a summary shows."""
    words: list[str] = []
    size = 0
    for part in parts:
        text = part_text(part)
        if text is not None:
            word = text[: LIMIT * 2]
        else:
            word = f"[{part_name(part)}]" if isinstance(part, dict) else short_json(part, LIMIT)
        words.append(word)
        size += len(word) + 1
        if size > LIMIT * 2:
            break
    return " ".join(words)


def message_summary(message: dict[str, Any], info: MessageInfo) -> str:
    """What a timeline row says about a message after its kind and instance."""
    if info.form is Form.TEXT:
        role, text = text_of(message)
        if isinstance(text, list) and text and isinstance(text[0], dict):
            return f"{role}: {one_line(_parts_line(text))}"
        said = one_line(text) if isinstance(text, str) else short_json(text)
        return f"{role}: {said}"
    message = body_of(message)  # a custom content type (001) is summarised as the message it stands for
    if info.form is Form.ADVISOR:
        persona = message.get("role")
        said = f": {one_line(persona)}" if isinstance(persona, str) else ""
        return f"{message.get('id')}, on {message.get('on')}{said}"
    if info.form is Form.PRESET:
        return short_json({key: value for key, value in message.items() if key != "type"})
    if info.form is Form.TOOL:
        names = tool_names(message)
        if names:
            return "defines " + ", ".join(names)
        named = message.get("tool")  # a reference by name (012): a string, or a list of them
        named = [named] if isinstance(named, str) else named if isinstance(named, list) else []
        named = [name for name in named if isinstance(name, str)]
        return f"names {', '.join(named)} of the tool registry" if named else "tool definition"
    if info.form is Form.PLAN:
        plan = message.get("plan")
        calls = plan if isinstance(plan, list) else []
        turn = f"turn by {turn_words(message['_model'])}: " if isinstance(message.get("_model"), dict) else ""
        parts = [f"{counted(len(calls), 'call')}: " + " → ".join(map(entry_name, calls))] \
            if calls else []
        if message.get("output") is not None:  # a model's last turn: the output that ends the loop
            parts.append("output " + short_json(message["output"]))
        return turn + ("; ".join(parts) or "no calls")
    if info.form is Form.RECORD:
        call = message.get("_call")
        tool = call.get("_tool") if isinstance(call, dict) else None
        return f"{tool or '?'} ran (run record: it writes nothing)"
    write = info.write
    if write is not None and write.path:
        call = message.get("_call")
        tool = call.get("_tool") if isinstance(call, dict) else None
        where = "." .join(write.path)
        prefix = f"{tool} → {where}" if tool else f"→ {where}"
        method = f" ({write.method})" if write.method != "set" else ""
        return f"{prefix}{method} = {short_json(write.value)}"
    return short_json(payload_of(message))


def entry_name(entry: Any) -> str:
    """A plan entry in a few words: its tool (with its instance), or a group as `any(a | b)`."""
    group = group_of(entry)
    if group is not None:
        pattern, members = group
        return f"{pattern}(" + " | ".join(map(entry_name, members if isinstance(members, list) else [members])) + ")"
    if not isinstance(entry, dict):
        return "?"
    instance = entry.get("_instance")
    return str(entry.get("_tool", "?")) + (f"@{instance}" if instance is not None else "")


def tool_names(message: dict[str, Any]) -> list[str]:
    body = message.get("tool")
    if isinstance(body, dict):
        properties = body.get("properties")
        const = properties.get("_tool", {}).get("const") if isinstance(properties, dict) else None
        if isinstance(const, str):
            return [const]
        return [str(name) for name, schema in body.items() if isinstance(schema, dict)]
    return []


def call_summary(call: Any, with_tool: bool = True) -> str:
    """`tool(param: value, …) → †destination` for one call of a plan or solution (`with_tool`: the name too);
    a pattern group as `all(a | b)` (`with_tool`: the pattern too)."""
    group = group_of(call)
    if group is not None:
        named = entry_name(call)
        return named if with_tool else named[len(group[0]):]
    if not isinstance(call, dict):
        return short_json(call)
    params = {k: v for k, v in call.items() if not k.startswith("_")}
    arguments = f"({short_json(params, 90)[1:-1] if params else ''})"
    text = f"{call.get('_tool', '?')}{arguments}" if with_tool else arguments
    if isinstance(call.get("_outputPath"), str):
        text += f" → {call['_outputPath']}"
    return one_line(text)


def type_label(message: dict[str, Any]) -> str:
    """The type a row shows: a `{role, content}` message (001) has none and is text, unless its content is a
    custom content type (`{"type": "input", ...}`): then that type."""
    kind = body_of(message).get("type")
    return kind if isinstance(kind, str) else "text"


def is_output(message: dict[str, Any]) -> bool:
    message = body_of(message)
    return "_outputPath" in message or "_call" in message


def _token_count(usage: Any) -> str:
    """A turn's tokens: the total, else prompt and completion added; a trace may have recorded neither."""
    usage = usage if isinstance(usage, dict) else {}
    counts = [usage.get(key) for key in ("prompt_tokens", "completion_tokens")]
    total = usage.get("total_tokens")
    if not _count(total) and all(_count(count) for count in counts):
        total = sum(counts)
    return f"{total} tokens" if _count(total) else "tokens unknown"


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def turn_words(audit: Any) -> str:
    """A turn's record in words: who gave it, tokens, latency, replayed; `typed or given` without one."""
    if not isinstance(audit, dict):
        return "typed or given (no model exchange)"
    parts = [str(audit.get("model") or "model"), _token_count(audit.get("usage"))]
    if audit.get("replayed"):
        parts.append("replayed")
    elif isinstance(audit.get("latency_ms"), int):
        parts.append(f"{audit['latency_ms']} ms")
    return " · ".join(parts)
