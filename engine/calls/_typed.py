"""Typed activities (002, 003): a function whose parameters and return type are annotated (pydantic models or
plain types) is its own tool schema, and its calls are validated against it.

Two typed forms, beside the classic `fn(call, tool, context)`:
- `fn(params: Model, [tool, [context]]) -> R`: the first parameter is a pydantic model of the call's parameters
  (those after it, if any, unannotated or named `tool` and `context`);
- `fn(a: int, b: str = "x") -> R`: every parameter annotated (none named `call`): the call's parameters by name.
A classic function may still annotate its return type; a function that is none of the three is refused. The tool
schema is the parameters' JSON Schema, the docstring as its description, and `_output` from the return type (none
for `None` or no annotation).
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pydantic
import pydantic.fields  # loaded now: see below
import pydantic.functional_validators
from pydantic import BaseModel, TypeAdapter

from ..document._validate import json_path

# pydantic loads its parts when first named (`from pydantic import Field`). Once Qt is loaded, PySide's import
# hook reads each new module's source, which asks the half-imported pydantic for `__wrapped__` and fails with a
# circular import; an activities file importing pydantic in the window would hit it. So they load with the engine.

CLASSIC_FIRST = "call"
_TYPED = "__contextdeck_typed__"  # set on the function `typed` returns, so it is never wrapped twice


class ParametersError(ValueError):
    """A call's parameters that do not meet the typed activity's annotations; the error type is `parameters`."""

    error_type = "parameters"


class ResultError(ValueError):
    """A result that does not meet the typed activity's return type; the error type is `output`."""

    error_type = "output"


@dataclass(frozen=True)
class Typing:
    """What a typed activity's annotations say: how it takes the call, and its tool schema."""

    form: str  # "model" (a model of the parameters first), "keywords" (parameters by name), "classic"
    parameters: type[BaseModel] | None  # the model the call's parameters are validated into
    returns: TypeAdapter[Any] | None  # the return type, None when not annotated (or None)
    schema: dict[str, Any]  # the tool schema: parameters, description, `_output`
    extra: int = 0  # "model": how many of (tool, context) it takes after the parameters
    returns_none: bool = False  # annotated `-> None`: a result other than None breaks it


def typing_of(fn: Callable[..., Any]) -> Typing | None:
    """What `fn`'s annotations say, or None for a classic activity without a return annotation.

    Raises TypeError when an annotation cannot be made into a JSON Schema (the loader names the activity).
    """
    try:
        signature = inspect.signature(fn)
        hints = typing.get_type_hints(fn, include_extras=True)  # keeps Annotated[..., Field(...)]
    except NameError as error:
        if next(iter(signature.parameters), None) == CLASSIC_FIRST:  # may name what only a type checker imports
            return None
        raise TypeError(f"{error} (an annotation names what the file does not define)") from None
    except (TypeError, ValueError):
        return None
    positional = [p for p in signature.parameters.values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    returned = hints.get("return", inspect.Signature.empty)
    returns = None if returned is inspect.Signature.empty or _is_none(returned) else TypeAdapter(returned)
    first = hints.get(positional[0].name) if positional else None
    # The model form passes the tool and the context after the model: a parameter after it that is annotated
    # and not named so is the call's, as in the keywords form (else it was handed the tool).
    takes_tool = all(p.name in ("tool", "context") or p.name not in hints for p in positional[1:3]) \
        and len(positional) <= 3
    if inspect.isclass(first) and issubclass(first, BaseModel) and takes_tool:
        form, parameters, extra = "model", first, len(positional) - 1
    elif ((positional and positional[0].name != CLASSIC_FIRST) or not signature.parameters) and all(
            p.name in hints for p in positional):  # (a function of no parameters is called with none)
        hidden = next((p.name for p in positional if p.name.startswith("_")), None)
        if hidden is not None:  # pydantic would leave it out of the schema, and every call would lack it
            raise TypeError(f"parameter {hidden!r} starts with '_', which a call's keys use for its metadata: no "
                            "call can give it; rename it")
        fields: dict[str, Any] = {
            p.name: (hints[p.name], ... if p.default is inspect.Parameter.empty else p.default) for p in positional}
        form, parameters, extra = "keywords", pydantic.create_model(f"{fn.__name__}_parameters", **fields), 0
    elif returns is not None:
        form, parameters, extra = "classic", None, 0
    else:
        return None
    return Typing(form, parameters, returns, _tool_schema(fn, parameters, returns), extra,
                  _is_none(returned))


def _tool_schema(fn: Callable[..., Any], parameters: type[BaseModel] | None,
                 returns: TypeAdapter[Any] | None) -> dict[str, Any]:
    own = _inlined(parameters.model_json_schema(mode="validation")) if parameters is not None else {}
    properties: dict[str, Any] = dict(own.get("properties", {}))
    if returns is not None:
        properties["_output"] = _inlined(returns.json_schema(mode="serialization"))
    schema: dict[str, Any] = {"type": "object"}
    description = inspect.getdoc(fn)
    if description:
        schema["description"] = description
    schema["properties"] = properties
    if own.get("required"):
        schema["required"] = own["required"]
    if own.get("additionalProperties") is False:
        schema["additionalProperties"] = False
    return schema


def _inlined(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with its `$defs` references written in place and pydantic's titles left out, so that any
    part of it (`_output`, one parameter) stands alone. A recursive model cannot be inlined: TypeError."""
    definitions = schema.get("$defs", {})

    def inline(node: Any, seen: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [inline(item, seen) for item in node]
        if not isinstance(node, dict):
            return node
        reference = node.get("$ref")
        if isinstance(reference, str) and reference.startswith("#/$defs/"):
            name = reference.removeprefix("#/$defs/")
            if name in seen:
                raise TypeError(f"the model {name} refers to itself: a tool schema cannot say that")
            return inline({**definitions[name], **{k: v for k, v in node.items() if k != "$ref"}}, (*seen, name))
        return {key: inline(value, seen) for key, value in node.items()
                if key != "$defs" and not (key == "title" and isinstance(value, str))}

    result: dict[str, Any] = inline(schema, ())
    return result


def _located(error: pydantic.ValidationError) -> str:
    """Each of pydantic's problems at its JSON path: `$.order.amount: Input should be a valid number`."""
    return "; ".join(f"{json_path(problem['loc'])}: {problem['msg']}" for problem in error.errors(include_url=False))


def _returns_none(fn: Callable[..., Any]) -> bool:
    """Whether `fn` is annotated `-> None`."""
    try:
        return _is_none(inspect.signature(fn).return_annotation)
    except (TypeError, ValueError):
        return False


def _is_none(returned: Any) -> bool:
    """Whether a return annotation says `-> None` (as written, or as the text `from __future__ import annotations`
    keeps)."""
    return returned is None or returned is type(None) or returned == "None"


def _not_none(name: str, value: Any) -> Any:
    if value is not None:  # as a result breaking any other return type
        raise ResultError(f"the result of {name!r} does not meet its return type: it is annotated -> None, but "
                          f"returned {_glimpse(value)}")
    return value


def _none_checked(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """A classic activity annotated `-> None`, whose result is checked as a typed one's is."""
    return _wrapped(fn, lambda call, tool, context: ((call, tool, context), {}),
                    lambda value: _not_none(name, value), None)


def _wrapped(fn: Callable[..., Any], arguments: Callable[[Any, Any, Any], tuple[tuple[Any, ...], dict[str, Any]]],
             result: Callable[[Any], Any], found: Typing | None) -> Callable[..., Any]:
    """`fn` called as a classic activity `(call, tool, context)`, sync or async as `fn` is: `arguments` gives what
    it is called with, `result` checks what it returns; marked with `found` so that it is not wrapped again."""
    if inspect.iscoroutinefunction(fn):
        @functools.wraps(fn)
        async def run_async(call: Any, tool: Any, context: Any) -> Any:
            args, kwargs = arguments(call, tool, context)
            return result(await fn(*args, **kwargs))

        setattr(run_async, _TYPED, found)
        return run_async

    @functools.wraps(fn)
    def run(call: Any, tool: Any, context: Any) -> Any:
        args, kwargs = arguments(call, tool, context)
        return result(fn(*args, **kwargs))

    setattr(run, _TYPED, found)
    return run


def _glimpse(value: Any) -> str:
    """A returned value in short, for a message: its type and the start of its text."""
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 60 else text[:57] + '...'}"


def _takes_a_call(name: str, fn: Callable[..., Any]) -> None:
    """A classic activity is called as `fn(call, tool, context)`: one that cannot be is refused when it is registered,
    rather than failing every call with Python's TypeError."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return  # (a builtin that does not say: its calls will tell)
    try:
        signature.bind(None, None, None)
    except TypeError:
        raise TypeError(f"activity {name!r}: {getattr(fn, '__name__', 'it')}{signature} cannot be called as "
                        "(call, tool, context): take those, or annotate every parameter") from None


def typed(name: str, fn: Callable[..., Any]) -> tuple[Callable[..., Any], Typing | None]:
    """`fn` as a classic activity `(call, tool, context)` that validates its parameters and result against its
    annotations (and turns a returned model into JSON), with what the annotations say; `fn` itself when it
    has none."""
    if hasattr(fn, _TYPED):
        return fn, getattr(fn, _TYPED)
    try:
        found = typing_of(fn)
    except (TypeError, pydantic.PydanticUserError, pydantic.PydanticSchemaGenerationError) as error:
        first = str(error).split("\n\n", 1)[0]  # pydantic's message goes on with advice and a link
        raise TypeError(f"activity {name!r}: its annotations cannot be a tool schema: {first}") from None
    if found is None or found.form == "classic":
        _takes_a_call(name, fn)
    if found is None:
        return (_none_checked(name, fn) if _returns_none(fn) else fn), None

    def arguments(call: Any, tool: Any, context: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
        if found.parameters is None:
            return (call, tool, context), {}
        given = {key: value for key, value in call.items() if not key.startswith("_")}
        try:
            model = found.parameters.model_validate(given)
        except pydantic.ValidationError as error:
            raise ParametersError(f"invalid parameters for {name!r}: {_located(error)}") from None
        if found.form == "model":
            return (model, tool, context)[: 1 + found.extra], {}
        return (), {key: getattr(model, key) for key in type(model).model_fields}

    def result(value: Any) -> Any:
        if found.returns is None:
            return _not_none(name, value) if found.returns_none else value
        try:
            checked = found.returns.validate_python(value)
        except pydantic.ValidationError as error:
            raise ResultError(f"the result of {name!r} does not meet its return type: {_located(error)}") from None
        try:
            return found.returns.dump_python(checked, mode="json")
        except ValueError as error:  # bytes that are not UTF-8, a value pydantic cannot serialise
            raise ResultError(f"the result of {name!r} cannot be written as JSON: {type(error).__name__}: "
                              f"{error}") from None

    return _wrapped(fn, arguments, result, found), found
