"""tests/support/waiting: the one way tests wait looks again soon, then less and less often."""

from __future__ import annotations

import itertools

import pytest

from tests.support.waiting import POLL_MAX_S, POLL_S, pauses, until_sync


def test_the_pauses_grow_by_half_up_to_the_longest() -> None:
    first = list(itertools.islice(pauses(), 8))
    assert first[0] == POLL_S
    assert all(b == min(a * 1.5, POLL_MAX_S) for a, b in itertools.pairwise(first))
    assert first[-1] == POLL_MAX_S
    assert list(itertools.islice(pauses(0.5), 3)) == [0.5, 0.5, 0.5]  # a longer first is kept


def test_until_returns_the_first_truthy_value_and_names_what_it_gave_up_on() -> None:
    looks = iter([None, 0, "", "found"])
    assert until_sync(lambda: next(looks), seconds=5) == "found"
    with pytest.raises(AssertionError, match=r"gave up waiting for the moon after 0\.05 s"):
        until_sync(lambda: None, seconds=0.05, what="the moon")
