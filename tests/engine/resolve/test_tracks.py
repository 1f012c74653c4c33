"""An instance lane track over the global track (`_incremental/_tracks.py`)."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import pytest

from contextdeck.engine import Context, Insert, Move
from contextdeck.engine.resolve import _paranoid


def test_an_instance_track_over_a_global_fold_older_than_its_paths_is_folded_anew(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Watches opened and closed between edits can leave an instance track over a global fold made before the
    global track followed one of its paths: under the next change of the global fold the track is folded again
    (`_same_base` declines) instead of failing on the path, and every answer is still the reference fold's
    (paranoid mode checks each watch after each edit). Found by a stress run; its steps, as they were."""
    monkeypatch.setattr(_paranoid, "ENABLED", True)
    messages = [
        {"_instance": "2", "_outputMethod": "push", "_outputPath": "†s.b.a", "s": {"b": {"a": []}}, "type": "s"},
        {"_outputMethod": "push", "_outputPath": "†s.b.b.0", "s": {"b": {"b": {"0": {"a": [None, {}]}}}}, "type": "s"},
        {"_outputMethod": "set", "_outputPath": "†s.0.a", "s": {"0": {"a": "y"}}, "type": "s"},
        {"_instance": "1", "_outputMethod": "set", "_outputPath": "†s.b", "s": {"b": 1}, "type": "s"},
        {"_outputMethod": "concat", "_outputPath": "†t.b.1", "t": {"b": {"1": 2}}, "type": "t"},
        {"_instance": "2", "_outputMethod": "concat", "s": [[{}, "x"], {}], "type": "s"},
        {
            "_instance": "1",
            "_outputMethod": "assign",
            "_outputPath": "†s.1.1.0",
            "s": {"1": {"1": {"0": {"1": {"a": {"0": 2, "a": 1}, "b": [None]}}}}},
            "type": "s",
        },
        {"_outputMethod": "assign", "_outputPath": "†s.b", "s": {"b": [{}]}, "type": "s"},
        {"_instance": "2", "_outputMethod": "concat", "_outputPath": "†t.a", "t": {"a": []}, "type": "t"},
        {
            "_instance": "2",
            "_outputMethod": "concat",
            "_outputPath": "†s.0.1.b",
            "s": {"0": {"1": {"b": [{"0": "x", "a": {"0": {"1": 2}, "b": {}}}]}}},
            "type": "s",
        },
        {"_outputMethod": "set", "_outputPath": "†s.1.b.a", "s": {"1": {"b": {"a": {"1": []}}}}, "type": "s"},
        {"_outputMethod": "assign", "_outputPath": "†s.1", "s": {"1": None}, "type": "s"},
        {"_instance": "2", "_outputMethod": "concat", "_outputPath": "†s.b", "s": {"b": [[], "x"]}, "type": "s"},
        {"_instance": "2", "_outputMethod": "set", "_outputPath": "†s.b", "s": {"b": 1}, "type": "s"},
        {
            "_instance": "1",
            "_outputMethod": "concat",
            "_outputPath": "†s.0.1.a",
            "s": {"0": {"1": {"a": [1, []]}}},
            "type": "s",
        },
        {"_outputMethod": "set", "_outputPath": "†s.a", "s": {"a": 2}, "type": "s"},
        {"text": "hi", "type": "text"},
        {"s": {"1": {}}, "type": "s"},
        {"_instance": "1", "s": {"1": {}}, "type": "s"},
        {"_outputMethod": "merge", "_outputPath": "†s.0.1", "s": {"0": {"1": {}}}, "type": "s"},
        {"_outputMethod": "merge", "_outputPath": "†s.a", "s": {"a": True}, "type": "s"},
        {"_outputMethod": "concat", "_outputPath": "†s.1.b", "s": {"1": {"b": [None]}}, "type": "s"},
        {"_outputMethod": "merge", "_outputPath": "†t.a", "s": {"b": {"a": None}}, "type": "s"},
        {"s": {"0": {"1": True, "a": {"b": "x"}}, "b": None}, "type": "s"},
        {"_instance": "1", "_outputMethod": "assign", "s": 2, "type": "s"},
        {"_outputMethod": "push", "_outputPath": "†s.0.1", "s": {"0": {"1": {}}}, "type": "s"},
        {"_instance": "1", "_outputMethod": "set", "_outputPath": "†s.1", "s": {"1": "x"}, "type": "s"},
        {"_outputMethod": "assign", "_outputPath": "†s.1", "s": {"1": "y"}, "type": "s"},
        {"_outputMethod": "push", "_outputPath": "†t.0", "t": {"0": 1}, "type": "t"},
        {"_instance": "1", "_outputMethod": "push", "_outputPath": "†s.a.1", "s": {"a": {"1": [2]}}, "type": "s"},
        {"_outputMethod": "set", "_outputPath": "†s.1.0", "s": {"1": {"0": {"1": "x"}}}, "type": "s"},
    ]
    ctx = Context(messages)
    watches: list[Any] = []
    watches.append(ctx.watch("†s.1.0", lambda r: None, None))
    watches.append(ctx.watch("†t.a.a", lambda r: None, None))
    watches.append(ctx.watch("†s", lambda r: None, "2"))
    watches.append(ctx.watch("†t.0.b", lambda r: None, None))
    watches.pop(2).close()
    watches.append(ctx.watch("†s", lambda r: None, "1"))
    watches.append(ctx.watch("†s.b.1.1", lambda r: None, "1"))
    watches.append(ctx.watch("†t", lambda r: None, None))
    watches.append(ctx.watch("†s.a.b", lambda r: None, "2"))
    watches.append(ctx.watch("†s.1.0.0", lambda r: None, "2"))
    watches.pop(3).close()
    watches.append(ctx.watch("†t.1.0.a", lambda r: None, "2"))
    watches.append(ctx.watch("†s.1.b || †s.b", lambda r: None, "2"))
    watches.pop(8).close()
    ctx.apply(Insert(index=31, message={"type": "s", "_instance": "1", "s": {}, "_outputMethod": "set"}))
    ctx.apply(Insert(index=32, message={"type": "text", "text": "hi"}))
    watches.append(ctx.watch("†s.1.1", lambda r: None, None))
    ctx.apply(Insert(index=33, message={"type": "s", "s": 1, "_outputMethod": "merge"}))
    ctx.apply(
        Insert(
            index=20,
            message={
                "type": "s",
                "s": {"a": {"1": [{"1": ["x", True]}]}},
                "_outputPath": "†s.a.1",
                "_outputMethod": "concat",
            },
        )
    )
    ctx.apply(
        Insert(
            index=11,
            message={
                "type": "s",
                "_instance": "1",
                "s": {"b": {"0": []}},
                "_outputPath": "†s.b.0",
                "_outputMethod": "concat",
            },
        )
    )
    ctx.apply(
        Insert(
            index=2,
            message={
                "type": "s",
                "_instance": "2",
                "s": {"b": {"0": {"1": {}}}},
                "_outputPath": "†s.b.0.1",
                "_outputMethod": "push",
            },
        )
    )
    ctx.apply(Move(src=36, dst=4))
    assert len(ctx.messages) == 37
    for watch in watches:
        watch.close()


def test_checkpoints_spread_out_as_a_lane_grows() -> None:
    """A track keeps a checkpoint at every 16th write of its lane up to 1,024 writes, then a 32nd to a 64th of the
    count apart (each holds the value there, which the next write copies, and a repair patches each one past its
    edit: at a fixed step, a lane growing one object key by key would copy k²/16 keys); a whole kind's every 256th
    up to 16,384, then as far apart; lane marks as a track's checkpoints, but four times farther apart where the
    lane's value has 4,096 entries or more, or the value at the end of its chain of one-key objects has (a whole-kind
    repair patches each one past its edit at once, copying the value). So a million writes keep a few hundred."""
    from contextdeck.engine.resolve._incremental._index import checkpoint_at
    from contextdeck.engine.resolve._incremental._tracks import lane_mark

    lane, whole = ([n for n in range(1, 1 << 20) if checkpoint_at(n, kind)] for kind in (False, True))
    assert lane[:64] == list(range(16, 1025, 16))
    assert whole[:64] == list(range(256, 16385, 256))
    for counts, start in ((lane, 1024), (whole, 16384)):
        apart = [(count, count - before) for before, count in pairwise(counts) if before >= start]
        assert all(count / 64 <= gap <= count / 32 for count, gap in apart)
    assert (len(lane), len(whole)) == (383, 255)
    small, big = dict.fromkeys(range(4095)), dict.fromkeys(range(4096))
    values = (small, big, [0] * 4096, {"r1": {"steps": big}}, [{"steps": big}], {"r1": {"steps": small}, "r2": 0})
    marked = [[n for n in range(4096, 8192) if lane_mark(n, 1, value)] for value in values]
    assert [len(counts) for counts in marked] == [32, 8, 8, 8, 8, 32]  # (a chain of one-key objects: its end's size)
