"""`contextdeck run` as a loop: ticks, turns typed by hand (`--turn`), the final output, lazy plans."""

import json
import shutil
from pathlib import Path

from contextdeck._cli import main

CHAPTERS = Path(__file__).resolve().parent.parent / "engine" / "chapters"
ACTIVITIES = """
def processPayment(call, tool, context):
    raise ValueError("Your card was declined.")

def reportFailure(call, tool, context):
    return None

ACTIVITIES = {"processPayment": processPayment, "reportFailure": reportFailure}
"""


def run(capsys, *argv):
    code = main(["run", *map(str, argv)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def failure_case(tmp_path):
    doc = shutil.copy(CHAPTERS / "012_handling_failure.json", tmp_path / "doc.json")
    acts = tmp_path / "acts.py"
    acts.write_text(ACTIVITIES)
    return doc, acts


def test_run_reports_the_tick_and_waits_for_the_next_turn(capsys, tmp_path) -> None:
    """Without a turn to continue with, the run reports tick 1 and says it waits for the model's turn."""
    doc, acts = failure_case(tmp_path)
    code, out, err = run(capsys, doc, "--activities", acts)
    assert code == 0
    assert "tick 1: 1 call(s) run" in err
    assert "call 0 (processPayment) failed: ValueError: Your card was declined. (written to its error branch)" in err
    assert "waiting for the model's next turn (give one with --turn FILE.json)" in err
    result = json.loads(out)
    assert result["solution"] is None  # the turn's calls became the plan of the next request
    plans = [m for m in result["context"] if m["type"] == "plan"]
    assert [c["_tool"] for c in plans[-1]["plan"]] == ["processPayment", "confirmOrder"]


def test_turns_typed_by_hand_run_to_the_final_output(capsys, tmp_path) -> None:
    """`--turn` gives the next turn; its output ends the loop and is printed."""
    doc, acts = failure_case(tmp_path)
    turn = tmp_path / "turn.json"
    turn.write_text(json.dumps({"calls": [{"_tool": "reportFailure", "error": "†state.error"}],
                                "output": {"status": "Failed"}}))
    code, out, err = run(capsys, doc, "--activities", acts, "--turn", turn)
    assert code == 0
    assert "tick 2: 1 call(s) run" in err
    assert 'final output: {"status":"Failed"}' in err
    assert "2 call(s) run in 2 tick(s)" in err
    assert json.loads(out)["solution"]["output"] == {"status": "Failed"}


def test_turns_left_after_the_final_output_are_named_not_dropped(capsys, tmp_path) -> None:
    """010: the final output ends the loop, so a `--turn` after it is never taken; the run says so for each such
    file, as a warning, rather than dropping the user's turn in silence."""
    doc, acts = failure_case(tmp_path)
    final, late = tmp_path / "final.json", tmp_path / "late.json"
    final.write_text(json.dumps({"calls": [], "output": {"status": "Failed"}}))
    late.write_text(json.dumps({"calls": [{"_tool": "reportFailure", "error": "late"}], "output": None}))
    code, out, err = run(capsys, doc, "--activities", acts, "--turn", final, "--turn", late)
    assert code == 0
    assert 'final output: {"status":"Failed"}' in err
    assert f"{late}: warning: turn not taken: the loop ended before it (final output)" in err
    assert f"{final}: warning: turn not taken" not in err
    assert all(c.get("error") != "late" for m in json.loads(out)["context"] if m["type"] == "plan" for c in m["plan"])


def test_turns_left_at_the_tick_limit_say_the_limit_stopped_the_run(capsys, tmp_path) -> None:
    """With a typed turn still to take, the run did not wait for one: `--max-ticks` stopped it, and it says so."""
    doc, acts = failure_case(tmp_path)
    again, late = tmp_path / "again.json", tmp_path / "late.json"
    again.write_text(json.dumps({"calls": [], "output": None}))
    late.write_text(json.dumps({"calls": [], "output": {"status": "Failed"}}))
    code, _out, err = run(capsys, doc, "--activities", acts, "--turn", again, "--turn", late, "--max-ticks", 2)
    assert code == 0
    assert "no final output after 2 tick(s) (--max-ticks)" in err
    assert "waiting for the model's next turn" not in err
    assert f"{late}: warning: turn not taken: the loop ended before it (no final output after 2 tick(s)" in err


def test_a_turn_that_breaks_the_request_schema_is_refused(capsys, tmp_path) -> None:
    """A turn whose output or calls break the composed request schema is refused before it is taken: exit 1,
    each problem with the turn's file and JSON path; what ran before is written, the turn appended nothing."""
    doc, acts = failure_case(tmp_path)
    turn = tmp_path / "turn.json"
    turn.write_text(json.dumps({"calls": [{"_tool": "processPayment", "amount": "fifty"}],
                                "output": {"status": "Done"}}))
    code, out, err = run(capsys, doc, "--activities", acts, "--turn", turn)
    assert code == 1
    assert "tick 1: 1 call(s) run" in err
    assert f"{turn}: turn refused: $.output.status: 'Done' is not one of ['Success', 'Failed']" in err
    assert f"{turn}: turn refused: $.calls[0].amount: 'fifty' is not of type 'number'" in err
    written = json.loads(out)
    plans = [m for m in written["context"] if m["type"] == "plan"]
    assert [c["_tool"] for c in plans[-1]["plan"]] == ["processPayment", "confirmOrder"]  # tick 1's, no other


def test_an_invalid_output_of_the_documents_own_solution_is_an_error_message(capsys, tmp_path) -> None:
    """The saved solution's own output breaks the schema: the tick ends with an output error message, and
    the loop waits for another turn (010's self-correction)."""
    doc, acts = failure_case(tmp_path)
    document = json.loads(Path(doc).read_text())
    document["solution"]["output"] = {"status": "Done"}
    Path(doc).write_text(json.dumps(document))
    code, out, err = run(capsys, doc, "--activities", acts)
    assert code == 0
    assert "tick 1: output refused: the output does not meet the request schema: $.status: 'Done' is not one of" in err
    assert "waiting for the model's next turn (give one with --turn FILE.json)" in err
    assert json.loads(out)["context"][-1]["data"]["error"]["type"] == "output"


def test_a_turn_that_is_not_a_solution_is_refused(capsys, tmp_path) -> None:
    """A malformed turn file stops the run before anything happens: exit 1, file and place named."""
    doc, _acts = failure_case(tmp_path)
    broken = tmp_path / "broken.json"
    broken.write_text('{"calls": [')
    code, out, err = run(capsys, doc, "--turn", broken)
    assert (code, out) == (1, "")
    assert "broken.json:1:12" in err
    wrong = tmp_path / "wrong.json"
    wrong.write_text('{"calls": 3}')
    code, out, err = run(capsys, doc, "--turn", wrong)
    assert (code, out) == (1, "")
    assert "wrong.json: the turn's 'calls' must be an array of calls" in err


def test_lazy_plan_waits_unless_approved(capsys, tmp_path) -> None:
    """A lazy plan runs nothing and says so; `--approve-plan` runs it."""
    doc = shutil.copy(CHAPTERS / "012_lazy_plan.json", tmp_path / "doc.json")
    code, out, err = run(capsys, doc)
    assert code == 0
    assert "the plan is lazy: 2 call(s) wait for approval (--approve-plan runs them)" in err
    before, after = json.loads(Path(doc).read_text()), json.loads(out)
    plan = {"type": "plan", "plan": before["solution"]["calls"], "mode": "lazy"}
    assert after["context"] == [*before["context"], plan]  # the plan to approve, and nothing ran
    _code, out, err = run(capsys, doc, "--approve-plan")
    assert "lazy" not in err
    assert "call 0 (detectLanguage) is latent and waits for an output" in err  # approved: it is scheduled


def test_a_delegated_call_is_run_and_reported(capsys, tmp_path) -> None:
    """A delegate next to the document is followed; without a turn for it, the call says what it waits for."""
    folder = CHAPTERS / "delegates"
    for name in ("015_scoping_a_delegate.json", "SummarizerAgent.json"):
        shutil.copy(folder / name, tmp_path / name)
    code, _out, err = run(capsys, tmp_path / "015_scoping_a_delegate.json")
    assert code == 0
    assert ("call 0 (summarizeArticle) waits for the output of its delegate 'SummarizerAgent', "
            "whose session is waiting for the next turn") in err


def test_a_delegate_session_says_what_failed_or_what_it_waits_for_inside(capsys, tmp_path) -> None:
    """A delegated call left waiting names its session's state: a failed call inside it, a lazy plan, an output
    that breaks the delegate's schema, each on a line of its own prefixed by the delegate's name."""
    (tmp_path / "acts.py").write_text("def boom(call, tool, context):\n    raise RuntimeError('boom')\n"
                                      "ACTIVITIES = {'boom': boom, 'val': lambda call, tool, context: 1}\n")
    delegates = {
        "Fail": {"context": [{"type": "plan", "plan": [{"_tool": "boom", "_outputPath": "†res.t"}]}]},
        "Lazy": {"context": [{"type": "plan", "mode": "lazy", "plan": [{"_tool": "val", "_outputPath": "†res.t"}]}]},
        "BadOut": {"context": [], "solution": {"calls": [], "output": 5}},
    }
    for name, delegate in delegates.items():
        (tmp_path / f"{name}.json").write_text(json.dumps({**delegate, "schema": {"type": "string"}}))
    calls = [{"_tool": name.lower(), "_delegate": name, "_outputPath": f"†r.{name}"} for name in delegates]
    (tmp_path / "doc.json").write_text(json.dumps({"context": [{"type": "plan", "plan": calls}]}))
    code, _out, err = run(capsys, tmp_path / "doc.json", "--activities", tmp_path / "acts.py", "--in-process")
    assert code == 0
    assert err.splitlines()[1:6] == [
        "contextdeck: call 0 (fail) waits for the output of its delegate 'Fail', whose session is waiting for the "
        "next turn",
        "contextdeck: Fail: call 0 (boom) failed: RuntimeError: boom",
        "contextdeck: call 1 (lazy) waits for the output of its delegate 'Lazy', whose session is waiting for plan "
        "approval",
        "contextdeck: call 2 (badout) waits for the output of its delegate 'BadOut', whose session is waiting for "
        "the next turn",
        "contextdeck: BadOut: output refused: the output does not meet the request schema: $: 5 is not of type "
        "'string'",
    ]


def test_validate_reports_a_final_output_that_breaks_the_request_schema(capsys, tmp_path) -> None:
    """`validate` checks the solution's output and a plan message's output, naming the message index."""
    doc, _acts = failure_case(tmp_path)
    document = json.loads(Path(doc).read_text())
    document["solution"]["output"] = {"status": "Done"}
    document["context"].append({"type": "plan", "plan": [], "output": {"status": "Nope"}})
    Path(doc).write_text(json.dumps(document))
    code = main(["validate", str(doc)])
    captured = capsys.readouterr()
    assert code == 1
    assert f"{doc}: solution.output.status: 'Done' is not one of ['Success', 'Failed']" in captured.out
    assert f"{doc}: message 4: output.status: 'Nope' is not one of ['Success', 'Failed']" in captured.out


def test_a_turn_calling_a_tool_the_request_does_not_offer_runs_with_a_warning(capsys, tmp_path) -> None:
    """SPEC 6.7: the call runs latent; the turn's file and the call's path are named in a warning."""
    doc, acts = failure_case(tmp_path)
    turn = tmp_path / "turn.json"
    turn.write_text(json.dumps([{"_tool": "sendFax", "_outputPath": "†state.fax", "_output": "sent"}]))
    code, out, err = run(capsys, doc, "--activities", acts, "--turn", turn)
    assert code == 0
    assert f"{turn}: warning: $.calls[0]._tool: the request offers no tool 'sendFax'" in err
    assert "tick 2: 1 call(s) run" in err
    assert json.loads(out)["context"][-1]["data"] == {"fax": "sent"}


def test_steps_wait_for_a_lazy_plan_unless_approved(capsys, tmp_path) -> None:
    """`--steps` on a lazy plan steps nothing and says so, as the loop does; with `--approve-plan` it steps."""
    doc = tmp_path / "doc.json"
    plan = {"type": "plan", "mode": "lazy", "plan": [{"_tool": "t", "_output": 1, "_outputPath": "†state.a"},
                                                     {"_tool": "t", "_output": 2, "_outputPath": "†state.b"}]}
    doc.write_text(json.dumps([plan]))
    code, out, err = run(capsys, doc, "--steps", 1)
    assert (code, json.loads(out)) == (0, [plan])
    assert "the plan is lazy: 2 call(s) wait for approval (--approve-plan runs them)" in err
    assert "stopped" not in err
    code, out, err = run(capsys, doc, "--steps", 1, "--approve-plan")
    assert code == 0
    assert [m.get("data") for m in json.loads(out)[1:]] == [{"a": 1}]


ADVISED = [{"type": "advisor", "id": "risk", "on": "request", "role": "r",
            "schema": {"type": "object", "properties": {"thought": {"type": "string"}}, "required": ["thought"]}},
           {"type": "text", "text": "go"}]


def test_a_turn_without_the_advice_runs_with_validates_warning_and_bad_votes_are_refused(capsys, tmp_path) -> None:
    """format.md §8: a person's turn may leave out `advisors` as it may `meta` (the engine runs without advice); the
    turn check says what validate says of the same solution, a warning, and refuses what validate calls an error."""
    doc = tmp_path / "doc.json"
    doc.write_text(json.dumps({"context": ADVISED}))
    turn = tmp_path / "turn.json"
    turn.write_text(json.dumps({"calls": [], "output": None}))
    code, _out, err = run(capsys, doc, "--turn", turn)
    assert code == 0
    assert f"{turn}: warning: $.advisors: advisor 'risk' gives no advice: it is consulted in this request" in err
    turn.write_text(json.dumps({"advisors": [{"id": "risk", "thought": "t", "calls": "{bad"}], "calls": [],
                                "output": None}))
    code, _out, err = run(capsys, doc, "--turn", turn)
    assert code == 1
    assert f"{turn}: turn refused: $.advisors[0].calls: votes must be inline JSON: a string holding an object" in err


def test_a_bare_document_run_to_its_final_output_stays_finished(capsys, tmp_path) -> None:
    """A bare array keeps the final output in its plan message; running the written document again says that
    output again, and appends nothing."""
    doc, turn, out = tmp_path / "req.json", tmp_path / "turn.json", tmp_path / "out.json"
    doc.write_text(json.dumps([{"type": "text", "role": "user", "text": "Say done."}]))
    turn.write_text(json.dumps({"calls": [], "output": "done"}))
    code, _, err = run(capsys, doc, "--turn", turn, "--out", out)
    assert (code, 'final output: "done"' in err) == (0, True)
    written = json.loads(out.read_text())
    assert written[-1] == {"type": "plan", "plan": [], "output": "done"}
    code, again, err = run(capsys, out)
    assert code == 0
    assert 'final output: "done"' in err
    assert "waiting" not in err
    assert json.loads(again) == written
