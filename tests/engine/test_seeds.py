"""The seeds' worked examples resolve and render as the seeds say."""

from contextdeck.engine import Context, load_document, render_text


def test_output_example_status_comes_from_the_output(examples) -> None:
    """†data.user.status is the output's "inactive", from message 1 only."""
    ctx = load_document(examples / "seed_output.json").context
    r = ctx.resolve("†data.user.status")
    assert (r.found, r.value, r.sources) == (True, "inactive", (1,))


def test_output_example_name_comes_from_the_first_message(examples) -> None:
    """†data.user.name is "Alex", from the initial data message."""
    r = load_document(examples / "seed_output.json").context.resolve("†data.user.name")
    assert (r.found, r.value, r.sources) == (True, "Alex", (0,))


def test_output_example_user_comes_from_both(examples) -> None:
    """†data.user merges both messages."""
    r = load_document(examples / "seed_output.json").context.resolve("†data.user")
    assert r.value == {"name": "Alex", "status": "inactive"}
    assert r.sources == (0, 1)


def test_merged_user_renders_as_one_block(examples) -> None:
    """The two ¶user messages become one block with the merged value, description and schema."""
    text = render_text(load_document(examples / "seed_user_merge.json").context)
    assert text.startswith("--- user ---\nUpdate the user's city to Austin\n\n--- user ---\n## Data: ¶user\n")
    assert '"name": "John Doe",\n  "age": 30' in text
    assert "Represents the current user.\nSchema for ¶user:" in text
    assert text.count("## Data:") == 1


def test_missing_reference_is_not_found() -> None:
    """A path that no message holds is not found and names itself."""
    r = Context([{"type": "state", "data": {"a": 1}}]).resolve("†state.b")
    assert not r.found
    assert r.missing == ("†state.b",)
