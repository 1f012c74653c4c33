"""A plan's units: a call alone whose entry is its own index is kept as that index, and reads as any unit does."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from contextdeck.engine.protocol._groups import Unit, flatten


def test_a_call_alone_reads_as_a_unit_of_one_member() -> None:
    lone = Unit.of("one", (7,), 7)
    assert (lone.pattern, lone.members, lone.entry) == ("one", (7,), 7)
    assert lone == Unit.of("one", (7,), 7)
    assert hash(lone) == hash(Unit.of("one", (7,), 7))
    assert repr(lone) == "Unit(pattern='one', members=(7,), entry=7)"
    assert lone != Unit.of("one", (7,), 6)
    assert lone != Unit.of("all", (7,), 7)
    assert lone != (7,)


def test_a_call_alone_after_a_group_keeps_its_own_entry() -> None:
    """A group's members are numbered with the calls: the call after a group of two is call 3 at entry 2."""
    calls, units = flatten([{"_tool": "a"}, {"all": [{"_tool": "b"}, {"_tool": "c"}]}, {"_tool": "d"}])
    assert [(u.pattern, u.members, u.entry) for u in units] == [("one", (0,), 0), ("all", (1, 2), 1),
                                                               ("one", (3,), 2)]
    assert len(calls) == 4


def test_a_call_alone_is_kept_smaller_than_a_group_of_one() -> None:
    """What a large plan keeps one of a call: the lone unit holds its index only, no tuple of members."""
    lone, group = Unit.of("one", (5,), 5), Unit.of("all", (5,), 5)
    assert not hasattr(lone, "__dict__")
    assert not hasattr(group, "__dict__")
    assert len(type(lone).__slots__) == 1
    assert len(type(group).__slots__) == 3


@given(st.lists(st.one_of(st.just("call"), st.integers(0, 3)), max_size=12))
def test_units_number_every_call_once_in_plan_order(shape: list[str | int]) -> None:
    """Whatever the plan (calls, groups of any size), the units' members are the calls in order, each once, and
    each unit's entry is its position among the entries."""
    entries = [{"_tool": "t"} if item == "call" else {"any": [{"_tool": "t"}] * int(item)} for item in shape]
    calls, units = flatten(entries)
    assert [i for unit in units for i in unit.members] == list(range(len(calls)))
    assert [unit.entry for unit in units] == list(range(len(entries)))
    assert all((unit.pattern == "one") == (entry == {"_tool": "t"}) for unit, entry in zip(units, entries, strict=True))
