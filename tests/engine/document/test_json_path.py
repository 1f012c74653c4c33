"""JSON paths in problems: written unambiguously, read back, and ordered as the value is laid out."""

from hypothesis import given
from hypothesis import strategies as st

from contextdeck.engine import json_path_parts
from contextdeck.engine.document._validate import json_path, path_order


@given(st.lists(st.one_of(st.text(), st.integers(min_value=0, max_value=10**6))))
def test_a_written_path_reads_back_as_its_parts(parts: list[str | int]) -> None:
    assert json_path_parts(json_path(parts)) == tuple(parts)


def test_plain_keys_keep_the_dot_and_others_are_quoted() -> None:
    assert json_path(["calls", 0, "text"]) == "$.calls[0].text"
    assert json_path(["a.b", "", "x y", 'q"']) == '$["a.b"][""]["x y"]["q\\""]'
    assert json_path_parts("calls[0]") is None  # not a path: no leading $
    assert json_path_parts("$.a[") is None


def test_paths_sort_as_the_value_is_laid_out() -> None:
    paths = ["$.calls[10]", "$.calls[2].text", "$.calls[2]", "$.b", "$.a"]
    assert sorted(paths, key=path_order) == ["$.a", "$.b", "$.calls[2]", "$.calls[2].text", "$.calls[10]"]
