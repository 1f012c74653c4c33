"""The headless commands: exact exit codes, what goes to stdout and to stderr."""

from __future__ import annotations

import functools
import gc
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import contextdeck._cli as command_line
from contextdeck._cli import main
from contextdeck.engine.protocol import _schemas

SEED = [
    {"type": "data", "data": {"user": {"name": "Alex", "status": "active"}}},
    {"type": "data", "data": {"user": {"status": "inactive"}},
     "_call": {"_tool": "updateUserStatus", "_outputPath": "†data.user.status"}},
    {"type": "state", "_instance": "①", "data": {"n": None}},
]


@pytest.fixture
def doc(tmp_path: Path) -> Path:
    """The seed-000 document with one instanced state message."""
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(SEED, ensure_ascii=False), encoding="utf-8")
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_resolve_prints_the_value_as_json(capsys, doc) -> None:
    """A found expression prints its JSON value and exits 0."""
    code, out, _ = run(capsys, "resolve", str(doc), "†data.user")
    assert code == 0
    assert json.loads(out) == {"name": "Alex", "status": "inactive"}


def test_resolve_null_is_found(capsys, doc) -> None:
    """A path whose value is null is found: prints null, exits 0."""
    assert run(capsys, "resolve", str(doc), "†state.n", "--instance", "①")[:2] == (0, "null\n")


def test_resolve_at_and_instance(capsys, doc) -> None:
    """--at N resolves as of the first N messages; --instance selects the instance layer."""
    assert run(capsys, "resolve", str(doc), "†data.user.status", "--at", "1")[:2] == (0, '"active"\n')
    assert run(capsys, "resolve", str(doc), "†state.n")[0] == 3


def test_resolve_not_found_exits_3_naming_the_path(capsys, doc) -> None:
    """Not found exits 3 and stderr names the missing reference of each alternative."""
    code, out, err = run(capsys, "resolve", str(doc), "†data.user.age || †state.x")
    assert (code, out) == (3, "")
    assert "†data.user.age" in err
    assert "†state.x" in err


@pytest.mark.parametrize(("expr", "position"), [("†", 1), ("†state.", 7), ("†a | †b", 3), ("†a &&& †b", 5)])
def test_resolve_malformed_exits_2_with_the_position(capsys, doc, expr, position) -> None:
    """A malformed expression exits 2 and stderr gives the position."""
    code, out, err = run(capsys, "resolve", str(doc), expr)
    assert (code, out) == (2, "")
    assert f"position {position}" in err


def test_resolve_unreadable_document_exits_1(capsys, tmp_path) -> None:
    """A missing file exits 1 and names it."""
    code, _, err = run(capsys, "resolve", str(tmp_path / "absent.json"), "†a")
    assert code == 1
    assert "absent.json" in err


def test_malformed_document_exits_1_with_file_line_column(capsys, tmp_path) -> None:
    """Malformed JSON exits 1 with file:line:column on stderr, for every command."""
    bad = tmp_path / "bad.json"
    bad.write_text('[\n  {"type": "text",}\n]')
    for argv in (["resolve", str(bad), "†a"], ["render", str(bad)], ["validate", str(bad)]):
        code, out, err = run(capsys, *argv)
        assert (code, out) == (1, "")
        assert f"{bad}:2:19:" in err


def test_render_prints_what_the_llm_sees(capsys, doc) -> None:
    """render prints the messages under their roles, then the schema, and no audit metadata."""
    code, out, _ = run(capsys, "render", str(doc))
    assert code == 0
    assert out.startswith("--- user ---\n## Data: ¶data\n{")
    assert "\n--- schema ---\n{" in out
    assert "_call" not in out
    assert '"status": "inactive"' in out


def test_validate_clean_document_exits_0(capsys, doc) -> None:
    """validate on a clean document says ok and exits 0."""
    code, out, _ = run(capsys, "validate", str(doc))
    assert code == 0
    assert "ok (3 messages)" in out


def test_validate_problems_exit_1(capsys, tmp_path) -> None:
    """Schema violations, bad references, conflicts and unknown tools are listed, one per line, and exit 1."""
    path = tmp_path / "p.json"
    path.write_text(json.dumps([
        {"type": "user", "data": {"age": "x"}, "schema": {"properties": {"age": {"type": "number"}}}},
        {"type": "user", "data": {"age": 1}, "_outputPath": "†user.age", "_outputMethod": "push"},
        {"type": "plan", "plan": [{"_tool": "t", "p": "†user..age"}]},
    ]))
    code, out, err = run(capsys, "validate", str(path))
    assert code == 1
    lines = out.splitlines()
    assert len(lines) == 4
    assert "¶user.age: 'x' is not of type 'number'" in lines[0]
    assert "position 6" in out
    assert "push onto a string" in out
    assert "warning: message 2: call 0 $._tool: unknown tool 't'" in out
    assert "3 problem(s), 1 warning(s)" in err


def test_validate_and_render_hold_the_document_apart_from_the_collector(capsys, doc, monkeypatch) -> None:
    """While validate or render reads the document it loaded, no collection walks it (`gc.freeze`) and the
    collector is paused; the collector has it back, running, when the command ends."""
    if gc.get_freeze_count() or not gc.isenabled():
        pytest.skip("something else froze the heap or paused the collector: the command leaves it to its owner")
    seen: list[tuple[bool, bool]] = []
    for name in ("validate", "compose_request"):
        real = getattr(command_line, name)

        def watched(*args: Any, real: Any = real, **kwargs: Any) -> Any:
            seen.append((gc.get_freeze_count() > 0, gc.isenabled()))
            return real(*args, **kwargs)

        monkeypatch.setattr(command_line, name, watched)
    assert run(capsys, "validate", str(doc))[0] == 0
    assert run(capsys, "render", str(doc))[0] == 0
    assert seen == [(True, False), (True, False)]
    assert gc.get_freeze_count() == 0
    assert gc.isenabled()


@pytest.mark.parametrize(("solution", "said"), [
    (5, "solution: must be an object with 'calls' and 'output', or an array of calls"),
    ({"calls": "go", "output": None}, "solution.calls: must be an array of calls"),
    # A file holds a call nested a level deeper in its solution than the plan message a run makes of it may.
    ({"calls": [{"_tool": "think", "p": functools.reduce(lambda value, _: [value], range(250), 1)}]},
     "solution.calls[0].p[0]…: the document could not hold the call as a plan message: nesting deeper than 254 "
     "levels")])
def test_a_solution_that_is_no_solution_is_a_problem_and_run_refuses_it(capsys, tmp_path, solution, said) -> None:
    """SPEC 1: a saved request's `solution` is `{"calls", "output"}` (or 202's array of calls). Any other is a
    problem of validate, and run refuses the document (exit 1) before running anything in its place, rather
    than stopping midway with a TypeError or running the last plan."""
    path = tmp_path / "s.json"
    plan = {"type": "plan", "plan": [{"_tool": "think", "_output": 1, "_outputPath": "†state.x"}]}
    path.write_text(json.dumps({"context": [plan], "solution": solution}), encoding="utf-8")
    code, out, _ = run(capsys, "validate", str(path))
    assert (code, out.splitlines()[0]) == (1, f"{path}: {said}")
    code, out, err = run(capsys, "run", str(path))
    assert (code, out, err) == (1, "", f"contextdeck: {path}: {said}\n")


def test_a_solution_whose_advice_validate_refuses_is_refused_by_run(capsys, tmp_path) -> None:
    """017: advice `validate` calls an error (a field its advisor's schema refuses, an advisor nobody defines)
    refuses the document's own solution in `run` too, as it refuses a turn typed with it: each said, exit 1, nothing
    run, with or without --steps. Its warnings alone (an advisor left without advice) refuse nothing."""
    advisor = {"type": "advisor", "id": "critic", "on": "request",
               "schema": {"type": "object", "properties": {"thought": {"type": "string"}}, "required": ["thought"]}}
    call = {"_tool": "echo", "_output": "a", "_outputPath": "†state.echo"}
    path, out_path = tmp_path / "a.json", tmp_path / "out.json"
    solution = {"advisors": [{"id": "critic", "thought": 5, "calls": "{}"}, {"id": "nobody"}],
                "calls": [call], "output": "done"}
    echo = {"type": "tool", "tool": {"echo": {"type": "object"}}}
    path.write_text(json.dumps({"context": [advisor, echo], "solution": solution}), encoding="utf-8")
    said = ["solution.advisors[0].thought: 5 is not of type 'string'",
            "solution.advisors[1]: no advisor has the id 'nobody'"]
    code, out, _ = run(capsys, "validate", str(path))
    assert (code, out.splitlines()[:2]) == (1, [f"{path}: {line}" for line in said])
    for steps in ([], ["--steps", "5"]):
        code, out, err = run(capsys, "run", str(path), "--out", str(out_path), *steps)
        assert (code, out, err.splitlines()) == (1, "", [f"contextdeck: {path}: {line}" for line in said])
        assert not out_path.exists()
    path.write_text(json.dumps({"context": [advisor, echo], "solution": {"calls": [call], "output": "done"}}),
                    encoding="utf-8")
    assert run(capsys, "validate", str(path))[0] == 0
    assert run(capsys, "run", str(path), "--out", str(out_path))[0] == 0


def test_validate_warnings_alone_exit_0(capsys, tmp_path) -> None:
    """A call to a tool nothing defines is a warning (it runs latent, SPEC 6.7): printed, exit 0."""
    path = tmp_path / "w.json"
    path.write_text(json.dumps([{"type": "plan", "plan": [{"_tool": "t"}]}]))
    code, out, _err = run(capsys, "validate", str(path))
    assert code == 0
    assert "warning: message 0: call 0 $._tool: unknown tool 't'" in out
    assert "ok (1 messages, 1 warning(s))" in out


@pytest.mark.parametrize("command", [["resolve", "{doc}", "†data.user"], ["render", "{doc}"],
                                     ["render", "{doc}", "--json"], ["export", "{doc}", "--format", "openai"]])
def test_at_past_the_end_is_a_usage_error_naming_the_document_s_length(capsys, doc, command) -> None:
    """--at past the end names another cut than the document holds: exit 2, the value and the length said,
    nothing printed; --at the length is all of it."""
    argv = [part.format(doc=doc) for part in command]
    code, out, err = run(capsys, *argv, "--at", "4")
    assert (code, out) == (2, "")
    assert err == (f"contextdeck: --at 4 is past the end of {doc}, which holds 3 message(s): give 0 to 3, "
                   "or leave --at out for all of it\n")
    assert run(capsys, *argv, "--at", "3")[:2] == run(capsys, *argv)[:2]


@pytest.mark.parametrize("value", ["-1", "abc", "1.5", "1" * 5000])
def test_an_at_that_is_no_count_is_a_usage_error(capsys, doc, value) -> None:
    """--at takes a whole number of 0 or more: anything else is a usage error that says so in words (not the name
    of a function of ours), exit 2."""
    with pytest.raises(SystemExit) as caught:
        main(["resolve", str(doc), "†a", "--at", value])
    assert caught.value.code == 2
    assert f"argument --at: not a whole number of 0 or more: {value!r}" in capsys.readouterr().err


# -- as a real process ---------------------------------------------------------------------------


def cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "contextdeck", *argv], capture_output=True, text=True,
                          encoding="utf-8", check=False)


def test_process_exit_codes(doc, tmp_path) -> None:
    """Run as a process: 0 found, 3 not found, 2 malformed, 1 unreadable, with stdout and stderr as promised."""
    found = cli("resolve", str(doc), "†data.user.name")
    assert (found.returncode, found.stdout) == (0, '"Alex"\n')
    missing = cli("resolve", str(doc), "†data.user.age")
    assert (missing.returncode, missing.stdout) == (3, "")
    assert "†data.user.age" in missing.stderr
    malformed = cli("resolve", str(doc), "†data..user")
    assert malformed.returncode == 2
    assert "position 6" in malformed.stderr
    unreadable = cli("resolve", str(tmp_path / "none.json"), "†a")
    assert unreadable.returncode == 1


def test_process_render_and_validate(examples) -> None:
    """render and validate run as processes on a bundled example."""
    rendered = cli("render", str(examples / "seed_user_merge.json"))
    assert rendered.returncode == 0
    assert "## Data: ¶user" in rendered.stdout
    assert cli("validate", str(examples / "refund_workflow.json")).returncode == 0


def test_a_terminal_without_unicode_gets_escapes_not_a_crash(doc) -> None:
    """With an ASCII-only stdout the value prints with escapes and the command still succeeds."""
    result = subprocess.run([sys.executable, "-m", "contextdeck", "render", str(doc)], capture_output=True,
                            env={"PYTHONIOENCODING": "ascii", "PATH": ""}, check=False)
    assert result.returncode == 0
    assert b"## Data: \\xb6data" in result.stdout


def test_the_caret_is_under_the_escaped_character_on_a_terminal_without_unicode(doc) -> None:
    """With an ASCII-only stderr a malformed expression is printed with escapes, and the caret counts their
    columns: it is under the single '|' at position 9, not under the '||' 9 columns in."""
    result = subprocess.run([sys.executable, "-m", "contextdeck", "resolve", str(doc), "†a || †b |"],
                            capture_output=True, env={"PYTHONIOENCODING": "ascii", "PATH": ""}, check=False)
    assert result.returncode == 2
    shown, caret = result.stderr.decode("ascii").splitlines()[1:]
    assert shown == "  \\u2020a || \\u2020b |"
    assert caret == " " * (len(shown) - 1) + "^"


def test_the_caret_counts_a_wide_character_as_two_columns(capsys, doc) -> None:
    """A wide character (名) takes two columns of a terminal: the caret counts them."""
    code, _, err = run(capsys, "resolve", str(doc), "†名前 |")
    assert code == 2
    assert err.splitlines()[1:] == ["  †名前 |", "  " + " " * 6 + "^"]


def test_render_at_and_jsonl_documents(capsys, tmp_path) -> None:
    """render --at N shows the first N messages; JSON Lines documents work like arrays."""
    path = tmp_path / "doc.jsonl"
    path.write_text("".join(json.dumps(m, ensure_ascii=False) + "\n" for m in SEED), encoding="utf-8")
    code, out, _ = run(capsys, "render", str(path), "--at", "1")
    assert code == 0
    assert '"status": "active"' in out
    assert run(capsys, "resolve", str(path), "†data.user.status")[:2] == (0, '"inactive"\n')


def test_bad_jsonl_line_names_file_and_line(capsys, tmp_path) -> None:
    """A JSON Lines message that is not an object exits 1 naming the file, the line and the message."""
    path = tmp_path / "doc.jsonl"
    path.write_text('{"type": "text", "text": "a"}\n[1]\n', encoding="utf-8")
    code, _, err = run(capsys, "validate", str(path))
    assert code == 1
    assert f"{path}:2: message 1: expected a message object, got an array" in err


def test_a_closed_pipe_ends_quietly(tmp_path) -> None:
    """`contextdeck render doc | head -c 10`: the reader leaving is no error and prints no traceback."""
    path = tmp_path / "long.json"
    # Far more output than a pipe buffers, so the command is still writing when the reader leaves.
    path.write_text(json.dumps([{"type": "text", "text": "x" * 1000}] * 5000))
    with subprocess.Popen([sys.executable, "-m", "contextdeck", "render", str(path)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
        assert process.stdout is not None
        assert process.stderr is not None
        head = process.stdout.read(10)
        process.stdout.close()
        errors = process.stderr.read()
        code = process.wait(timeout=60)
    assert (head, code, errors) == (b"--- user -", 0, b"")


def test_ctrl_c_while_the_command_loads_is_exit_130_without_a_traceback() -> None:
    """Ctrl-C before the command has finished loading its modules (here: as the engine is imported) ends it as
    Ctrl-C does later, exit 130 and one line; before, Python printed the traceback of the import under way."""
    code = ("import sys\n"
            "class Stop:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name == 'contextdeck.engine':\n"
            "            raise KeyboardInterrupt\n"
            "sys.meta_path.insert(0, Stop())\n"
            "from contextdeck._cli import main\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert (result.returncode, result.stderr) == (130, "contextdeck: interrupted\n")


def test_validate_tells_on_stderr_before_it_checks_a_large_schema(capsys, tmp_path, monkeypatch) -> None:
    """A schema large enough to take seconds against its metaschema is said on stderr before the wait, once; the
    verdict and stdout are as without it."""
    monkeypatch.setattr(_schemas, "LARGE_SCHEMA_BYTES", 1000)
    schema = {"title": "a large one", "properties": {f"p{n}": {"pattern": f"^{n}-"} for n in range(60)}}
    path = tmp_path / "doc.json"
    path.write_text(json.dumps([{"type": "input", "input": {"p1": "1-a"}, "schema": schema}]), encoding="utf-8")
    code, out, err = run(capsys, "validate", str(path))
    assert code == 0
    assert out == f"{path}: ok (1 messages)\n"
    assert err.count("contextdeck: checking a schema of ") == 1
    assert "MiB against its metaschema first (a large schema takes a while)\n" in err
