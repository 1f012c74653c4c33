"""Watches are called back exactly when found, value or sources change, and stay current otherwise."""

from __future__ import annotations

import pytest

from contextdeck.engine import Context, ExpressionError, Resolution


def _state(data: object, **extra: object) -> dict[str, object]:
    return {"type": "state", "data": data, **extra}


def test_callback_on_value_change_only() -> None:
    """A write to the watched path calls back; a write elsewhere does not."""
    ctx = Context([_state({"a": 1})])
    calls: list[Resolution] = []
    handle = ctx.watch("†state.a", calls.append)
    ctx.append(_state({"b": 2}))
    assert calls == []
    ctx.append(_state({"a": 3}))
    assert [r.value for r in calls] == [3]
    assert handle.current.value == 3


def test_a_renumbering_alone_calls_back_no_watch() -> None:
    """Inserting, removing or moving a text message before the sources only renumbers them: the same
    messages, so no watch is called back, and `current` names their new indices (as a fresh resolve)."""
    ctx = Context([{"type": "text"}, _state({"a": 1}), _state({"b": "x"}), _state({"b": [2]}, _outputMethod="push")])
    calls: list[Resolution] = []
    plain = ctx.watch("†state.a", calls.append)
    conflicted = ctx.watch("†state.b", calls.append)  # its diagnostic names a message index too
    delivered = plain.current
    ctx.insert(1, {"type": "text", "text": "hi"})
    assert calls == []
    assert plain.current.sources == (2,) == ctx.resolve("†state.a").sources
    assert conflicted.current == ctx.resolve("†state.b")
    assert [d.message_index for d in conflicted.current.diagnostics] == [4]
    ctx.move(0, 4)
    ctx.remove(0)
    assert calls == []
    assert plain.current.sources == (0,) == ctx.resolve("†state.a").sources
    assert conflicted.current == ctx.resolve("†state.b")
    assert delivered.sources == (1,)  # a resolution handed out earlier stays what it was


def test_an_insert_that_changes_the_sources_calls_back_once() -> None:
    """An insert in the middle that adds a message the watch reads calls it back exactly once, with the
    new sources; a watch of another path in the same lane is not called back."""
    ctx = Context([_state({"a": {"x": 1}}), {"type": "text"}, _state({"a": {"y": 2}})])
    calls: list[Resolution] = []
    ctx.watch("†state.a", calls.append)
    ctx.watch("†state.a.y", lambda _: calls.append(Resolution("other", False)))
    ctx.insert(1, _state({"a": {"z": 3}}))
    assert [(r.value, r.sources) for r in calls] == [({"x": 1, "z": 3, "y": 2}, (0, 1, 3))]


def test_a_moved_source_calls_back() -> None:
    """A source message moved to another place (with the same value) is a change of the source messages'
    place in the fold: called back once, with its new index."""
    ctx = Context([_state({"a": 1}), {"type": "text"}, _state({"b": 1})])
    calls: list[Resolution] = []
    ctx.watch("†state.a", calls.append)
    ctx.move(0, 1)
    assert [r.sources for r in calls] == [(1,)]


def test_edit_after_the_sources_is_silent() -> None:
    """Inserting after every source of a watch changes nothing it names, so it is not called."""
    ctx = Context([_state({"a": 1}), {"type": "text", "text": "x"}])
    calls: list[Resolution] = []
    ctx.watch("†state.a", calls.append)
    ctx.insert(1, {"type": "text", "text": "y"})
    ctx.move(2, 1)
    assert calls == []


def test_close_stops_callbacks() -> None:
    """After `close` the callback is not called again."""
    ctx = Context([])
    calls: list[Resolution] = []
    handle = ctx.watch("†state.a", calls.append)
    handle.close()
    handle.close()
    ctx.append(_state({"a": 1}))
    assert calls == []


def test_a_watch_naming_a_path_twice_lets_go_of_its_folds() -> None:
    """Closing a watch releases what it read as it was added, a path it names twice too: no track is left, and
    the edits after it refold nothing."""
    ctx = Context([_state({"a": 1})])
    handle = ctx.watch("†state.a || †state.a", lambda _: None, instance="1")
    handle.close()
    assert not ctx._watchers._tracks
    ctx.append(_state({"a": 2}))
    assert ctx.resolve("†state.a", "1").value == 2


def test_watches_of_one_path_all_hear() -> None:
    """Several watches of the same path (they share one fold) are each called back, in creation order."""
    ctx = Context([])
    order: list[str] = []
    ctx.watch("†state.a", lambda _: order.append("first"))
    second = ctx.watch("†state.a.b || †state.a", lambda _: order.append("second"))
    ctx.watch("†state.a", lambda _: order.append("third"))
    second.close()
    ctx.append(_state({"a": 1}))
    assert order == ["first", "third"]


def test_watches_of_one_expression_in_one_view_share_its_evaluation() -> None:
    """Watches of the same expression in the same view are evaluated once after an edit and handed the very
    same (frozen) resolution, each called back in creation order; a watch of another view has its own."""
    ctx = Context([_state({"a": 1})])
    calls: list[tuple[str, Resolution]] = []
    first = ctx.watch("†state", lambda r: calls.append(("first", r)))
    other = ctx.watch("†state", lambda r: calls.append(("other", r)), instance="1")
    second = ctx.watch("†state", lambda r: calls.append(("second", r)))
    ctx.append(_state({"b": 2}))
    assert [name for name, _ in calls] == ["first", "other", "second"]
    assert calls[0][1] is calls[2][1] is first.current is second.current
    assert calls[1][1] is other.current is not first.current
    assert first.current == ctx.resolve("†state")
    assert other.current == ctx.resolve("†state", "1")


def test_instance_layer_wins_whatever_the_order() -> None:
    """A global write appended after an instance write changes nothing for that instance: no callback."""
    ctx = Context([_state({"a": "mine"}, _instance="①")])
    calls: list[Resolution] = []
    handle = ctx.watch("†state.a", calls.append, instance="①")
    ctx.append(_state({"a": "global"}))
    assert (handle.current.value, handle.current.sources) == ("mine", (0,))
    assert calls == []


def test_diagnostics_stay_current_without_callback() -> None:
    """A broken output adds a diagnostic to `current` but is not a change of the result."""
    ctx = Context([_state({"a": 1})])
    calls: list[Resolution] = []
    handle = ctx.watch("†state.a", calls.append)
    ctx.append(_state({"a": 2}, _outputMethod="bogus"))
    assert calls == []
    assert [d.message_index for d in handle.current.diagnostics] == [1]


def test_whole_kind_watch() -> None:
    """A watch of `†kind` follows every write of that kind, moves included."""
    ctx = Context([_state({"a": 1}), _state({"b": 2})])
    handle = ctx.watch("†state", lambda _: None)
    ctx.move(1, 0)
    ctx.remove(1)
    assert (handle.current.value, handle.current.sources) == ({"b": 2}, (0,))


def _whole_repairs(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The list of what each whole-kind repair returns from now on (None: it fell back to the usual repair)."""
    from contextdeck.engine.resolve._incremental import _whole

    repaired: list[object] = []
    repair = _whole.repair

    def spy(*args: object) -> object:
        repaired.append(result := repair(*args))  # type: ignore[arg-type]
        return result

    monkeypatch.setattr("contextdeck.engine.resolve._incremental._watches._whole.repair", spy)
    return repaired


def test_whole_kind_watch_is_repaired_lane_by_lane(monkeypatch: pytest.MonkeyPatch) -> None:
    """After an edit in the middle, a whole-kind watch refolds only the lane the edit writes (`_whole`), not
    the rest of its kind: a push inserted early onto an array that later writes act on, and the bad write
    replaced that made a thousand later pushes conflicts. The result is the fold's, conflicts included."""
    messages = [_state({"log": "not an array"}, _outputPath="†state.log")]
    for n in range(1000):
        lane = ("log", "tags", f"k{n % 7}")[n % 3]
        method = "merge" if lane.startswith("k") else "push"
        messages.append(_state({lane: {"n": n}}, _outputPath=f"†state.{lane}", _outputMethod=method))
    ctx = Context(messages)
    handle = ctx.watch("†state", lambda _: None)
    repaired = _whole_repairs(monkeypatch)
    ctx.insert(5, _state({"tags": {"n": -1}}, _outputPath="†state.tags", _outputMethod="push"))
    ctx.replace(0, _state({"log": []}, _outputPath="†state.log"))
    assert len(repaired) == 2
    assert None not in repaired
    fresh = Context(ctx.messages).resolve("†state")
    assert handle.current == fresh
    assert handle.current.value["tags"][:2] == [{"n": 1}, {"n": -1}]
    assert len(handle.current.value["log"]) == 334
    assert not handle.current.diagnostics


def _counted_steps(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A one-item list counting the writes folded from now on, by tracks and by whole-kind repairs."""
    from contextdeck.engine.resolve._incremental import _index, _whole

    steps = [0]
    whole_step, lane_step = _whole._step, _index.State.step

    def counted_whole(*args: object) -> object:
        steps[0] += 1
        return whole_step(*args)  # type: ignore[arg-type]

    def counted_lane(self: _index.State, *args: object, **named: object) -> None:
        steps[0] += 1
        lane_step(self, *args, **named)  # type: ignore[arg-type]

    monkeypatch.setattr(_whole, "_step", counted_whole)
    monkeypatch.setattr(_index.State, "step", counted_lane)
    return steps


def test_an_edit_that_moves_where_a_lane_is_first_written_is_repaired_lane_by_lane(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The root's keys are in the order its lanes were first written (the global fold's first, under an
    instance layer). Moving the first write of lane `b` past the first write of `c` puts `b` after `c`: the
    whole-kind folds, global and instance, are still repaired lane by lane (`_whole`), the root's keys put
    in their new order, not folded again from their last checkpoint; every result is the fold's, key order
    included, and so after moving it back."""
    import json

    from contextdeck.engine import Move

    messages = [_state({"a": 0}), _state({"b": 0}), _state({"c": 0})]
    messages += [_state({"abcd"[n % 4]: n}, **({"_instance": "1"} if n % 4 == 3 else {})) for n in range(200)]
    ctx = Context(messages)
    handles = [ctx.watch("†state", lambda _: None), ctx.watch("†state", lambda _: None, instance="1")]
    repaired = _whole_repairs(monkeypatch)
    for move, keys in ((Move(1, 100), "acb"), (Move(100, 1), "abc")):
        ctx.apply(move)
        fresh = Context(ctx.messages)
        for handle, instance in zip(handles, (None, "1"), strict=True):
            assert handle.current == fresh.resolve("†state", instance)
            assert json.dumps(handle.current.value) == json.dumps(fresh.resolve("†state", instance).value)
        assert list(handles[0].current.value) == list(keys)
        assert list(handles[1].current.value) == [*keys, "d"]
    assert repaired
    assert None not in repaired


def test_a_global_push_under_instance_writes_of_keys_and_first_elements_is_spliced(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An instance layer pushes onto an array, writes a key under it (a conflict whatever the array holds:
    its problem names no length) and writes into its first element. A global push inserted before it
    changes the array only past the global fold's elements, which none of those writes acts on, so the
    instance folds (a lane and a whole kind) are spliced with the array's end substituted, not folded
    again write by write; the results are the fold's, every conflict included."""
    messages = [_state({"log": [{"n": 0}]}, _outputPath="†state.log")]
    for n in range(300):
        shapes = (("log",), "push"), (("log", "status"), "set"), (("log", "0", "n"), "set")
        where, how = shapes[n % 3]
        data: object = n
        for segment in reversed(where):
            data = {segment: data}
        messages.append(_state(data, _outputPath="†state." + ".".join(where), _outputMethod=how, _instance="1"))
    ctx = Context(messages)
    handles = [ctx.watch(expr, lambda _: None, instance="1") for expr in ("†state", "†state.log", "†state.log.0.n")]
    steps = _counted_steps(monkeypatch)
    ctx.insert(1, _state({"log": {"n": -1}}, _outputPath="†state.log", _outputMethod="push"))
    assert steps[0] < 20  # the instance layer has 300 writes of the lane
    fresh = Context(ctx.messages)
    for handle in handles:
        assert handle.current == fresh.resolve(handle.expression, "1")
    assert handles[1].current.value[:3] == [{"n": 299}, {"n": -1}, 0]
    assert len(handles[0].current.diagnostics) == 100


def test_an_entry_added_to_or_taken_from_a_keyed_object_is_spliced(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each message adds an entry to one object (`{items: {kN: N}}`, results keyed by id). A message inserted
    in the middle adds a key, and taking one out removes its key, for the rest of the lane; the later writes
    add other keys and leave that one alone. So the folds of the lane (a whole kind, the lane, one entry) are
    spliced with the key put in (or taken out) at its place, not folded to the end of the lane write by write;
    every result is the fold's, key order included. A key taken out that a later write makes again comes back
    at the end of the object: that is folded."""
    import json

    messages = [_state({"items": {f"k{n}": n}}) for n in range(600)]
    messages.append(_state({"items": {"k10": "again"}}))
    ctx = Context(messages)
    handles = [ctx.watch(expr, lambda _: None) for expr in ("†state", "†state.items", "†state.items.k5")]
    fresh = Context(ctx.messages)
    for edit, most in ((lambda: ctx.insert(300, _state({"items": {"new": 1}})), 150),
                       (lambda: ctx.remove(200), 150), (lambda: ctx.remove(10), None)):
        steps = _counted_steps(monkeypatch)
        edit()
        if most is not None:
            assert steps[0] < most  # folded to the end of the lane: about 1,200
        fresh = Context(ctx.messages)
        for handle in handles:
            assert handle.current == fresh.resolve(handle.expression)
            assert json.dumps(handle.current.value) == json.dumps(fresh.resolve(handle.expression).value)
    keys = list(handles[1].current.value)
    assert keys.index("new") == 298
    assert "k200" not in keys
    assert keys[-1] == "k10"


def test_edits_in_a_long_lane_of_spread_out_marks_are_the_reference_folds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past 1,024 writes of a lane its checkpoints and lane marks spread out, and a repair folds from one to its
    edit writing in place (`_index.owned_in`). Random edits of such a lane (entries added by merges, sets and
    assigns, an array pushed onto, values replaced), with watches of the object, an entry, the array and the whole
    kind: after each, every answer is the reference fold's (paranoid mode checks each watch), and no value a watch
    showed before changes under it."""
    import copy
    import random

    from contextdeck.engine import Insert, Move, Remove, Replace
    from contextdeck.engine.resolve import _paranoid

    monkeypatch.setattr(_paranoid, "ENABLED", True)
    rng = random.Random(30)

    def entry(n: int) -> dict[str, object]:
        shapes = [
            _state({"items": {f"k{n % 700}": n}}),
            _state({"items": {f"k{n % 700}": {"n": n}}}, _outputPath=f"†state.items.k{n % 700}"),
            _state({"items": {f"k{n}": n, "k1": -n}}, _outputPath="†state.items", _outputMethod="assign"),
            _state({"items": {"log": n}}, _outputPath="†state.items.log", _outputMethod="push"),
        ]
        return shapes[rng.randrange(4)]

    ctx = Context([entry(n) for n in range(1300)])
    expressions = ("†state.items", "†state.items.k5", "†state.items.log", "†state")
    handles = [ctx.watch(expression, lambda _: None) for expression in expressions]
    for step in range(40):
        shown = [copy.deepcopy(handle.current.value) for handle in handles]
        values = [handle.current.value for handle in handles]
        at = rng.randrange(1100, 1290)
        ctx.apply([Insert(at, entry(5000 + step)), Remove(at), Replace(at, entry(6000 + step)),
                   Move(at, rng.randrange(1100, 1290))][step % 4])
        assert values == shown  # (the values shown before the edit, unchanged by it)
    fresh = Context(ctx.messages)
    for handle in handles:
        assert handle.current == fresh.resolve(handle.expression)


@pytest.mark.parametrize("below", [(), ("runs", "r1")])
def test_edits_of_a_long_to_do_list_marked_by_index_are_the_reference_folds(
    monkeypatch: pytest.MonkeyPatch, below: tuple[str, ...]
) -> None:
    """A to-do list: items pushed onto an array (a lane's, or a run's below it: `below`), earlier ones marked done by
    index (`†state.items.N.status`), past 1,024 writes (marks spread out; both sides of a whole-kind repair write in
    place, `_index.owned_in`). An item inserted or removed in the middle shifts every later one, so each later mark acts
    on another item on each side; a replace changes one item. After each random edit, every watch (the list, one item's
    status, the whole kind) is the reference fold's (paranoid mode checks each answer), and no value a watch showed
    before changes under it."""
    import copy
    import random

    from contextdeck.engine import Insert, Move, Remove, Replace
    from contextdeck.engine.resolve import _paranoid

    monkeypatch.setattr(_paranoid, "ENABLED", True)
    rng = random.Random(31)
    where = ".".join(("†state", *below, "items"))

    def item(n: int) -> dict[str, object]:
        def nested(value: object) -> dict[str, object]:
            for name in reversed((*below, "items")):
                value = {name: value}
            return value  # type: ignore[return-value]

        if n % 2 == 0 or n < 40:
            return _state(nested({"status": "new", "n": n}), _outputPath=where, _outputMethod="push")
        done = str(rng.randrange(n // 2))  # an item pushed before
        return _state(nested({done: {"status": "done"}}), _outputPath=f"{where}.{done}.status")

    ctx = Context([item(n) for n in range(1300)])
    expressions = (where, f"{where}.3.status", "†state")
    handles = [ctx.watch(expression, lambda _: None) for expression in expressions]
    for step in range(24):
        shown = [copy.deepcopy(handle.current.value) for handle in handles]
        values = [handle.current.value for handle in handles]
        at = rng.randrange(600, 1290)
        ctx.apply([Insert(at, item(2 * step)), Remove(at), Replace(at, item(2 * step + 1)),
                   Move(at, rng.randrange(600, 1290))][step % 4])
        assert values == shown  # (the values shown before the edit, unchanged by it)
    fresh = Context(ctx.messages)
    for handle in handles:
        assert handle.current == fresh.resolve(handle.expression)


def test_a_to_do_list_below_a_lane_is_not_walked_at_every_write_its_edits_fold(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An item inserted into a run's to-do list (`†state.runs.r1.items`, items marked done by index) shifts every later
    one, so a repair folds the rest of the run; finding where the two sides' lists part walks the items they share. A
    whole-kind repair asks after fewer writes while each ask finds the next mark acting where they part (`_whole`'s
    `wait`), and a lane's repair asks no more until the write that stopped it (`Seen.until`): a few dozen walks for the
    hundreds of writes folded, not one a write. Each walk starts where the lists parted at the last (`Seen.starts`):
    the items both sides marked done since are equal but not the same objects, each compared once, not at each walk."""
    from contextdeck.engine.resolve._incremental import _patches, _whole

    def item(n: int) -> dict[str, object]:
        if n % 2 == 0 or n < 40:
            pushed: dict[str, object] = {"runs": {"r1": {"items": {"status": "new", "n": n}}}}
            return _state(pushed, _outputPath="†state.runs.r1.items", _outputMethod="push")
        done = str(n * 7919 % (n // 2))
        marked = {"runs": {"r1": {"items": {done: {"status": "done"}}}}}
        return _state(marked, _outputPath=f"†state.runs.r1.items.{done}.status")

    walks, compared = [], []
    walk, identical = _patches.differences, _patches.identical
    for module in (_patches, _whole):
        monkeypatch.setattr(module, "differences", lambda *args: walks.append(args) or walk(*args))
    monkeypatch.setattr(_patches, "identical", lambda *args: compared.append(args) or identical(*args))
    # (before: 105 and 33 walks, each write or mark asking; 115 and 1,851 items compared, each walk from the first)
    for expression, most, items in (("†state", 60, 100), ("†state.runs", 24, 200)):
        ctx = Context([item(n) for n in range(1600)])
        handle = ctx.watch(expression, lambda _: None)
        walks.clear()
        compared.clear()
        ctx.insert(800, item(0))
        assert 0 < len(walks) < most, (expression, len(walks))  # (800 writes folded on both sides)
        assert len(compared) < items, (expression, len(compared))
        assert handle.current == Context(ctx.messages).resolve(expression)


def test_an_early_write_that_changes_the_order_of_an_objects_keys_is_spliced(monkeypatch: pytest.MonkeyPatch) -> None:
    """A write inserted early creates `k.a.y` before `k.a.x` was first written, so the keys of `k.a` are in
    another order for the rest of the lane; the 300 later writes write into `k.a` and keep that order. So
    the folds of the lane (a whole kind, the lane, the object) are spliced with the order put back, not
    folded to the end of the lane write by write; every result is the fold's, key order included."""
    import json

    messages = [_state({"k": {"b": 0}}), *(_state({"k": {"a": {"xy"[n % 2]: n}}}) for n in range(300))]
    ctx = Context(messages)
    handles = [ctx.watch(expr, lambda _: None) for expr in ("†state", "†state.k", "†state.k.a")]
    ctx.replace(300, messages[300])  # (lane marks and checkpoints as after any edit)
    steps = _counted_steps(monkeypatch)
    ctx.insert(1, _state({"k": {"a": {"y": -1}}}))
    assert steps[0] < 80  # folded to the end of the lane: about 900
    fresh = Context(ctx.messages)
    for handle in handles:
        assert handle.current == fresh.resolve(handle.expression)
        assert json.dumps(handle.current.value) == json.dumps(fresh.resolve(handle.expression).value)
    assert list(handles[2].current.value) == ["y", "x"]
    ctx.remove(1)  # and back: the order of before
    assert list(handles[2].current.value) == ["x", "y"]
    assert json.dumps(handles[0].current.value) == json.dumps(Context(ctx.messages).resolve("†state").value)


def test_a_lane_track_and_the_whole_kind_track_read_the_same_writes_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """After an edit a lane's track and its kind's whole-kind track ask how the same writes of the layer act on
    the same difference (`_patches.cover`, `keeps_start`): the layer keeps the answer while its lists stay as they
    are (`Layer.answers`), so each question reads the writes once; the results are the fold's."""
    from contextdeck.engine.resolve._incremental import _patches, _whole

    messages = [_state({"log": [{"n": 0}], "k": {"x": 0, "y": 0}})]
    for n in range(200):
        where, how = ((("log",), "push"), (("k", "y"), "set"), (("log", "status"), "set"))[n % 3]
        data: object = n
        for segment in reversed(where):
            data = {segment: data}
        for instance in ("1", "2"):
            path = "†state." + ".".join(where)
            messages.append(_state(data, _outputPath=path, _outputMethod=how, _instance=instance))
    ctx = Context(messages)
    watched = [(expr, instance) for expr in ("†state", "†state.log", "†state.k.x") for instance in ("1", "2")]
    handles = [ctx.watch(expr, lambda _: None, instance=instance) for expr, instance in watched]
    read: list[tuple[object, ...]] = []
    cover, first_writes = _patches.cover, _patches._first_writes

    def counted_cover(subset: list[int], position: int, *rest: object) -> object:
        read.append(("cover", id(subset), position, rest[1]))
        return cover(subset, position, *rest)  # type: ignore[arg-type]

    def counted_first_writes(subset: list[int], start: int, *rest: object) -> object:
        read.append(("keeps_start", id(subset), start))
        return first_writes(subset, start, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(_patches, "cover", counted_cover)
    monkeypatch.setattr(_whole, "cover", counted_cover)
    monkeypatch.setattr(_patches, "_first_writes", counted_first_writes)
    pushed = _state({"log": {"n": -1}}, _outputPath="†state.log", _outputMethod="push", _instance="1")
    for edit in (
        lambda: ctx.insert(3, _state({"k": {"x": {"a": 2}}}, _outputPath="†state.k.x", _instance="1")),
        lambda: ctx.insert(5, pushed),
    ):
        read.clear()
        edit()
        assert read
        assert len(read) == len(set(read))  # each question once, for the whole-kind track and the lane's
    fresh = Context(ctx.messages)
    for handle, (expr, instance) in zip(handles, watched, strict=True):
        assert handle.current == fresh.resolve(expr, instance)


def test_an_early_edit_before_a_lane_is_first_written_leaves_its_track_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """A global fold's root is missing until the kind's first write: a track scans every write from there
    until the root is an object (a gap, where any write of the kind can matter to its lane). That gap ends
    after the write that made the root an object, not at the lane's own first write: an edit of another
    lane before `c` is first written repairs the tracks of that lane only (removing the write that made
    the root an object repairs every lane), and every watch stays the fold's."""
    from contextdeck.engine.resolve._incremental import _watches

    messages = [_state({"a": 1}), *(_state({"b": {"n": n}}) for n in range(50)), _state({"c": 1})]
    ctx = Context(messages)
    handles = [ctx.watch(expr, lambda _: None) for expr in ("†state.c", "†state.b.n", "†state.a")]
    repaired: list[str | None] = []
    repair = _watches.repair

    def spy(store: object, work: object, old: object, kind: str, instance: object, lane: str | None,
            base: object, *rest: object) -> object:
        repaired.append(lane)
        return repair(store, work, old, kind, instance, lane, base, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(_watches, "repair", spy)
    ctx.insert(5, _state({"b": {"n": -1}}))
    assert repaired == ["b"]
    ctx.remove(0)  # the write that made the root an object: in every lane's gap
    assert sorted(repaired[1:]) == ["a", "b", "c"]
    fresh = Context(ctx.messages)
    for handle in handles:
        assert handle.current == fresh.resolve(handle.expression)


def test_a_write_moved_from_the_global_layer_to_an_instance_layer_leaves_its_sources() -> None:
    """A replace that moves a write from the global layer to an instance layer, where it now fails (a key
    under the array the global layer left): the instance's whole-kind watch drops it from its sources
    (found by the watch property: it was a source of both layers halfway through its two-step repair)."""
    ctx = Context([
        {"type": "s", "s": {"a": {"b": None}}, "_outputPath": "†s.a.b"},
        {"type": "s", "s": {"a": None}, "_outputPath": "†s.a"},
        {"type": "s", "s": {"a": None}, "_outputPath": "†s.a"},
    ])
    handle = ctx.watch("†s", lambda _: None, instance="1")
    ctx.remove(1)
    ctx.insert(0, {"type": "s", "s": {"a": None}, "_outputPath": "†s.a", "_outputMethod": "push"})
    ctx.replace(2, {"type": "s", "s": {"a": {"b": None}}, "_outputPath": "†s.a.b", "_instance": "1"})
    assert handle.current == Context(ctx.messages).resolve("†s", "1")
    assert handle.current.sources == (0,)


def test_a_write_moved_from_the_global_layer_to_an_instance_layer_is_repaired_in_two(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A replace that moves a write of a lane from the global layer to an instance layer changes both: the
    instance's lane track is repaired in two, its own layer's edit over the old global fold (from the
    checkpoint before it), then the global change (spliced: the instance writes leave `k.x` alone or set
    it), not folded again from the start of its layer up to the edit; and so back. Every result is the
    fold's."""
    messages = [_state({"k": {"x": n}}) for n in range(20)]
    messages += [_state({"k": {"y": n}}, _instance="1") for n in range(300)]
    messages += [_state({"k": {"x": 99}}), *(_state({"k": {"y": n}}, _instance="1") for n in range(20))]
    ctx = Context(messages)
    handles = [ctx.watch(expr, lambda _: None, instance="1") for expr in ("†state.k", "†state.k.x", "†state.k.y")]
    steps = _counted_steps(monkeypatch)
    for message in (_state({"k": {"x": -1}}, _instance="1"), messages[320]):
        ctx.replace(320, message)
        fresh = Context(ctx.messages)
        for handle in handles:
            assert handle.current == fresh.resolve(handle.expression, "1")
    assert steps[0] < 80  # folded from the start of the instance layer up to the edit: about 620
    assert handles[1].current.value == 99


def test_malformed_expression_is_refused() -> None:
    """Watching a malformed expression raises ExpressionError naming the position."""
    with pytest.raises(ExpressionError):
        Context([]).watch("†state..a", lambda _: None)


def test_resolve_during_an_edit_signal_folds_the_messages_as_they_are() -> None:
    """A slot connected to `inserted` resolves before the watches are brought up to date: it gets the
    fold of the messages as they are, not the watch's result from before the edit."""
    ctx = Context([_state({"a": 1})])
    ctx.watch("†state.a", lambda _: None)
    seen: list[object] = []
    ctx.inserted.connect(lambda index: seen.append(ctx.resolve("†state.a").value))
    ctx.insert(1, _state({"a": 2}))
    assert seen == [2]
    assert ctx.resolve("†state.a").value == 2


def test_a_one_write_repair_says_how_a_lane_probes_sources_changed(monkeypatch: pytest.MonkeyPatch) -> None:
    """After an insert or a remove in the middle of a lane, a repaired probe of its track says which sources
    it gained or lost, as order keys (`SourceEdit`), so that its result is its old keys edited; the watches
    still equal a fresh resolve."""
    ctx = Context([_state({"k": {"x": n}}) for n in range(40)] + [_state({"k": {"y": n}}) for n in range(40)])
    paths = ["†state.k", "†state.k.x", "†state.k.y"]
    handles = [ctx.watch(path, lambda _: None) for path in paths]
    told: list[tuple[tuple[str, ...], list[int], list[int]]] = []
    refolds = ctx._watchers.refolds

    def spied(*args: object, **kwargs: object) -> object:
        folds = refolds(*args, **kwargs)  # type: ignore[arg-type]
        told.extend((p.path, e.lost, e.gained) for fold in folds.values() for p in fold.state.probes for e in p.edits)
        return folds

    monkeypatch.setattr(ctx._watchers, "refolds", spied)
    key = ctx._store.order.key
    ctx.insert(20, _state({"k": {"x": 100}}))
    assert told == [(("k",), [], [key[ctx._store.order.ids[20]]])]
    told.clear()
    removed = key[ctx._store.order.ids[60]]
    ctx.remove(60)
    assert told == [(("k",), [removed], [])]
    for path, handle in zip(paths, handles, strict=True):
        assert handle.current == Context(ctx.messages).resolve(path)


def test_a_global_append_tells_an_instance_probe_the_key_it_gained(monkeypatch: pytest.MonkeyPatch) -> None:
    """A global write appended under an instance track grows the global part of its probes' sources: the
    repaired probe says which key it gained (`SourceEdit`), so that its result is its old keys plus one, not
    its sources compared with the old ones; the watches still equal a fresh resolve."""
    messages = [_state({"k": {"x": n}}) for n in range(30)]
    messages += [_state({"k": {"y": n}}, _instance="a") for n in range(30)]
    ctx = Context(messages)
    handles = [ctx.watch(path, lambda _: None, instance="a") for path in ("†state.k", "†state.k.y")]
    told: list[tuple[tuple[str, ...], list[int], list[int]]] = []
    refolds = ctx._watchers.refolds

    def spied(*args: object, **kwargs: object) -> object:
        folds = refolds(*args, **kwargs)  # type: ignore[arg-type]
        told.extend(
            (p.path, e.lost, e.gained)
            for track, fold in folds.items() if track.instance == "a"
            for p in fold.state.probes for e in p.edits
        )
        return folds

    monkeypatch.setattr(ctx._watchers, "refolds", spied)
    ctx.append(_state({"k": {"x": 100}}))
    assert told == [(("k",), [], [ctx._store.order.key[ctx._store.order.ids[-1]]])]
    for path, handle in zip(("†state.k", "†state.k.y"), handles, strict=True):
        assert handle.current == Context(ctx.messages).resolve(path, instance="a")


def test_a_lane_knows_where_its_appending_tail_starts_from_its_first_append() -> None:
    """A lane learns where its writes start to only append (`Layer.tails`) from its first write that appends, as
    the context is built: a track folded from scratch (a whole kind's, for every lane of its layer) and the repairs
    after an edit walk none of the lane's writes (a log of thousands of pushes after a `set`: at a million
    messages, a whole kind's build ended with such walks). A lane where nothing appends keeps nothing."""
    messages = [_state({"log": "not yet"}, _outputPath="†state.log"), _state({"k": 1}, _outputPath="†state.k")]
    messages += [_state({"log": n}, _outputPath="†state.log", _outputMethod="push") for n in range(300)]
    ctx = Context([{"type": "data", "kind": "state", "data": {"log": []}}, *messages])
    layer = ctx._store.layers[("state", None)]
    assert layer.tails == {"log": 2}
    assert layer.appends_from("k", ctx._store.writes) == len(layer.subset("k"))
