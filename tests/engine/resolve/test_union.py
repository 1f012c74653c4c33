"""A watch of several references unites their source keys; `Union` remembers the last union."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from contextdeck.engine.resolve._incremental._watches import Union, _union
from contextdeck.engine.resolve._keys import Keys

keys = st.lists(st.integers(0, 60), unique=True).map(lambda ks: Keys(sorted(ks)))


@st.composite
def evolving(draw: st.DrawFn) -> list[tuple[Keys, ...]]:
    """Successive parts of a watch: kept as they were, grown by newer keys (in place or not), edited by keys lost and
    gained, or anything else."""
    count = draw(st.integers(2, 3))
    parts = tuple(draw(keys) for _ in range(count))
    steps = [parts]
    for _ in range(draw(st.integers(1, 6))):
        changed = []
        for part in parts:
            how = draw(st.sampled_from(["same", "grown", "edited", "other"]))
            if how == "grown":  # in place (the list shared) or not, as `Keys.plus` decides
                start = (part[-1] + 1) if part else 0
                part = part.plus(range(start, start + draw(st.integers(0, 3))))
            elif how == "edited":
                gone = draw(st.lists(st.sampled_from(tuple(part)), unique=True) if part else st.just([]))
                came = sorted(draw(st.lists(st.integers(0, 60), unique=True, max_size=3)))  # (some there already)
                part = part.edited(gone, came) or part
            elif how == "other":
                part = draw(keys)
            changed.append(part)
        parts = tuple(changed)
        steps.append(parts)
    return steps


@settings(max_examples=300, deadline=None)
@given(evolving())
def test_the_remembered_union_is_the_union(steps: list[tuple[Keys, ...]]) -> None:
    """However its parts changed, the union is the sorted set of their keys."""
    union = Union()
    for parts in steps:
        assert union(parts) == _union(parts) == tuple(sorted(set().union(*parts)))


def test_unchanged_parts_reuse_the_union() -> None:
    union = Union()
    first = union((Keys((1, 5)), Keys((2, 3))))
    assert union(union.parts) is first  # the very same parts: the very same union
    assert union((union.parts[0].plus((9,)), union.parts[1])) == (1, 2, 3, 5, 9)


@settings(max_examples=300, deadline=None)
@given(keys, st.data())
def test_edited_keys_are_the_keys_less_the_lost_with_the_added(before: Keys, data: st.DataObject) -> None:
    """A result's kept keys edited in one copy (`Keys.edited`): sorted and unique, less the lost (None when one
    of them is not there), with the added (some may be there already); unchanged keys stay the very tuple."""
    lost = data.draw(st.lists(st.sampled_from(tuple(before)), unique=True) if before else st.just([]))
    absent = data.draw(st.lists(st.integers(61, 70), max_size=1))
    added = sorted(data.draw(st.lists(st.integers(0, 80), unique=True, max_size=7)))
    edited = before.edited([*lost, *absent], added)
    if absent:
        assert edited is None
        return
    assert edited == tuple(sorted(set(before).difference(lost).union(added)))
    if not lost and not added:
        assert edited is before
