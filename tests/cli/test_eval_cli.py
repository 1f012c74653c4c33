"""`contextdeck eval`: the agent loop over a dataset, one result line per input, replayed when unchanged."""

import json
import re
from pathlib import Path

import pytest

from adder_agent import adder, write_agent
from contextdeck._cli import main
from fake_llm import Reply

NOW = "2026-03-01T10:00:00Z"
ACTIVITIES = """
import pathlib

def add(call, tool, context):
    with open(pathlib.Path(__file__).with_name("ran.log"), "a") as log:
        log.write(f"{call['a']}+{call['b']}\\n")
    return call["a"] + call["b"]

ACTIVITIES = {"add": add}
"""


def agent(tmp_path, system="Add the numbers with the tool, then answer."):
    (tmp_path / "acts.py").write_text(ACTIVITIES)
    return write_agent(tmp_path / "agent.json", system)


def dataset(tmp_path, lines):
    path = tmp_path / "data.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


CASES = [{"id": "small", "input": {"a": 2, "b": 3}, "expect": {"total": 5}},
         {"id": "negative", "input": {"a": -4, "b": 1}, "expect": {"total": -3},
          "trajectory": {"tools": ["add"], "turns": 2}},
         {"a": 10, "b": 20}]


def evaluate(capsys, fake_llm, tmp_path, doc, data, *argv, out="results.jsonl"):
    code = main(["eval", str(doc), "--inputs", str(data), "--out", str(tmp_path / out),
                 "--activities", str(tmp_path / "acts.py"), "--llm", fake_llm.url, "--model", "fake-small",
                 "--now", NOW, "--llm-retries", "0", *map(str, argv)])
    captured = capsys.readouterr()
    lines = [json.loads(line) for line in (tmp_path / out).read_text().splitlines()] \
        if (tmp_path / out).exists() else []
    return code, lines, captured.err


def ran(tmp_path):
    log = tmp_path / "ran.log"
    return log.read_text().splitlines() if log.exists() else []


def test_each_input_runs_the_loop_to_its_end_with_one_result_line(capsys, tmp_path, fake_llm) -> None:
    """Three inputs, two turns each: a line per input in the dataset's order, with the output, the check of
    the expectation and the trajectory, the counts, and the path of that run's document."""
    fake_llm.answer = adder
    doc = agent(tmp_path)
    code, lines, err = evaluate(capsys, fake_llm, tmp_path, doc, dataset(tmp_path, CASES), "--runs",
                                tmp_path / "runs", "--concurrency", 2)
    assert code == 0, err
    assert [line["id"] for line in lines] == ["small", "negative", None]
    assert [line["output"] for line in lines] == [{"total": 5}, {"total": -3}, {"total": 30}]
    assert [line["passed"] for line in lines] == [True, True, None]
    assert all(line["status"] == "finished" and line["ticks"] == 2 and line["calls"] == 1 for line in lines)
    assert [line["asked"] for line in lines] == [2, 2, 2]
    assert lines[0]["tokens"] == 36
    assert lines[1]["tools"] == ["add"]
    assert len(fake_llm.completions) == 6
    run = json.loads((tmp_path / "runs" / "small.json").read_text())
    assert lines[0]["run"].endswith("small.json")
    assert run["context"][1]["input"] == {"a": 2, "b": 3}  # the case's input replaced the document's
    assert json.loads(doc.read_text())["context"][1]["input"] == {"a": 0, "b": 0}  # the document is untouched
    assert (tmp_path / "runs" / "line-3.json").exists()
    assert "3 of 3 input(s)" in err
    assert "3 finished, 0 waiting, 0 failed; expectations: 2 met, 0 missed, pass rate 100%" in err
    assert "ended at once" not in err


def test_a_document_that_already_ends_with_its_output_is_said_to_have_run_nothing(capsys, tmp_path,
                                                                                   fake_llm) -> None:
    """A document saved after a run (its solution holds the final output) ran every input to that output at once,
    0 tokens, and eval said only "failed" for each: it says that nothing ran and why."""
    fake_llm.answer = adder
    doc = agent(tmp_path)
    saved = json.loads(doc.read_text())
    saved["solution"] = {"meta": {}, "calls": [], "output": {"total": 0}}
    doc.write_text(json.dumps(saved))
    code, lines, err = evaluate(capsys, fake_llm, tmp_path, doc, dataset(tmp_path, CASES[:2]))
    assert code == 1
    assert [line["output"] for line in lines] == [{"total": 0}, {"total": 0}]
    assert fake_llm.completions == []
    assert "every input ended at once with the document's own final output" in err


def test_a_missed_expectation_exits_1_and_says_why(capsys, tmp_path, fake_llm) -> None:
    """A wrong expected value, a schema the output breaks and a trajectory not taken: each fails its line."""
    fake_llm.answer = adder
    cases = [{"id": "value", "input": {"a": 1, "b": 1}, "expect": {"total": 3}},
             {"id": "schema", "input": {"a": 1, "b": 1},
              "expect": {"$schema": "https://json-schema.org/draft/2020-12/schema",
                         "properties": {"total": {"minimum": 10}}}},
             {"id": "turns", "input": {"a": 1, "b": 1}, "trajectory": {"turns": 1}},
             {"id": "fine", "input": {"a": 1, "b": 1},
              "expect": {"$schema": "https://json-schema.org/draft/2020-12/schema", "required": ["total"]}}]
    code, lines, err = evaluate(capsys, fake_llm, tmp_path, agent(tmp_path), dataset(tmp_path, cases))
    assert code == 1
    assert [line["passed"] for line in lines] == [False, False, False, True]
    assert lines[0]["failures"] == ["the output is not the expected value"]
    assert lines[1]["failures"][0].startswith("output.total:")
    assert lines[2]["failures"] == ["2 turn(s), expected 1"]
    assert "value: the output is not the expected value" in err


def test_an_expected_output_equal_as_json_is_met(capsys, tmp_path, fake_llm) -> None:
    """`expect` compares as JSON: `5` meets `5.0` (and `-3.0` meets `-3`), `true` never meets `1`."""
    fake_llm.answer = adder
    cases = [{"id": "float", "input": {"a": 2, "b": 3}, "expect": {"total": 5.0}},
             {"id": "bool", "input": {"a": 0, "b": 1}, "expect": {"total": True}}]
    code, lines, _ = evaluate(capsys, fake_llm, tmp_path, agent(tmp_path), dataset(tmp_path, cases))
    assert [line["output"] for line in lines] == [{"total": 5}, {"total": 1}]
    assert [line["passed"] for line in lines] == [True, False]
    assert code == 1


def test_cases_whose_ids_make_the_same_file_name_keep_runs_of_their_own(capsys, tmp_path, fake_llm) -> None:
    """`a/b` and `a_b` (and `..` and `...`) made one run document, each case's result naming it: the later case's
    run overwrote the earlier's, and opening or replaying one read the other. Each has its own now; an id that is
    a file name already keeps it."""
    fake_llm.answer = adder
    ids = ["a/b", "a_b", "..", "..."]
    cases = [{"id": name, "input": {"a": n, "b": 1}} for n, name in enumerate(ids)]
    code, lines, err = evaluate(capsys, fake_llm, tmp_path, agent(tmp_path), dataset(tmp_path, cases), "--runs",
                                tmp_path / "runs")
    assert code == 0, err
    runs = [line["run"] for line in lines]
    assert len(set(runs)) == len(ids)
    assert runs[1].endswith("runs/a_b.json")
    for n, run in enumerate(runs):
        document = json.loads(Path(run).read_text())
        assert Path(run).parent == tmp_path / "runs"
        assert next(m for m in document["context"] if m.get("type") == "input")["input"] == {"a": n, "b": 1}


def test_a_baseline_made_with_a_relative_runs_folder_serves_from_another_folder(capsys, tmp_path, fake_llm,
                                                                                monkeypatch) -> None:
    """`--runs runs` from one folder, then `--baseline` from another: the results name their runs absolutely, so the
    baseline's runs are found (they were looked for relative to the new working folder, and the command stopped),
    as the window finds them when it shows the results."""
    fake_llm.answer = adder
    doc, data = agent(tmp_path), dataset(tmp_path, CASES[:1])
    monkeypatch.chdir(tmp_path)
    code, lines, err = evaluate(capsys, fake_llm, tmp_path, doc, data, "--runs", "runs")
    assert code == 0, err
    assert Path(lines[0]["run"]).is_absolute()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    code, lines, err = evaluate(capsys, fake_llm, tmp_path, doc, data, "--baseline", tmp_path / "results.jsonl",
                                "--replay-activities", out="after.jsonl")
    assert code == 0, err
    assert lines[0]["activities_replayed"] == 1


def test_a_baseline_naming_its_runs_relatively_is_read_beside_its_results(capsys, tmp_path, fake_llm,
                                                                          monkeypatch) -> None:
    """Results written before runs were named absolutely name them relative to the folder eval ran in: from
    another folder, a run not found there is taken from the results file's own folder."""
    fake_llm.answer = adder
    doc, data = agent(tmp_path), dataset(tmp_path, CASES[:1])
    code, lines, err = evaluate(capsys, fake_llm, tmp_path, doc, data, "--runs", tmp_path / "runs")
    assert code == 0, err
    results = tmp_path / "results.jsonl"
    older = [{**line, "run": str(Path(line["run"]).relative_to(tmp_path))} for line in lines]
    results.write_text("".join(json.dumps(line) + "\n" for line in older))
    assert older[0]["run"] == "runs/small.json"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    code, lines, err = evaluate(capsys, fake_llm, tmp_path, doc, data, "--baseline", results,
                                "--replay-activities", out="after.jsonl")
    assert code == 0, err
    assert lines[0]["activities_replayed"] == 1


def test_a_failed_case_is_said_with_its_error_with_or_without_an_expectation(capsys, tmp_path, fake_llm) -> None:
    """The endpoint fails for every case: each is named on stderr with the error that stopped it, first, whether or
    not it expected anything (one without an expectation was not named at all, one with one only said "no final
    output to compare")."""
    fake_llm.answer = lambda body: Reply.error(500, "the model is down")
    cases = [{"id": "expects", "input": {"a": 1, "b": 1}, "expect": {"total": 2}},
             {"id": "free", "input": {"a": 2, "b": 2}}]
    code, lines, err = evaluate(capsys, fake_llm, tmp_path, agent(tmp_path), dataset(tmp_path, cases))
    assert code == 1
    assert [line["status"] for line in lines] == ["failed", "failed"]
    said = {line.split(": ", 1)[0].strip(): line.split(": ", 1)[1] for line in err.splitlines()
            if line.startswith("  ")}
    assert set(said) == {"expects", "free"}
    assert all("the model is down" in reason.split("; ")[0] for reason in said.values())
    assert said["expects"].endswith("; no final output to compare")


def test_an_unchanged_rerun_asks_nothing_and_a_changed_system_text_reasks_every_input(
        capsys, tmp_path, fake_llm) -> None:
    """One cassette for the dataset: the second run replays all six questions; after the system text
    changes, every input's questions are asked again."""
    fake_llm.answer = adder
    doc = agent(tmp_path)
    data = dataset(tmp_path, CASES)
    evaluate(capsys, fake_llm, tmp_path, doc, data)
    code, lines, _ = evaluate(capsys, fake_llm, tmp_path, doc, data, out="again.jsonl")
    assert code == 0
    assert len(fake_llm.completions) == 6
    assert [(line["asked"], line["replayed"]) for line in lines] == [(0, 2)] * 3
    agent(tmp_path, system="Add the two numbers with the tool; answer with the total.")
    code, lines, _ = evaluate(capsys, fake_llm, tmp_path, doc, data, out="edited.jsonl")
    assert code == 0
    assert len(fake_llm.completions) == 12
    assert [(line["asked"], line["replayed"]) for line in lines] == [(2, 0)] * 3


def test_replay_activities_runs_no_unchanged_call_and_says_where_an_input_diverged(
        capsys, tmp_path, fake_llm) -> None:
    """Against a baseline made with --runs, an edited system text re-asks the model, which makes the same
    calls with the same inputs: no activity runs again, and no case diverged. A model that then calls the
    tool with other inputs diverges at turn 1, call 1, and that call runs."""
    fake_llm.answer = adder
    doc = agent(tmp_path)
    data = dataset(tmp_path, CASES)
    evaluate(capsys, fake_llm, tmp_path, doc, data, "--runs", tmp_path / "base")
    assert len(ran(tmp_path)) == 3
    agent(tmp_path, system="Add the two numbers with the tool; answer with the total.")
    code, lines, err = evaluate(capsys, fake_llm, tmp_path, doc, data, "--baseline", tmp_path / "results.jsonl",
                                "--replay-activities", "--runs", tmp_path / "edited", out="edited.jsonl")
    assert code == 0, err
    assert len(ran(tmp_path)) == 3  # nothing ran again
    assert [line["activities_replayed"] for line in lines] == [1, 1, 1]
    assert [line["diverged"] for line in lines] == [None, None, None]
    assert [line["output"] for line in lines] == [{"total": 5}, {"total": -3}, {"total": 30}]

    def doubled(body):
        reply = adder(body)
        answer = json.loads(reply.content)
        for call in answer["calls"]:
            call["b"] = "†input.a"
        return Reply.json(answer)

    fake_llm.answer = doubled
    agent(tmp_path, system="Add a to itself with the tool.")
    code, lines, _ = evaluate(capsys, fake_llm, tmp_path, doc, data, "--baseline", tmp_path / "results.jsonl",
                              "--replay-activities", out="doubled.jsonl")
    assert lines[0]["diverged"] == {"turn": 1, "call": 1, "reason": "add got other inputs"}
    assert lines[0]["output"] == {"total": 4}
    assert len(ran(tmp_path)) == 6
    assert code == 1  # "small" expected 5


def test_a_dry_run_counts_the_questions_a_change_touches(capsys, tmp_path, fake_llm) -> None:
    """Unchanged: every question replays and nothing would be asked. After the system text changes: each
    input's first question would be asked, with an estimate of its tokens; nothing is asked or run."""
    fake_llm.answer = adder
    doc = agent(tmp_path)
    data = dataset(tmp_path, CASES)
    evaluate(capsys, fake_llm, tmp_path, doc, data, "--runs", tmp_path / "base")
    base = ["eval", str(doc), "--inputs", str(data), "--dry-run", "--activities", str(tmp_path / "acts.py"),
            "--llm", fake_llm.url, "--model", "fake-small", "--baseline", str(tmp_path / "results.jsonl")]
    assert main(base) == 0
    out = capsys.readouterr().out
    assert "0 of 3 input(s) touched: at least 0 question(s) would be asked" in out
    assert "6 replay" in out
    agent(tmp_path, system="Something else entirely.")
    assert main(base) == 0
    out = capsys.readouterr().out
    assert "3 of 3 input(s) touched: at least 3 question(s) would be asked" in out
    assert re.search(r"~\d+ prompt tokens", out)
    assert len(fake_llm.completions) == 6
    assert len(ran(tmp_path)) == 3


@pytest.mark.parametrize(("text", "where"), [
    ('{"input": {"a": 1}}\n{"input": \n', "data.jsonl:2:"),
    ('{"input": {"a": 1}}\r\n{"input": {"a": 2', "data.jsonl:2:18: Expecting ',' delimiter (the file ends early: "
                                                  "truncated?; without this last line, the lines before it can be "
                                                  "read)"),
    ('{"input": {"a": 1} ]\n{"input": {"a": 2}}\n', "data.jsonl:1:20: Expecting ',' delimiter\n"),
    ('{"input": {"a": 1}}\n[1, 2]\n', "data.jsonl:2: expected an object"),
    ('{"input": {"a": 1}}\r\n'.encode("utf-16"), "data.jsonl:1:1: not valid UTF-8 (byte 0xff): a UTF-16 text, "
                                                  "save it as UTF-8"),
    ('{"id": "a", "input": {"a": 1}, "expected": 2}\n', "data.jsonl:1: a case has only id, input, expect and "
                                                       "trajectory, not 'expected'; to give this whole object as "
                                                       'the input, write it as {"input": ...}'),
    ('{"id": 1, "input": {}}\n{"id": 1, "input": {}}\n', "data.jsonl:2: id 1 is also on line 1"),
    ('{"id": 1, "input": {}}\n{"id": "1", "input": {}}\n', "data.jsonl:2: id '1' is also on line 1"),
    ('{"input": {}, "trajectory": {"tools": "add"}}\n', "data.jsonl:1: 'trajectory.tools'"),
    ('{"input": {}}\n{"input": {}, "expect": {"$schema": "https://json-schema.org/draft/2020-12/schema", '
     '"type": "nonsense"}}\n', "data.jsonl:2: 'expect' is a JSON Schema (it has $schema) that cannot be used: "
                              "invalid schema at #/type"),
    ('{"input": {}, "expect": {"$schema": "https://json-schema.org/draft/2020-12/schema", '
     '"$ref": "https://example.com/s.json"}}\n',
     "data.jsonl:1: 'expect' is a JSON Schema (it has $schema) that cannot be used: $ref "),
])
def test_a_bad_dataset_is_a_located_message(capsys, tmp_path, text, where) -> None:
    doc = agent(tmp_path)
    data = tmp_path / "data.jsonl"
    data.write_bytes(text if isinstance(text, bytes) else text.encode())
    assert main(["eval", str(doc), "--inputs", str(data), "--out", str(tmp_path / "r.jsonl")]) == 1
    err = capsys.readouterr().err
    assert where in err
    assert "Traceback" not in err
    assert not (tmp_path / "r.jsonl").exists()


def test_eval_without_out_or_dry_run_is_a_usage_error(capsys, tmp_path) -> None:
    """Results must go somewhere: no --out and no --dry-run is a usage error (exit 2, eval's usage), before any case
    is read."""
    with pytest.raises(SystemExit) as exited:
        main(["eval", str(agent(tmp_path)), "--inputs", str(tmp_path / "none.jsonl")])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "usage: contextdeck eval" in err
    assert err.endswith("contextdeck eval: error: --out RESULTS.jsonl is needed (or --dry-run)\n")


@pytest.mark.parametrize(("option", "value", "said"), [
    ("--now", "yesterday", "argument --now: not an ISO 8601 date and time: 'yesterday'"),
    ("--timeout", "-1", "argument --timeout: not a positive number of seconds: '-1'"),
    ("--max-ticks", "-3", "argument --max-ticks: not a whole number of 0 or more: '-3'"),
    ("--concurrency", "0", "argument --concurrency: not a whole number of 1 or more: '0'"),
])
def test_a_bad_option_is_a_usage_error_before_any_case_runs(capsys, tmp_path, fake_llm, option, value,
                                                            said) -> None:
    """A value `run` refuses as a usage error is one for `eval` too (exit 2, the option named): not an internal
    error (`--now`), nor every case run and failed ("no final output") with the model asked for nothing."""
    fake_llm.answer = adder
    with pytest.raises(SystemExit) as exited:
        evaluate(capsys, fake_llm, tmp_path, agent(tmp_path), dataset(tmp_path, CASES), option, value)
    assert exited.value.code == 2
    assert said in capsys.readouterr().err
    assert not (tmp_path / "results.jsonl").exists()
    assert fake_llm.requests == []


@pytest.mark.parametrize("out", ["missing/results.jsonl", "runs"])
def test_a_results_file_that_cannot_be_written_is_said_before_any_case_runs(capsys, tmp_path, fake_llm,
                                                                           out) -> None:
    """`--out` in a folder that does not exist, or naming a folder: exit 1 with the file and the reason in words
    (`cannot write OUT: ...`, as `run` says it), before the model is asked anything, never the name of a temporary
    file after every case ran."""
    fake_llm.answer = adder
    (tmp_path / "runs").mkdir()
    code = main(["eval", str(agent(tmp_path)), "--inputs", str(dataset(tmp_path, CASES)), "--out", str(tmp_path / out),
                 "--activities", str(tmp_path / "acts.py"), "--llm", fake_llm.url, "--model", "fake-small"])
    err = capsys.readouterr().err
    reason = "No such file or directory" if out.startswith("missing") else "Is a directory"
    assert (code, err.strip()) == (1, f"contextdeck: cannot write {tmp_path / out}: {reason}")
    assert fake_llm.requests == []
    assert ran(tmp_path) == []


@pytest.mark.parametrize(("stop", "code"), [("SIGINT", 130), ("SIGTERM", 143)])
def test_ctrl_c_ends_the_experiment_with_the_results_so_far_written(tmp_path, fake_llm, stop, code) -> None:
    """SIGINT (or SIGTERM) while the second of four cases waits for the model: exit 130 (143), and the results
    file holds the case that finished (only it), written whole."""
    import signal
    import subprocess
    import sys
    import time

    answered = []

    def slow(body):
        # The second case's first question waits far longer than the test: SIGINT always finds it waiting,
        # however long the machine takes to get the signal sent.
        answered.append(body)
        reply = adder(body)
        return Reply(content=reply.content, delay=0.05 if len(answered) <= 2 else 30)

    fake_llm.answer = slow
    doc = agent(tmp_path)
    data = dataset(tmp_path, [{"id": n, "input": {"a": n, "b": 1}} for n in range(4)])
    out = tmp_path / "results.jsonl"
    # A shell starts background jobs with SIGINT ignored, and a child inherits an ignored signal (a handled
    # one is reset to the default): the command must start as from a terminal, or it rightly ignores Ctrl+C.
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "contextdeck", "eval", str(doc), "--inputs", str(data), "--out", str(out),
             "--activities", str(tmp_path / "acts.py"), "--llm", fake_llm.url, "--model", "fake-small",
             "--concurrency", "1", "--llm-retries", "0"], stderr=subprocess.PIPE, text=True)
    finally:
        signal.signal(signal.SIGINT, inherited)
    deadline = time.monotonic() + 60
    while len(fake_llm.completions) < 3 and time.monotonic() < deadline:  # the second case has begun
        time.sleep(0.05)
    process.send_signal(getattr(signal, stop))
    _, err = process.communicate(timeout=60)
    assert process.returncode == code, err
    assert "interrupted: the results so far are written" in err
    assert "Traceback" not in err
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line["id"] for line in lines] == [0]
    assert lines[0]["status"] == "finished"


def test_an_input_that_breaks_the_input_schema_fails_its_case_without_running(capsys, tmp_path, fake_llm) -> None:
    """A case whose input breaks the schema of the document's input message fails, naming its line and each JSON
    path, and runs nothing (exit 1); the other cases run. Before, it ran as if the input were fine and could
    pass, though no input like it is one the agent takes."""
    fake_llm.answer = adder
    doc = agent(tmp_path)
    shaped = json.loads(doc.read_text())
    shaped["context"][1]["schema"] = {"type": "object", "properties": {"a": {"type": "number"}}, "required": ["a"]}
    doc.write_text(json.dumps(shaped))
    cases = [{"id": "good", "input": {"a": 1, "b": 1}}, {"id": "bad", "input": {"a": "one", "b": 1}}]
    code, lines, err = evaluate(capsys, fake_llm, tmp_path, doc, dataset(tmp_path, cases))
    assert code == 1
    assert [line["status"] for line in lines] == ["finished", "failed"]
    assert lines[1]["errors"] == ["the input (line 2) breaks the document's input schema: message 1: ¶input.a: "
                                  "'one' is not of type 'number'"]
    assert len(fake_llm.completions) == 2  # the good case's two turns only
    assert "  bad: the input (line 2) breaks the document's input schema" in err
    # the summary counts the case that failed as failed, apart from the expectations (none here)
    assert ": 1 finished, 0 waiting, 1 failed; expectations: 0 met, 0 missed; the model: 2 asked" in err


def test_a_solution_run_refuses_stops_eval_before_any_case_with_one_message(capsys, tmp_path, fake_llm) -> None:
    """A document whose own solution `run` refuses (advice its advisor's schema refuses, an advisor nobody defines,
    017; a solution that is none) would refuse every case: eval says so once, as `run` does (each refusal at the
    document, exit 1), asks the model nothing, runs no activity and writes no results, dry run or not."""
    fake_llm.answer = adder
    doc = agent(tmp_path)
    written = json.loads(doc.read_text())
    advisor = {"type": "advisor", "id": "critic", "on": "request",
               "schema": {"type": "object", "properties": {"thought": {"type": "string"}}}}
    written["context"].append(advisor)
    written["solution"] = {"advisors": [{"id": "critic", "thought": 5, "calls": "{}"}, {"id": "nobody"}],
                           "calls": [{"_tool": "add", "a": 1, "b": 2, "_outputPath": "†state.sum"}], "output": None}
    doc.write_text(json.dumps(written))
    said = [f"contextdeck: {doc}: solution.advisors[0].thought: 5 is not of type 'string'",
            f"contextdeck: {doc}: solution.advisors[1]: no advisor has the id 'nobody'"]
    data = dataset(tmp_path, CASES)
    for extra in ([], ["--dry-run"]):
        code, lines, err = evaluate(capsys, fake_llm, tmp_path, doc, data, *extra)
        assert (code, lines, err.splitlines()) == (1, [], said)
    written["solution"] = {"calls": "go", "output": None}
    doc.write_text(json.dumps(written))
    code, lines, err = evaluate(capsys, fake_llm, tmp_path, doc, data)
    assert (code, lines, err) == (1, [], f"contextdeck: {doc}: solution.calls: must be an array of calls\n")
    assert (fake_llm.requests, ran(tmp_path)) == ([], [])
    assert not (tmp_path / "results.jsonl").exists()


def test_each_case_runs_from_the_request_a_run_in_the_document_started_from(capsys, tmp_path, fake_llm) -> None:
    """A document saved after a run (its model turn, the call's output and record, the final output in its
    solution) was run by every case from where that run ended: each ended at once with the run's output, made from
    the document's own input. Each case now runs from the request the run started from (006: an input is one
    execution's), and its run is what it appends: the same results as the document before the run gives."""
    fake_llm.answer = adder
    doc = agent(tmp_path)
    assert main(["run", str(doc), "--activities", str(tmp_path / "acts.py"), "--llm", fake_llm.url, "--model",
                 "fake-small", "--now", NOW, "--out", str(tmp_path / "ran.json")]) == 0
    ran_doc = tmp_path / "ran.json"
    held = json.loads(ran_doc.read_text())
    assert held["solution"]["output"] == {"total": 0}
    assert "_model" in held["solution"]
    assert any("_run" in message for message in held["context"])
    capsys.readouterr()
    code, lines, err = evaluate(capsys, fake_llm, tmp_path, ran_doc, dataset(tmp_path, CASES), "--runs",
                                tmp_path / "runs")
    fresh_code, fresh, _ = evaluate(capsys, fake_llm, tmp_path, doc, dataset(tmp_path, CASES), "--runs",
                                    tmp_path / "fresh", out="fresh.jsonl")
    assert code == fresh_code == 0
    assert [line["output"] for line in lines] == [{"total": 5}, {"total": -3}, {"total": 30}]
    keys = ("status", "output", "passed", "ticks", "calls", "tools", "start")
    assert [{key: line[key] for key in keys} for line in lines] == [{key: line[key] for key in keys}
                                                                    for line in fresh]
    assert lines[0]["start"] == len(json.loads(doc.read_text())["context"])
    assert "ended at once" not in err


def test_a_jsonl_document_runs_as_its_file_is_read(capsys, tmp_path, fake_llm) -> None:
    """An agent kept as JSON Lines (a message a line, no envelope) runs each case as one kept as JSON does: the
    request is read back in the document's own form, not as one JSON value (which stopped at line 2)."""
    fake_llm.answer = adder
    messages = json.loads(agent(tmp_path).read_text())["context"]
    doc = tmp_path / "agent.jsonl"
    doc.write_text("".join(json.dumps(message) + "\n" for message in messages))
    code, lines, err = evaluate(capsys, fake_llm, tmp_path, doc, dataset(tmp_path, CASES[:1]))
    assert code == 0, err
    assert [(line["id"], line["status"], line["output"]) for line in lines] == [("small", "finished", {"total": 5})]
    assert ran(tmp_path) == ["2+3"]


def test_a_baseline_over_another_dataset_is_compared_only_where_the_ids_agree(capsys, tmp_path, fake_llm) -> None:
    """Each result names its dataset; a baseline over another file is said to be one, and only the cases whose ids
    both have are compared: `line-3` of another dataset is another case, not compared and nothing replayed to it."""
    fake_llm.answer = adder
    doc, data = agent(tmp_path), dataset(tmp_path, CASES)
    code, lines, err = evaluate(capsys, fake_llm, tmp_path, doc, data, "--runs", tmp_path / "runs")
    assert code == 0, err
    assert {line["dataset"] for line in lines} == {str(data.resolve())}
    other = tmp_path / "other.jsonl"
    other.write_text("".join(json.dumps(line) + "\n" for line in [CASES[0], {"a": 7, "b": 8}, {"a": 1, "b": 1}]))
    code, lines, err = evaluate(capsys, fake_llm, tmp_path, doc, other, "--baseline", tmp_path / "results.jsonl",
                                "--replay-activities", out="after.jsonl")
    assert code == 0, err
    assert "results.jsonl is over another dataset (data.jsonl, not other.jsonl): only the 1 case(s) whose ids " \
        "both have are compared" in err
    assert [line.get("diverged") for line in lines] == [None, None, None]
    assert [line["activities_replayed"] for line in lines] == [1, 0, 0]
    assert "diverged" in lines[0]
    assert "diverged" not in lines[2]  # line 3 here is not line 3 there


def test_a_baseline_over_the_same_dataset_is_compared_whole_without_a_word(capsys, tmp_path, fake_llm) -> None:
    """The earlier results over the same file (by default `--out`'s): every case compared, nothing said of it."""
    fake_llm.answer = adder
    doc, data = agent(tmp_path), dataset(tmp_path, CASES)
    assert evaluate(capsys, fake_llm, tmp_path, doc, data, "--runs", tmp_path / "runs")[0] == 0
    code, lines, err = evaluate(capsys, fake_llm, tmp_path, doc, data, "--replay-activities")
    assert code == 0, err
    assert "is over" not in err
    assert [line["activities_replayed"] for line in lines] == [1, 1, 1]
    assert all("diverged" in line for line in lines)
