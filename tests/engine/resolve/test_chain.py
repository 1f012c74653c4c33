"""`Chain`, the persistent sequence of a fold's problems: appended to, spliced and edited in place.

Whole-kind folds repaired lane by lane (`_whole`) edit their problems as a lazy `Chain.edited`: the items
of one layer after a cut, less some, with others merged in by order key; an edit of an edit is one edit.
"""

from __future__ import annotations

import sys
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from contextdeck.engine.resolve._chain import EMPTY, Chain, unlinked


def chain_of(items: list[Any]) -> Chain:
    chain = EMPTY
    for item in items:
        chain = chain.plus(item)
    return chain


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_edits_of_a_chain_read_as_the_list_they_stand_for(data: st.DataObject) -> None:
    """Appends, edits (a new head, items of the layer lost and gained) and edits of edits: the items and
    the length always equal a plain list's."""
    head_items = [(key, "global") for key in data.draw(st.lists(st.integers(0, 5), unique=True, max_size=3))]
    head = chain_of(head_items)
    layer = sorted(data.draw(st.lists(st.integers(10, 60), unique=True, max_size=8)))
    chain = head
    for key in layer:
        chain = chain.plus((key, "local"))
    model = [*head_items, *((key, "local") for key in layer)]
    next_key = 100
    for _ in range(data.draw(st.integers(1, 12))):
        if data.draw(st.booleans()):  # a problem appended at the end of the layer
            chain = chain.plus((next_key, "appended"))
            model.append((next_key, "appended"))
            next_key += 1
            continue
        own = model[len(head_items) :]
        lost = data.draw(st.lists(st.sampled_from(own), unique=True)) if own else []
        taken = frozenset(key for key, _ in own)
        free = [key for key in range(10, 100) if key not in taken]
        gained_keys = data.draw(st.lists(st.sampled_from(free), unique=True, max_size=3))
        gained = tuple(sorted((key, "new") for key in gained_keys))
        new_head_items = [(key, "global") for key in data.draw(st.lists(st.integers(0, 5), unique=True, max_size=3))]
        new_head = head if data.draw(st.booleans()) else chain_of(new_head_items)
        kept = [item for item in own if item not in lost]
        chain = chain.edited(new_head, len(head_items), frozenset(lost), gained)
        head_items = list(new_head.items())
        head = new_head
        model = [*head_items, *sorted([*kept, *gained])]
        assert chain.items() == tuple(model)
        assert len(chain) == len(model)
    assert chain.items() == tuple(model)
    assert len(chain) == len(model)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_splices_of_splices_read_as_the_lists_they_stand_for(data: st.DataObject) -> None:
    """Splices (`joined`: a new prefix, then an old chain past the chain it grew from) nested deep and
    sharing their pasts, as tracks make them: read from the start or past a cut, every item is there once,
    in order, however the nodes are shared (a naive read visits shared parts 2**depth times)."""
    pool: list[tuple[Chain, list[Any], list[int]]] = [(EMPTY, [], [0])]  # chain, items, the chains it grew from
    counter = 0
    for _ in range(data.draw(st.integers(1, 80))):
        if data.draw(st.integers(0, 2)):
            number = data.draw(st.integers(0, len(pool) - 1))
            chain, items, grew = pool[number]
            counter += 1
            pool.append((chain.plus(counter), [*items, counter], [*grew, len(pool)]))
        else:
            head = data.draw(st.integers(0, len(pool) - 1))
            rest = data.draw(st.integers(0, len(pool) - 1))
            cut = data.draw(st.sampled_from(pool[rest][2]))
            chain = pool[head][0].joined(pool[rest][0], pool[cut][0])
            items = [*pool[head][1], *pool[rest][1][len(pool[cut][1]) :]]
            pool.append((chain, items, [*pool[head][2], len(pool)]))
        chain, items, _ = pool[-1]
        assert chain.items() == tuple(items)
        assert len(chain) == len(items)


def test_a_chain_unlinked_is_let_go_of_a_link_a_step_from_its_end() -> None:
    """`unlinked` lets go of a chain nothing else holds one link a step, the last first, so that a long chain is
    freed in steps, not all at once by its last holder."""
    chain = EMPTY.plus("a").plus("b").plus("c")
    middle = chain.before  # "b": held by "c" and here
    held = sys.getrefcount(middle)
    steps = unlinked(chain)
    del chain
    next(steps)  # "c" freed: "b" held by the walk instead
    assert sys.getrefcount(middle) == held
    next(steps)  # "b" let go of: held only here
    assert sys.getrefcount(middle) == held - 1
    assert len(list(steps)) == 1  # ("a")
