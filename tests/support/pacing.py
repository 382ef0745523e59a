"""The order the workers take the tests in (tests/conftest.py): every file at the same pace.

pytest-xdist (``--dist loadgroup``, where every test is its own unit) hands the tests out in
collection order, the next one to whichever worker runs short, so the tests running at any
moment are neighbours in that order. Collected file by file, the neighbours were one file's
tests: the dozens of ``tests/hooks/test_fail_closed.py`` that each wait out a hanging Discord,
or every benchmark at once, held all four workers waiting while a core idled (a third of the
CPU unused for minutes, measured). :func:`paced` spreads each file's tests over the run, so
that neighbours come from many files and the waits of one fill with the work of others.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set

FULL_SPAN = 1.0


def paced(
    files: Sequence[str],
    *,
    together: Set[str] = frozenset(),
    spans: Mapping[str, float] | None = None,
) -> list[int]:
    """The indices of ``files`` (one entry a test: the file it is in) in the paced order.

    Each file's tests keep their order and are spread evenly over its span of the run: the
    ``n``-th of ``k`` tests sits at ``(n + 1/2) / k`` of the span (``spans[file]``, a fraction
    of the run from its start; :data:`FULL_SPAN` when not given). A shorter span finishes a
    file early: for files of long tests, which would otherwise be the run's last minutes on one
    worker. A file in ``together`` (a fixture set up once per module, such as a browser) stays
    in one block, at the place of its first test. Ties keep the collection order.
    """
    spans = spans or {}
    positions: dict[str, list[int]] = {}
    for index, name in enumerate(files):
        positions.setdefault(name, []).append(index)
    key: dict[int, float] = {}
    for name, indices in positions.items():
        span = spans.get(name, FULL_SPAN)
        count = len(indices)
        for n, index in enumerate(indices):
            at = 0 if name in together else n
            key[index] = (at + 0.5) / count * span
    return sorted(range(len(files)), key=lambda index: (key[index], index))
