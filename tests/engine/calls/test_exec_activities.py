"""Activities (SPEC 6.3–6.4): the decorator, the registry, and loading a file the user names."""

import asyncio

import pytest

from contextdeck.engine import Activities, ActivityLoadError, Context, Execution, activity, load_activities


def write(tmp_path, text, name="acts.py"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_decorator_marks_without_registering_anywhere() -> None:
    """@activity returns the function unchanged; a registry picks up its name and timeout."""
    @activity("greetUser", timeout=2)
    def greet(call, tool, context):
        return "hi"

    assert greet(None, None, []) == "hi"
    registry = Activities()
    entry = registry.add(greet)
    assert (entry.name, entry.timeout) == ("greetUser", 2)
    assert "greetUser" in registry
    assert Activities().names == []


def test_adding_an_unmarked_function_needs_a_name() -> None:
    """A plain function without a name given is refused with a clear message."""
    with pytest.raises(ValueError, match="no @activity mark"):
        Activities().add(lambda *a: 1)


def test_file_with_an_activities_dict(tmp_path) -> None:
    """A module-level ACTIVITIES dict names the functions."""
    path = write(tmp_path, "def f(call, tool, context):\n    return 1\nACTIVITIES = {'one': f}\n")
    assert load_activities(path).names == ["one"]


def test_file_with_decorated_functions(tmp_path) -> None:
    """Functions marked with @activity in the file are collected."""
    text = "from contextdeck.engine import activity\n@activity('two')\nasync def g(call, tool, ctx):\n    return 2\n"
    assert load_activities(write(tmp_path, text)).names == ["two"]


def test_loaded_activity_runs_a_call(tmp_path) -> None:
    """A loaded activity runs its tool's calls and receives the tool definition, which reads as its schema (003)
    in the worker process too."""
    text = ("def f(call, tool, context):\n    return tool.name + ':' + tool['type'] + ':' + str(call['n'])\n"
            "ACTIVITIES = {'t': f}\n")
    activities = load_activities(write(tmp_path, text))
    context = Context([{"type": "tool", "tool": {"t": {"type": "object"}}}])
    calls = [{"_tool": "t", "n": 3, "_outputPath": "†state.r"}]
    execution = Execution(context, {"calls": calls}, activities=activities)
    asyncio.run(execution.run())
    assert context.resolve("†state.r").value == "t:object:3"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("def broken(:\n", ":1:12: syntax error: "),  # the place as every command says one
        ("raise RuntimeError('no')\n", "importing it raised RuntimeError: no"),
        ("x = 1\n", "defines no activities"),
        ("ACTIVITIES = [1]\n", "ACTIVITIES must be a dict"),
        ("ACTIVITIES = {'a': 1}\n", "ACTIVITIES['a'] must map a name to a function"),
    ],
)
def test_bad_activity_files_are_refused_with_a_reason(tmp_path, text, reason) -> None:
    """Every way a file can fail to load names the file and the reason."""
    path = write(tmp_path, text)
    with pytest.raises(ActivityLoadError) as caught:
        load_activities(path)
    assert reason in str(caught.value)
    assert str(path) in str(caught.value)


def test_missing_activity_file_is_refused(tmp_path) -> None:
    """A path that is not a file is an ActivityLoadError, not a crash."""
    with pytest.raises(ActivityLoadError, match="no such file"):
        load_activities(tmp_path / "nope.py")
    with pytest.raises(ActivityLoadError, match="a folder, not a Python file"):
        load_activities(tmp_path)


def test_loading_a_document_runs_no_code(tmp_path) -> None:
    """A document that names Python (a tool `_activity`, a call `_activity`) executes nothing by being run."""
    marker = tmp_path / "ran"
    context = Context([
        {"type": "tool", "tool": {"t": {"type": "object", "_activity": f"open('{marker}', 'w')"}}},
        {"type": "plan", "plan": [{"_tool": "u", "_activity": "os.system", "_outputPath": "†state.a", "_output": 1}]},
    ])
    asyncio.run(Execution(context).run())
    assert not marker.exists()
    assert context.resolve("†state.a").value == 1


def greeting(call, tool, context):
    return "hi " + call["who"]


@activity("greet")
def marked_greeting(call, tool, context):
    return "hi " + call["who"]


@pytest.mark.parametrize("given", [{"greet": greeting}, [marked_greeting]], ids=["dict", "marked functions"])
def test_a_run_takes_activities_as_a_dict_or_marked_functions(given) -> None:
    """`activities=` written as a file's ACTIVITIES dict or as @activity functions runs them, rather than
    failing each call inside the engine."""
    context = Context([{"type": "tool", "tool": {"greet": {"type": "object"}}}])
    calls = [{"_tool": "greet", "who": "Maya", "_outputPath": "†state.r"}]
    asyncio.run(Execution(context, {"calls": calls}, activities=given).run())
    assert context.resolve("†state.r").value == "hi Maya"


@pytest.mark.parametrize(
    ("given", "reason"),
    [(greeting, "got function"), ({"greet": 1}, r"activities\['greet'\]: .* got int"), ([1], "got int")],
)
def test_activities_that_are_none_of_those_are_refused_before_the_run(given, reason) -> None:
    """Anything else is a TypeError when the run is made, saying what it got; nothing is written."""
    context = Context([{"type": "tool", "tool": {"greet": {"type": "object"}}}])
    with pytest.raises(TypeError, match=reason):
        Execution(context, {"calls": [{"_tool": "greet", "_outputPath": "†state.r"}]}, activities=given)
    assert len(context) == 1
