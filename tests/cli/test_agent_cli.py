"""`contextdeck run DOC --llm URL --model M`: the model gives each next turn until a valid final output."""

import json

from contextdeck._cli import main
from fake_llm import Reply

NOW = "2026-03-01T10:00:00Z"
ADD = {"type": "object", "description": "Adds a and b.",
       "properties": {"a": {"type": "number"}, "b": {"type": "number"}, "_output": {"type": "number"}},
       "required": ["a", "b"]}
ACTIVITIES = """
def add(call, tool, context):
    return call["a"] + call["b"]

ACTIVITIES = {"add": add}
"""
FIRST = {"meta": {}, "calls": [{"_tool": "add", "a": "†input.a", "b": "†input.b", "_outputPath": "†state.sum"}],
         "output": None}
LAST = {"meta": {}, "calls": [], "output": {"total": 5}}


def agent(tmp_path, **extra):
    doc = {"schema": {"type": "object", "properties": {"total": {"type": "number"}}, "required": ["total"]},
           "context": [{"type": "text", "role": "system", "text": "Add the numbers with the tool, then answer."},
                       {"type": "input", "input": {"a": 2, "b": 3}},
                       {"type": "tool", "tool": {"add": ADD}}], **extra}
    path = tmp_path / "agent.json"
    path.write_text(json.dumps(doc))
    acts = tmp_path / "acts.py"
    acts.write_text(ACTIVITIES)
    return path, acts


def run(capsys, fake_llm, doc, acts, *argv):
    code = main(["run", str(doc), "--activities", str(acts), "--llm", fake_llm.url, "--model", "fake-small",
                 "--now", NOW, "--llm-retries", "0", *map(str, argv)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_model_drives_the_loop_to_a_valid_final_output(capsys, tmp_path, fake_llm) -> None:
    """Two turns with one activity call: the second request sees the activity's result, the run exits 0,
    the document keeps the final solution and each turn's exchange, and stderr gives the tally."""
    fake_llm.push(Reply.json(FIRST), Reply.json(LAST))
    doc, acts = agent(tmp_path)
    code, out, err = run(capsys, fake_llm, doc, acts)
    assert code == 0, err
    result = json.loads(out)
    assert result["solution"]["output"] == {"total": 5}
    assert result["solution"]["_model"]["usage"]["total_tokens"] == 18
    outputs = [m for m in result["context"] if m.get("_outputPath") == "†state.sum"]
    assert [m["data"] for m in outputs] == [{"sum": 5}]
    plan = next(m for m in result["context"] if m["type"] == "plan")
    assert plan["plan"] == FIRST["calls"]
    assert plan["_model"]["replayed"] is False
    assert len(fake_llm.completions) == 2
    second = [message["content"] for message in fake_llm.completions[1]["messages"]]
    assert '## Data: ¶state\n{\n  "sum": 5\n}' in second  # asked with the activity's result
    assert "tick 1: 1 call(s) run" in err
    assert 'final output: {"total":5}' in err
    assert "1 call(s) run in 2 tick(s)" in err
    assert "the model: 2 request(s) asked, 0 replayed, 36 tokens" in err


def test_a_second_run_replays_every_turn(capsys, tmp_path, fake_llm) -> None:
    """Record then --replay: the same document, no request sent, each turn marked replayed."""
    fake_llm.push(Reply.json(FIRST), Reply.json(LAST))
    doc, acts = agent(tmp_path)
    _, first, _ = run(capsys, fake_llm, doc, acts)
    code, second, err = run(capsys, fake_llm, doc, acts, "--replay")
    assert code == 0, err
    assert len(fake_llm.completions) == 2
    assert "the model: 0 request(s) asked, 2 replayed" in err
    replayed = json.loads(second)
    assert replayed["solution"]["_model"]["replayed"] is True
    assert replayed["solution"]["output"] == json.loads(first)["solution"]["output"]


def test_turns_wait_stops_after_the_first_turn(capsys, tmp_path, fake_llm) -> None:
    """--turns wait runs the document's own turn and stops waiting for the next: nothing is asked, exit 0."""
    doc, acts = agent(tmp_path, solution=FIRST)
    code, out, err = run(capsys, fake_llm, doc, acts, "--turns", "wait")
    assert code == 0, err
    assert fake_llm.completions == []
    assert "tick 1: 1 call(s) run" in err
    assert "waiting for the model's next turn" in err
    assert json.loads(out)["solution"] is None


def test_out_of_ticks_is_exit_6(capsys, tmp_path, fake_llm) -> None:
    """A model that never gives an output stops at --max-ticks: exit 6, what ran is written."""
    fake_llm.push(Reply.json(FIRST))
    doc, acts = agent(tmp_path)
    code, out, err = run(capsys, fake_llm, doc, acts, "--max-ticks", "1")
    assert code == 6, err
    assert "no final output after 1 tick(s)" in err
    assert json.loads(out)["context"][-1]["data"] == {"sum": 5}


def test_a_refused_turn_is_exit_5_with_the_reply(capsys, tmp_path, fake_llm) -> None:
    """The model's turn breaks the composed schema: exit 5, the reason and the raw reply, nothing of it taken."""
    fake_llm.push(Reply.json({"meta": {}, "calls": [], "output": {"total": "five"}}))
    doc, acts = agent(tmp_path)
    code, out, err = run(capsys, fake_llm, doc, acts)
    assert code == 5
    assert "the model's turn was refused: the request: " in err
    assert "'five' is not of type 'number'" in err
    assert 'the model\'s reply was: {"meta": {}, "calls": [], "output": {"total": "five"}}' in err
    assert json.loads(out) == json.loads(doc.read_text())


def test_a_refused_turn_says_the_field_that_broke_the_schema(capsys, tmp_path, fake_llm) -> None:
    """A call that breaks its tool's schema is said at its field, as for a turn typed by hand (`--turn`), not as
    jsonschema's "is not valid under any of the given schemas" about the whole call."""
    wrong = {**FIRST, "calls": [{**FIRST["calls"][0], "a": {"value": "†input.a"}}]}
    fake_llm.push(Reply.json(wrong))
    doc, acts = agent(tmp_path)
    code, _, err = run(capsys, fake_llm, doc, acts)
    assert code == 5
    assert "the answer does not match the schema: $.calls[0].a: {'value': '†input.a'} is not of type 'number'" in err


def test_an_endpoint_failure_is_exit_4_and_keeps_what_ran(capsys, tmp_path, fake_llm) -> None:
    """The endpoint fails on the second turn: exit 4, the first turn and its call's output are written."""
    fake_llm.push(Reply.json(FIRST), Reply.error(503, "overloaded"))
    doc, acts = agent(tmp_path)
    code, out, err = run(capsys, fake_llm, doc, acts)
    assert code == 4
    assert "the model failed: the request: " in err
    assert "HTTP 503" in err
    assert json.loads(out)["context"][-1]["data"] == {"sum": 5}


def test_a_bare_document_the_model_finished_is_not_asked_again(capsys, tmp_path, fake_llm) -> None:
    """JSON Lines keeps the model's final output in its plan message: a second `run --llm` says it and pays
    for no request, and the document gains no second output."""
    fake_llm.push(Reply.json(FIRST), Reply.json(LAST), Reply.json({"meta": {}, "calls": [], "output": {"total": 6}}))
    doc, acts = agent(tmp_path)
    bare = tmp_path / "agent.jsonl"
    bare.write_text("".join(json.dumps(message) + "\n" for message in json.loads(doc.read_text())["context"]))
    code, first, err = run(capsys, fake_llm, bare, acts)
    assert (code, len(fake_llm.completions)) == (0, 2), err
    again = tmp_path / "again.jsonl"
    again.write_text(first)
    code, second, err = run(capsys, fake_llm, again, acts)
    assert code == 0, err
    assert 'final output: {"total":5}' in err
    assert "the model: 0 request(s) asked" in err
    assert len(fake_llm.completions) == 2
    assert second == first
