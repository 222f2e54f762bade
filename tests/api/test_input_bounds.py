"""The variables walk behind InputListBound: paths, bounds, and no recursion."""

from __future__ import annotations

from typing import Any

import pytest

from api.graphql.core.input_bounds import longest_list_over


@pytest.mark.parametrize(
    ("variables", "expected"),
    [
        ({"input": {"decisions": ["a"] * 3}}, None),
        ({"input": {"decisions": ["a"] * 4}}, ("input.decisions", 4)),
        ({"ids": [["x"], ["x", "y", "z", "w"]]}, ("ids[1]", 4)),
        ({"input": {"rows": [{"tags": list(range(5))}]}}, ("input.rows[0].tags", 5)),
        ({"n": 10, "s": "a long string is not a list" * 100}, None),
    ],
)
def test_the_first_list_over_the_bound_is_named_by_its_path(
    variables: dict[str, Any], expected: tuple[str, int] | None
) -> None:
    assert longest_list_over(variables, 3) == expected


def test_deep_nesting_is_walked_without_recursion() -> None:
    deep: Any = ["a", "b", "c", "d"]
    for _ in range(100_000):
        deep = {"x": deep}
    found = longest_list_over({"v": deep}, 3)
    assert found is not None
    assert found[1] == 4
    assert found[0] == "v" + ".x" * 100_000
