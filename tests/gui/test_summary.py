"""One-line summaries: compact JSON cut at its limit, made without leaving garbage for the collector."""

from __future__ import annotations

import gc

from contextdeck.engine import classify
from contextdeck.gui._summary import LIMIT, clipped, counted, message_summary, one_line, short_json, turn_words


def test_a_small_value_is_shown_whole_in_compact_json() -> None:
    assert short_json({"user": {"name": "Ada", "tags": ["a", 1, None]}, "ok": True}) == (
        '{user: {name: "Ada", tags: ["a", 1, null]}, ok: true}')
    assert short_json([]) == "[]"


def test_a_value_past_the_limit_is_cut_with_an_ellipsis_without_reading_all_of_it() -> None:
    class Endless(list):  # a list that fails if it is read past what the limit needs
        def __iter__(self):  # type: ignore[no-untyped-def]
            for n in range(10**9):
                if n > 50:
                    raise AssertionError("read past the limit")
                yield n

    assert short_json(Endless(), limit=20) == "[0, 1, 2, 3, 4, 5, 6…"
    assert short_json({"text": "x" * 10_000}, limit=12) == '{text: "xxxx…'
    exact = short_json({"a": 1}, limit=6)
    assert exact == "{a: 1}"
    assert short_json({"a": 1}, limit=5) == "{a: 1…"  # one character more than the limit: cut


def test_every_summary_limit_is_the_characters_before_the_ellipsis() -> None:
    """`short_json`, `one_line` and `clipped` read `limit` alike: a text of `limit` characters is whole, a longer
    one is its first `limit` and an ellipsis."""
    assert clipped("abcdef", 6) == one_line("abcdef", 6) == "abcdef"
    assert clipped("abcdefg", 6) == one_line("abcdefg", 6) == "abcdef…"
    assert short_json("abcd", 6) == '"abcd"'
    assert short_json("abcde", 6) == '"abcde…'


def test_making_a_summary_leaves_no_cyclic_garbage() -> None:
    """A summary is made for every timeline row painted: each must be freed by reference counting alone,
    not left as a cycle to the collector (a self-calling closure was one)."""
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        for n in range(200):
            short_json({"n": n, "nested": {"list": [n, {"deep": [n]}]}})
        assert gc.collect() == 0
    finally:
        if enabled:
            gc.enable()


def test_a_message_of_parts_is_summarised_as_its_texts_and_the_other_parts_types() -> None:
    """An image's data URL is never shown (or read whole), a long text part is cut."""
    message = {"role": "user", "content": [
        {"type": "text", "text": "What is this?"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "A" * 100_000}},
        {"type": "input_text", "text": "Be brief. " * 10_000}]}
    line = message_summary(message, classify(message))
    assert line.startswith("user: What is this? [image] Be brief. Be brief."), "the part named as the editor names it"
    assert line.endswith("…")
    assert len(line) <= LIMIT + len("user: ") + 1


def test_a_part_that_is_not_an_object_is_said_in_its_place() -> None:
    """A content of a million parts, one of them not an object, is summarised part by part from its first ones,
    not as the JSON of the whole list (nor checked whole for every row painted)."""
    parts: list[object] = [{"type": "text", "text": "word"}] * 1_000_000
    parts[1] = 7
    message = {"role": "user", "content": parts}
    line = message_summary(message, classify(message))
    assert line.startswith("user: word 7 word word")


def test_a_turn_says_its_tokens_or_that_they_are_unknown() -> None:
    """A turn's words give the total; a trace that recorded only prompt and completion gets their sum; one that
    recorded no usage says the tokens are unknown (it said "? tokens"), in the timeline's plan row too."""
    assert turn_words({"model": "m", "usage": {"total_tokens": 18}}) == "m · 18 tokens"
    assert turn_words({"model": "m", "usage": {"prompt_tokens": 11, "completion_tokens": 7}}) == "m · 18 tokens"
    assert turn_words({"model": "m", "usage": {"prompt_tokens": 11}}) == "m · tokens unknown"
    assert turn_words({"model": "m", "usage": {"total_tokens": True}}) == "m · tokens unknown"
    plan = {"type": "plan", "plan": [], "_model": {"model": "m"}}
    assert message_summary(plan, classify(plan)) == "turn by m · tokens unknown: no calls"


def test_a_count_is_said_in_words_not_with_an_s_in_brackets() -> None:
    """The import dialog and status said "1 model turn(s)": a count takes the word for that many."""
    assert counted(1, "model turn") == "1 model turn"
    assert counted(2, "model turn") == "2 model turns"
    assert counted(0, "warning") == "0 warnings"
    assert counted(1, "activity", "activities") == "1 activity"
    assert counted(1200, "activity", "activities") == "1,200 activities"


def test_a_tool_message_says_the_tools_it_defines_or_names() -> None:
    """Inline schemas are defined; a reference by name (012) names the registry's tools it brings in."""
    def summary(message: dict) -> str:  # type: ignore[type-arg]
        return message_summary(message, classify(message))

    assert summary({"type": "tool", "tool": {"lookup": {"type": "object"}}}) == "defines lookup"
    assert summary({"type": "tool", "tool": "Tool.isEnglish"}) == "names Tool.isEnglish of the tool registry"
    assert summary({"type": "tool", "tool": ["Tool.a", "b"]}) == "names Tool.a, b of the tool registry"
    assert summary({"type": "tool", "tool": [1]}) == "tool definition"
