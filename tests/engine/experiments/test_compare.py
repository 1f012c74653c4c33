"""Which cases of an earlier experiment a later one is compared with: all over one dataset, else those whose ids
both have, said."""

from pathlib import Path

from contextdeck.engine.experiments import Case, Over, compared, over_cases, over_results, same_dataset


def results(dataset: str | None, *keys: tuple[object, int]) -> list[dict[str, object]]:
    """Result lines of cases (id, line), each naming `dataset` (None: written before results named it)."""
    named = {} if dataset is None else {"dataset": dataset}
    return [{"id": case_id, "line": line, **named, "status": "finished"} for case_id, line in keys]


def test_the_same_file_with_cases_in_common_is_one_dataset() -> None:
    """A cancelled run has fewer cases, a case added since is new, one removed gone: still one dataset, compared
    whole."""
    later = Over("/d/data.jsonl", frozenset({"a", "b", "line-3"}), frozenset({"a", "b"}))
    earlier = results("/d/data.jsonl", ("a", 1), (None, 3), ("removed", 4))
    assert same_dataset(over_results(earlier), later)
    assert compared("before.jsonl", earlier, later).results == earlier
    assert compared("before.jsonl", earlier, later).differs is None


def test_another_file_is_compared_only_where_the_ids_agree_and_says_so() -> None:
    """line-3 of another dataset is another case: left out, as is an id the later one lacks."""
    later = over_cases(Path("/d/other.jsonl"), [Case(1, "a", {}), Case(2, None, {}), Case(3, None, {})])
    earlier = results("/d/data.jsonl", ("a", 1), ("z", 2), (None, 3))
    comparison = compared("before.jsonl", earlier, later)
    assert [result["id"] for result in comparison.results] == ["a"]
    assert comparison.differs == ("before.jsonl is over another dataset (data.jsonl, not other.jsonl): only the 1 "
                                  "case(s) whose ids both have are compared")


def test_the_same_file_rewritten_with_other_cases_says_its_cases_differ() -> None:
    """No case in common: nothing compared, and said."""
    later = Over("/d/data.jsonl", frozenset({"c", "d"}), frozenset({"c", "d"}))
    comparison = compared("before.jsonl", results("/d/data.jsonl", ("a", 1), ("b", 2)), later)
    assert comparison.results == []
    assert comparison.differs is not None
    assert "over other cases than data.jsonl holds" in comparison.differs


def test_two_files_of_one_name_are_told_apart_by_their_folders() -> None:
    later = Over("/new/data.jsonl", frozenset({"a"}), frozenset({"a"}))
    comparison = compared("b.jsonl", results("/old/data.jsonl", ("a", 1)), later)
    assert comparison.differs is not None
    assert "another dataset (/old/data.jsonl, not /new/data.jsonl)" in comparison.differs


def test_results_that_name_no_dataset_are_judged_by_their_cases() -> None:
    """Written before results named their dataset: the cases decide."""
    later = Over("/d/data.jsonl", frozenset({"a", "b"}), frozenset({"a", "b"}))
    assert same_dataset(over_results(results(None, ("a", 1), ("b", 2))), later)
    assert not same_dataset(over_results(results(None, ("x", 1))), later)
