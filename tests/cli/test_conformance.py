"""Documents written from the chapters' text, each at a corner a conformance pass found the command line wrong
at (`conformance/`): what `validate` and `run` say of it, and that running a run's own output appends nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from contextdeck._cli import main

HERE = Path(__file__).resolve().parent / "conformance"
NOW = "2026-03-01T10:00:00Z"


def command(capsys: Any, *argv: Any) -> tuple[int, str, str]:
    code = main([str(arg) for arg in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def copied(tmp_path: Path, name: str) -> Path:
    return Path(shutil.copy(HERE / name, tmp_path / name))


def run_twice(capsys: Any, doc: Path, *options: Any) -> tuple[list[Any], str]:
    """The run's document and what it said; running that document again appends nothing (format.md §9)."""
    once, again = doc.with_suffix(".once.json"), doc.with_suffix(".again.json")
    code, _, err = command(capsys, "run", doc, "--now", NOW, "--out", once, *options)
    assert code == 0, err
    command(capsys, "run", once, "--now", NOW, "--out", again, *options)
    ran = json.loads(once.read_text())
    assert json.loads(again.read_text()) == ran
    return ran, err


def assert_waits_unchanged(capsys: Any, doc: Path, waiting: str) -> None:
    """`run` of `doc`, with `--steps` and without, gives the document back unchanged and says `waiting`."""
    before = json.loads(doc.read_text())
    for steps in ((), ("--steps", 1)):
        code, out, err = command(capsys, "run", doc, *steps)
        assert (code, json.loads(out)) == (0, before)
        assert waiting in err


def test_a_lazy_plan_changes_nothing_until_approved(capsys: Any, tmp_path: Path) -> None:
    """012: an unapproved lazy plan runs and appends nothing, `--steps` included; approved, its refused call's
    error is appended by its first tick."""
    doc = copied(tmp_path, "lazy_plan_refused_call.json")
    assert_waits_unchanged(capsys, doc, "the plan is lazy: 2 call(s) wait for approval")
    ran, _ = run_twice(capsys, doc, "--approve-plan")
    assert [m["type"] for m in ran[1:]] == ["data", "error"]


def test_plan_entries_that_are_no_calls_fail_once(capsys: Any, tmp_path: Path) -> None:
    """A plan entry that is no call is an error message once; the run of the output does not refuse it again."""
    ran, err = run_twice(capsys, copied(tmp_path, "entries_that_are_no_calls.json"))
    assert [m["type"] for m in ran[1:]] == ["data", *["error"] * 5]
    assert "call 3 (?) failed: call: a call must be an object with a non-empty string _tool" in err
    # validate's words for a group whose members are no list (format.md §6)
    assert "call 4 (?) failed: call: a pattern group's 'all' must be an array of calls, not \"x\"" in err


def test_a_dagger_string_in_a_meta_property_is_text(capsys: Any, tmp_path: Path) -> None:
    """SPEC 3, 6.8: validate judges what the run reads; `†` in `_reasoningForCall`, `_instance` or a caller's own
    key is text, and every call runs."""
    doc = copied(tmp_path, "dagger_in_meta_properties.json")
    code, _, err = command(capsys, "validate", doc)
    assert (code, err) == (0, "")
    ran, _ = run_twice(capsys, doc)
    assert [m.get("_outputPath") for m in ran[2:]] == ["†state.a", "†state.b", "†state.c"]


def test_a_group_member_held_back_by_its_group_is_said(capsys: Any, tmp_path: Path) -> None:
    """SPEC 6.8, 6.10: the ready member of an `any` group whose other member is blocked is said to wait for it."""
    _, err = run_twice(capsys, copied(tmp_path, "group_held_back.json"))
    assert "call 0 (quote) is blocked, waiting for †state.never" in err
    assert "call 1 (quote) is ready, but its group starts together: it waits for call 0" in err


def test_a_tool_schema_no_validator_can_use_is_said_before_any_call(capsys: Any, tmp_path: Path) -> None:
    """002: an unusable tool schema is a problem of its message, though no plan calls the tool yet."""
    code, out, _ = command(capsys, "validate", copied(tmp_path, "unusable_tool_schema.json"))
    assert code == 1
    assert "message 0: tool: tool 'score': its schema cannot be used: invalid schema at #/properties/n/type" in out


def test_a_result_at_an_array_index_lands_in_the_element(capsys: Any, tmp_path: Path) -> None:
    """SPEC 4.4 (format.md §4.3): the output is wrapped in objects along its path; the fold writes element 1."""
    doc = copied(tmp_path, "result_at_array_index.json")
    ran, _ = run_twice(capsys, doc)
    assert ran[-1]["data"] == {"list": {"1": {"name": "Bo"}}}
    code, out, _ = command(capsys, "resolve", doc.with_suffix(".once.json"), "†state.list")
    assert (code, json.loads(out)) == (0, [{"name": "Al"}, {"name": "Bo"}])


def test_a_lazy_plan_counts_only_the_calls_that_have_not_run(capsys: Any, tmp_path: Path) -> None:
    """012: a lazy plan approved and run in part waits for approval again (the document does not record it), but
    only its calls without a record wait; with `--steps` alike. Once every call ran, nothing waits: `--steps` says
    what it says of any plan that ran."""
    doc = copied(tmp_path, "lazy_plan_partly_run.json")
    assert_waits_unchanged(capsys, doc, "the plan is lazy: 1 call(s) wait for approval (--approve-plan runs them)")
    ran, _ = run_twice(capsys, doc, "--approve-plan")
    assert ran[-1]["data"] == {"d": 3}
    code, out, err = command(capsys, "run", doc.with_suffix(".once.json"), "--steps", 1)
    assert (code, json.loads(out), err) == (0, ran, "contextdeck: 0 call(s) run\n")


def test_a_tool_rules_every_meta_property_it_declares(capsys: Any, tmp_path: Path) -> None:
    """SPEC 6.2 (format.md §2): a tool's `properties._outputMethod` const prescribes the method of a call that gives
    none, as `_outputPath`'s does its path; a call breaking any meta-property the tool declares is refused before it
    runs, by validate and run as by the turn check."""
    doc = copied(tmp_path, "meta_property_rules.json")
    code, out, _ = command(capsys, "validate", doc)
    assert code == 1
    assert f"{doc}: message 2: call 2 (log): outputMethod: the tool prescribes _outputMethod 'push', not 'set'" in out
    assert (f"{doc}: message 2: call 3 (log): call: _reasoningForCall 'far longer than twelve' is not allowed by the "
            "tool: 'far longer than twelve' is too long") in out
    ran, err = run_twice(capsys, doc)
    assert [m["type"] for m in ran[3:]] == ["data", "data", "error", "error"]
    assert ran[3]["_outputMethod"] == "push"
    code, out, _ = command(capsys, "resolve", doc.with_suffix(".once.json"), "†state.log")
    assert (code, json.loads(out)) == (0, ["a", "b"])
    turn = tmp_path / "turn.json"
    plan = json.loads(doc.read_text())[2]["plan"]
    turn.write_text(json.dumps({"calls": plan[2:], "output": None}))
    code, _, err = command(capsys, "run", doc, "--turn", turn)
    assert code == 1
    assert "turn refused: $.calls[0]._outputMethod: 'push' was expected" in err
    assert "turn refused: $.calls[1]._reasoningForCall: 'far longer than twelve' is too long" in err
