"""The order the suite's workers take the tests in (tests/support/pacing.py, applied by
tests/conftest.py in each xdist worker)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import ClassVar

import pytest

from tests import conftest
from tests.support.pacing import paced


def names(
    files: list[str],
    *,
    spans: dict[str, float] | None = None,
    together: frozenset[str] = frozenset(),
) -> list[str]:
    """Each test as ``file:n`` (its place in its file), in the paced order."""
    seen: dict[str, int] = {}
    labels = []
    for name in files:
        labels.append(f"{name}:{seen.get(name, 0)}")
        seen[name] = seen.get(name, 0) + 1
    return [labels[index] for index in paced(files, spans=spans, together=together)]


def test_files_collected_one_after_another_are_interleaved() -> None:
    files = ["a"] * 4 + ["b"] * 4
    assert names(files) == ["a:0", "b:0", "a:1", "b:1", "a:2", "b:2", "a:3", "b:3"]


def test_each_file_spreads_over_the_run_in_proportion_to_its_size() -> None:
    files = ["big"] * 6 + ["small"] * 2
    order = names(files)
    assert order.index("small:0") in range(1, 3)
    assert order.index("small:1") in range(5, 7)
    assert [x for x in order if x.startswith("big")] == [f"big:{n}" for n in range(6)]


def test_a_shorter_span_ends_a_file_early() -> None:
    files = ["long"] * 3 + ["rest"] * 9

    def last_long(order: list[str]) -> int:
        return max(order.index(f"long:{n}") for n in range(3))

    assert last_long(names(files)) == 9
    paced_early = names(files, spans={"long": 0.5})
    assert last_long(paced_early) == 6
    assert paced_early[-5:] == [f"rest:{n}" for n in range(4, 9)]


def test_a_file_kept_together_stays_in_one_block_at_its_start() -> None:
    files = ["browser"] * 3 + ["rest"] * 6
    order = names(files, together=frozenset({"browser"}))
    start = order.index("browser:0")
    assert order[start : start + 3] == ["browser:0", "browser:1", "browser:2"]
    assert start <= 1


def test_every_test_is_there_once() -> None:
    files = ["a"] * 5 + ["b"] * 3 + ["c"] * 7 + ["a"]
    order = paced(files, spans={"c": 0.3}, together={"b"})
    assert sorted(order) == list(range(len(files)))


class _Item:
    """What ``pytest_collection_modifyitems`` reads of a test item."""

    def __init__(self, path: str, *markers: str, scope: str = "function") -> None:
        self.path = Path(path)
        fixture = SimpleNamespace(scope=scope)
        self._fixtureinfo = SimpleNamespace(name2fixturedefs={"world": [fixture]})
        self.markers = {name: getattr(pytest.mark, name).mark for name in markers}
        self.added: list[pytest.MarkDecorator] = []

    def get_closest_marker(self, name: str) -> pytest.Mark | None:
        return self.markers.get(name)

    def add_marker(self, marker: pytest.MarkDecorator) -> None:
        self.added.append(marker)


class _Config:
    """A worker's config: xdist gives each worker ``workerinput`` (and clears ``-n`` there)."""

    workerinput: ClassVar[dict[str, str]] = {"workerid": "gw0"}


def test_the_workers_pace_the_collection_and_the_controller_leaves_it() -> None:
    def collected() -> list[_Item]:
        return [_Item(f"/r/tests/{name}.py") for name in ("a", "a", "b", "b")]

    in_worker = collected()
    first_a, second_a, first_b, second_b = in_worker
    conftest.pytest_collection_modifyitems(_Config(), in_worker)  # type: ignore[arg-type]
    assert in_worker == [first_a, first_b, second_a, second_b]
    alone = collected()
    conftest.pytest_collection_modifyitems(object(), alone)  # type: ignore[arg-type]
    assert [str(item.path) for item in alone] == ["/r/tests/a.py"] * 2 + ["/r/tests/b.py"] * 2


def test_a_real_clis_test_gets_the_longer_timeout_and_ends_early() -> None:
    items = [_Item("/r/tests/e2e/test_x.py", "e2e") for _ in range(2)]
    items += [_Item("/r/tests/test_y.py") for _ in range(40)]
    e2e = items[:2]
    unspanned = paced([str(item.path) for item in items]).index(1)
    conftest.pytest_collection_modifyitems(_Config(), items)  # type: ignore[arg-type]
    for item in e2e:
        assert [(m.name, m.args) for m in item.added] == [("timeout", (conftest.E2E_TIMEOUT_S,))]
    assert all(item.added == [] for item in items if item not in e2e)
    assert items.index(e2e[1]) < unspanned


def test_the_benchmarks_and_the_mutation_check_are_done_by_half_way() -> None:
    for name in ("test_benchmarks", "test_mutations"):
        items = [_Item(f"/r/tests/{name}.py") for _ in range(2)]
        items += [_Item("/r/tests/test_y.py") for _ in range(40)]
        long = items[:2]
        conftest.pytest_collection_modifyitems(_Config(), items)  # type: ignore[arg-type]
        assert max(items.index(item) for item in long) < len(items) // 2, name


def test_a_file_with_a_fixture_set_up_once_per_module_runs_in_one_block() -> None:
    items = [_Item("/r/tests/page/test_p.py", scope="module") for _ in range(3)]
    items += [_Item("/r/tests/test_y.py") for _ in range(6)]
    page = items[:3]
    conftest.pytest_collection_modifyitems(_Config(), items)  # type: ignore[arg-type]
    start = items.index(page[0])
    assert items[start : start + 3] == page
