"""The order the suite's workers take the tests in (tests/support/pacing.py)."""

from __future__ import annotations

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
