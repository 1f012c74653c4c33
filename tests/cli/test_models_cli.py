"""`contextdeck run DOC --llm URL --model NAME [--replay|--record|--live]` and `contextdeck ask DOC --llm ...`."""

import json
import socket

import pytest

from contextdeck._cli import main
from fake_llm import Reply, ticket_document

NOW = "2026-03-01T10:00:00Z"


def call(capsys, *argv):
    code = main([*map(str, argv)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def written(tmp_path, value=None):
    path = tmp_path / "ticket.json"
    path.write_text(json.dumps(value or ticket_document()))
    return path


def dead_url():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}/v1"


def test_run_with_a_model_answers_the_latent_call_and_records_it(capsys, tmp_path, fake_llm) -> None:
    """The model's validated result is written with `_run.model`; the exchange goes to DOC.models.jsonl."""
    fake_llm.push(Reply.json({"result": {"label": "damage"}}))
    doc = written(tmp_path)
    code, out, err = call(capsys, "run", doc, "--llm", fake_llm.url, "--model", "fake-small", "--now", NOW,
                          "--llm-retries", "0", "--turns", "wait")
    result = json.loads(out)
    assert code == 0, err
    last = result["context"][-1]
    assert last["data"] == {"label": {"label": "damage"}}
    assert last["_run"]["model"]["usage"]["total_tokens"] == 18
    assert "1 call(s) run" in err
    cassette = tmp_path / "ticket.json.models.jsonl"
    assert len(cassette.read_text().splitlines()) == 1


@pytest.mark.parametrize("command", ["run", "ask", "eval"])
def test_a_cassette_that_cannot_be_written_is_refused_before_the_model_is_asked(capsys, tmp_path, fake_llm,
                                                                               command) -> None:
    """A recording the cassette could not take is said before any question, exit 1: the model is not paid for an
    answer that would be lost. `--replay` writes nothing, so the same cassette is no problem there."""
    fake_llm.push(Reply.json({"result": {"label": "damage"}}))
    doc = written(tmp_path)
    cassette = tmp_path / "no such folder" / "x.jsonl"
    more = ["--inputs", str(_one_case(tmp_path)), "--out", str(tmp_path / "r.jsonl")] if command == "eval" else []
    code, _, err = call(capsys, command, doc, "--llm", fake_llm.url, "--model", "fake-small", "--cassette", cassette,
                        *more)
    assert code == 1
    assert f"cannot write {cassette}: No such file or directory" in err
    assert fake_llm.completions == []
    assert not cassette.parent.exists()


def _one_case(tmp_path):
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({"id": "a", "input": {}}) + "\n")
    return cases


def test_a_second_run_replays_without_the_server(capsys, tmp_path, fake_llm) -> None:
    """--replay against an endpoint that is down gives the same document: nothing is asked."""
    fake_llm.push(Reply.json({"result": {"label": "damage"}}))
    doc = written(tmp_path)
    _, first, _ = call(capsys, "run", doc, "--llm", fake_llm.url, "--model", "fake-small", "--now", NOW,
                       "--turns", "wait")
    code, second, err = call(capsys, "run", doc, "--llm", dead_url(), "--model", "fake-small", "--now", NOW,
                             "--replay", "--turns", "wait")
    assert code == 0, err
    first_doc, second_doc = json.loads(first), json.loads(second)
    assert second_doc["context"][-1]["data"] == first_doc["context"][-1]["data"]
    assert second_doc["context"][-1]["_run"]["model"]["replayed"] is True
    assert len(fake_llm.completions) == 1


def test_a_server_that_is_down_is_named_and_the_document_still_written(capsys, tmp_path) -> None:
    """Exit 4, a message naming the call and the endpoint; the document comes out unchanged, nothing lost."""
    doc = written(tmp_path)
    url = dead_url()
    out_file = tmp_path / "out.json"
    code, _, err = call(capsys, "run", doc, "--llm", url, "--model", "m", "--llm-retries", "0", "--out", out_file)
    assert code == 4
    assert f"the model failed: call 0 (classify): {url} (model m): cannot connect" in err
    assert json.loads(out_file.read_text()) == ticket_document()


def test_an_answer_that_does_not_validate_is_an_error_message_and_exit_5(capsys, tmp_path, fake_llm) -> None:
    """The call fails with a `modelOutput` error message carrying the reply; the document is written, and the
    exit code is 5 (an answer was refused), not 0."""
    fake_llm.push(Reply(content="no idea"))
    code, out, err = call(capsys, "run", written(tmp_path), "--llm", fake_llm.url, "--model", "fake-small",
                          "--turns", "wait")
    error = json.loads(out)["context"][-1]["data"]["error"]
    assert code == 5
    assert (error["type"], error["reply"]) == ("modelOutput", "no idea")
    assert "call 0 (classify) failed: modelOutput" in err
    assert "the model's answer was refused for call 0" in err


def test_ask_writes_the_models_calls_as_the_solution(capsys, tmp_path, fake_llm) -> None:
    """`ask --out`: the request's solution is the model's; stderr says how many calls, tokens and where."""
    calls = [{"_tool": "classify", "ticket": "†input.ticket", "_outputPath": "†state.label"}]
    fake_llm.push(Reply.json({"meta": {}, "calls": calls, "output": None}))
    target = tmp_path / "asked.json"
    code, out, err = call(capsys, "ask", written(tmp_path), "--llm", fake_llm.url, "--model", "fake-small",
                          "--out", target)
    assert (code, out) == (0, "")
    assert json.loads(target.read_text())["solution"]["calls"] == calls
    assert "1 call(s) from fake-small" in err
    assert "18 tokens" in err
    assert "the request's solution" in err


def test_ask_with_a_garbage_answer_writes_nothing(capsys, tmp_path, fake_llm) -> None:
    """Exit 4, the reason and the raw reply on stderr, and no output file."""
    fake_llm.push(Reply.json({"calls": "all of them"}))
    target = tmp_path / "asked.json"
    code, _, err = call(capsys, "ask", written(tmp_path), "--llm", fake_llm.url, "--model", "fake-small",
                        "--out", target)
    assert code == 4
    assert "the request: " in err
    assert "does not match the schema" in err
    assert "the model's reply was" in err
    assert not target.exists()


def test_ask_replays_a_recorded_answer(capsys, tmp_path, fake_llm) -> None:
    """The same request asked twice is asked once; the second says it was replayed."""
    fake_llm.push(Reply.json({"meta": {}, "calls": [], "output": {"reply": "hi"}}))
    doc = written(tmp_path)
    call(capsys, "ask", doc, "--llm", fake_llm.url, "--model", "fake-small")
    code, out, err = call(capsys, "ask", doc, "--llm", fake_llm.url, "--model", "fake-small")
    assert code == 0
    assert json.loads(out)["solution"]["output"] == {"reply": "hi"}
    assert "replayed from the cassette" in err
    assert len(fake_llm.completions) == 1


@pytest.mark.parametrize("url", ["notaurl", "localhost:11434/v1", "ftp://host/v1", "http://", "http://h:port/v1"])
def test_an_llm_that_is_no_url_is_a_usage_error_before_anything_runs(capsys, tmp_path, url) -> None:
    """--llm must be an http or https URL naming a host: anything else is refused when the command line is read,
    naming the option (exit 2), for every command that asks a model, before a call runs or a file is written."""
    doc = written(tmp_path)
    out = tmp_path / "out.json"
    dataset = tmp_path / "cases.jsonl"
    dataset.write_text('{"id": "a", "input": {}}\n')
    for argv in (["run", doc, "--out", out], ["ask", doc, "--out", out], ["eval", doc, "--inputs", dataset]):
        with pytest.raises(SystemExit) as exit_:
            main([*map(str, argv), "--llm", url, "--model", "m"])
        assert exit_.value.code == 2
        err = capsys.readouterr().err
        assert f"argument --llm: not an http:// or https:// URL: {url!r}" in err
    assert not out.exists()


def test_llm_and_model_go_together(capsys, tmp_path) -> None:
    """--llm without --model (or the other way round) is a usage error, exit 2."""
    doc = written(tmp_path)
    for argv in (["--llm", "http://127.0.0.1:1/v1"], ["--model", "m"]):
        with pytest.raises(SystemExit) as exit_:
            main(["run", str(doc), *argv])
        assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "contextdeck run: error: --llm needs --model NAME" in err
    assert "contextdeck run: error: --model needs --llm BASE_URL" in err
    assert "usage: contextdeck run" in err


def test_export_names_its_model_without_an_endpoint(capsys, tmp_path) -> None:
    """`export --format openai --model NAME` names the model in the body: export asks no model, so its --model
    needs no --llm."""
    assert main(["export", str(written(tmp_path)), "--format", "openai", "--model", "gpt-4o"]) == 0
    assert json.loads(capsys.readouterr().out)["model"] == "gpt-4o"
