"""Edit commands apply and return their inverse; ids survive edits."""

import pytest

from contextdeck.engine import Context, Insert, Move, Remove, Replace

A, B, C = ({"type": "state", "data": {"n": n}} for n in range(3))


@pytest.mark.parametrize(
    "edit", [Insert(1, {"type": "text", "text": "x"}), Insert(-1, {"type": "text", "text": "x"}),
             Remove(0), Remove(-1), Replace(2, {"type": "state", "data": {"n": 9}}), Move(0, 2), Move(2, 0)]
)
def test_inverse_restores_the_messages(edit) -> None:
    """Applying an edit and then its inverse gives back the same messages in the same order."""
    ctx = Context([A, B, C])
    before = ctx.messages
    inverse = ctx.apply(edit)
    assert ctx.messages != before
    ctx.apply(inverse)
    assert ctx.messages == before


def test_ids_follow_their_message() -> None:
    """A message keeps its id through moves and replaces; the id of a removed message is gone."""
    ctx = Context([A, B, C])
    first, last = ctx.id_at(0), ctx.id_at(2)
    ctx.move(0, 2)
    assert ctx.index_of(first) == 2
    ctx.replace(2, {"type": "state", "data": {}})
    assert ctx.id_at(2) == first
    ctx.remove(1)
    with pytest.raises(KeyError):
        ctx.index_of(last)
