"""A solution's advice (017) judged one way: `validate` (a document's solution), `run` (`solution_refusals`) and the
turn check (a turn typed or given) ask this one piece, each at its own root (`solution`, `$`)."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from ..calls._tools import solution_problem
from ..document import _json
from ..document._validate import schema_violations
from ..document._view import Messages
from ..resolve._resolution import Diagnostic
from ._request import advisors_of, consulted_now, later_request, survey


def solution_refusals(context: Messages, solution: Any) -> list[Diagnostic]:
    """What refuses a document's own solution before anything of it runs: no solution at all (`solution_problem`),
    or advice that `validate` calls an error (017), as the turn check refuses a turn typed with it. `run`, the loop
    and a delegate's call ask this; `validate` says the same problems."""
    unusable = solution_problem(solution)
    if unusable is not None:
        return [unusable]
    if not isinstance(solution, dict) or "advisors" not in solution:
        return []  # no advice: nothing more to judge
    found = advice_problems(context, solution, advisors_of(context)[0], "solution")
    return [problem for problem in found if problem.severity == "error"]


def advice_problems(context: Messages, solution: Any, advisors: list[dict[str, Any]], root: str) -> list[Diagnostic]:
    """Each advice in the solution against its own advisor's schema (017), never another's; an instanced advisor's
    advice names one of the context's instances (`isInstanced`); votes are inline JSON. An advisor consulted in this
    request that gives no advice is a warning (as `meta`, `calls` and `output`, a person's turn may leave advice
    out: the engine runs without it). `advisors`: the context's (`advisors_of`)."""
    if not isinstance(solution, dict):
        return []  # an array of calls has no room for advice
    advice = solution.get("advisors")
    if advice is not None and not isinstance(advice, list):
        return [Diagnostic(None, f"{root}.advisors", "must be an array of advice")]
    advice = advice or []
    by_id = {advisor["id"]: advisor for advisor in advisors}
    problems: list[Diagnostic] = []
    # Read once each, and only when an advice needs them: a look at every message is a pause in the window.
    later = cache(lambda: later_request(context, len(context)))
    instances = cache(lambda: survey(context, len(context)).instances)
    for number, item in enumerate(advice):
        where = f"{root}.advisors[{number}]"
        advisor = by_id.get(item.get("id")) if isinstance(item, dict) else None
        if advisor is None:
            name = item.get("id") if isinstance(item, dict) else None
            problems.append(Diagnostic(None, where, f"no advisor has the id {name!r}"))
            continue
        votes = item.get("calls")
        if votes is not None and not _is_inline_json_object(votes):
            problems.append(Diagnostic(None, where + ".calls", "votes must be inline JSON: a string holding an object"))
        if not consulted_now(advisor, later()):
            on = advisor.get("on")
            when = ("on demand, through ConsultAdvisor" if on is None else "at the start only" if on == "start"
                    else f"never: its 'on' is {on!r}")
            problems.append(Diagnostic(None, where, f"advisor {advisor['id']!r} gives no advice in this request: "
                                                    f"it is consulted {when} (017)"))
            continue
        if advisor.get("isInstanced") is True:
            problems.extend(_advice_instance(instances(), item.get("_instance"), where))
        own = {key: value for key, value in item.items() if key not in ("id", "calls", "_instance")}
        if isinstance(advisor.get("schema"), dict):
            problems.extend(schema_violations(advisor["schema"], own, None, where))
    if advisors:
        problems += _unadvised(later(), instances, advice, advisors, root)
    return problems


def _unadvised(later: bool, instances: Callable[[], list[str]], advice: list[Any], advisors: list[dict[str, Any]],
               root: str) -> list[Diagnostic]:
    """Warnings for the advisors consulted in this request that give the solution no advice (017: their advice
    comes first, every request for `request`), and for each instance an instanced one leaves without."""
    given = {(item.get("id"), None if item.get("_instance") is None else str(item.get("_instance")))
             for item in advice if isinstance(item, dict)}
    problems: list[Diagnostic] = []
    for advisor in advisors:
        if not consulted_now(advisor, later):
            continue
        name = advisor["id"]
        if advisor.get("isInstanced") is True:
            missing = [instance for instance in instances() if (name, instance) not in given]
            problems += [Diagnostic(None, f"{root}.advisors", f"advisor {name!r} gives no advice for instance "
                                                              f"{instance}: it advises each instance (017)", "warning")
                         for instance in missing]
        elif not any(item[0] == name for item in given):
            problems.append(Diagnostic(None, f"{root}.advisors", f"advisor {name!r} gives no advice: it is "
                                                                 "consulted in this request (017)", "warning"))
    return problems


def _advice_instance(instances: list[str], instance: Any, where: str) -> list[Diagnostic]:
    if instance is None:
        return [Diagnostic(None, where, "an instanced advisor's advice names its _instance")]
    if str(instance) not in instances:
        return [Diagnostic(None, f"{where}._instance", f"{instance!r} is not one of the context's instances "
                                                       f"{instances}")]
    return []


def _is_inline_json_object(text: Any) -> bool:
    if not isinstance(text, str):
        return False
    try:
        return isinstance(_json.parse(text.encode("utf-8")), dict)
    except _json.JSONSyntaxError:
        return False
