"""Properties of ids and history pages that must hold for any sequence, not just examples."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from discord_mcp.emulator.models import SnowflakeGenerator, snowflake_time_ms
from discord_mcp.emulator.state import State


@given(st.lists(st.floats(min_value=1.5e9, max_value=2.5e9), min_size=1, max_size=50))
def test_snowflakes_only_increase_even_when_the_clock_steps_back(times: list[float]) -> None:
    generator = SnowflakeGenerator()

    ids = [int(generator.next(t)) for t in times]

    assert ids == sorted(set(ids))


@given(st.floats(min_value=1.5e9, max_value=2.5e9))
def test_a_snowflake_encodes_its_creation_millisecond(now: float) -> None:
    assert snowflake_time_ms(SnowflakeGenerator().next(now)) == int(now * 1000)


def _state_with(count: int) -> tuple[State, list[str]]:
    state = State()
    ids = []
    for n in range(count):
        message, _ = state.create_message(state.channel.id, state.owner.id, {"content": str(n)})
        ids.append(message.id)
    return state, ids


@given(count=st.integers(0, 60), limit=st.integers(1, 100))
def test_paging_back_with_before_visits_every_message_once_newest_first(
    count: int, limit: int
) -> None:
    state, ids = _state_with(count)
    seen: list[str] = []
    before: int | None = None

    for _ in range(count + 1):
        page = state.list_messages(state.channel.id, limit=limit, before=before)
        if not page:
            break
        assert len(page) <= limit
        seen += [m.id for m in page]
        before = int(page[-1].id)

    assert seen == list(reversed(ids))


@given(count=st.integers(0, 60), limit=st.integers(1, 100))
def test_paging_forward_with_after_visits_every_message_once(count: int, limit: int) -> None:
    state, ids = _state_with(count)
    seen: list[str] = []
    after = 0

    for _ in range(count + 1):
        page = state.list_messages(state.channel.id, limit=limit, after=after)
        if not page:
            break
        # Each page is newest first; the next page starts after its newest message.
        seen += [m.id for m in reversed(page)]
        after = int(page[0].id)

    assert seen == ids


@given(count=st.integers(1, 60), pick=st.integers(0, 59), limit=st.integers(1, 100))
def test_around_is_a_contiguous_newest_first_window_holding_the_message(
    count: int, pick: int, limit: int
) -> None:
    state, ids = _state_with(count)
    index = pick % count
    target = ids[index]

    page = [m.id for m in state.list_messages(state.channel.id, limit=limit, around=int(target))]

    # Up to half the limit (rounded down) on each side, and the target itself.
    newer = min(limit // 2, count - 1 - index)
    older = min(limit // 2, index)
    assert len(page) == older + 1 + newer
    assert len(page) <= limit + 1
    assert target in page
    oldest_first = list(reversed(page))
    start = ids.index(oldest_first[0])
    assert oldest_first == ids[start : start + len(page)]
