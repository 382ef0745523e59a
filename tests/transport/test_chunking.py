"""Long text is split into messages Discord accepts, without breaking code blocks."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from discord_mcp.transport.chunking import MESSAGE_LIMIT, split_message


def fences_balanced(chunk: str) -> bool:
    return sum(1 for line in chunk.split("\n") if line.strip().startswith("```")) % 2 == 0


def test_short_text_is_one_message() -> None:
    assert split_message("hello") == ["hello"]


def test_blank_text_is_no_message() -> None:
    assert split_message("  \n\n") == []


def test_prefers_line_breaks() -> None:
    text = "\n".join(f"line {i:04d} " + "x" * 40 for i in range(100))
    chunks = split_message(text)
    assert len(chunks) > 1
    for chunk in chunks:
        assert len(chunk) <= MESSAGE_LIMIT
        assert chunk.startswith("line ")
        assert chunk.rstrip().endswith("x")


def test_code_block_is_closed_and_reopened_with_its_language() -> None:
    code = "\n".join(f"value_{i} = {i}" for i in range(400))
    chunks = split_message(f"Result:\n```python\n{code}\n```\nDone.")
    assert len(chunks) > 1
    for chunk in chunks:
        assert len(chunk) <= MESSAGE_LIMIT
        assert fences_balanced(chunk), chunk[:80]
    assert chunks[1].startswith("```python\n")
    assert chunks[-1].rstrip().endswith("Done.")


def test_text_without_spaces_is_cut_hard() -> None:
    chunks = split_message("y" * 4500)
    assert [len(c) for c in chunks] == [2000, 2000, 500]


_plain = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="`"), max_size=300
)


def _squash(text: str) -> str:
    return "".join(text.split())


def _without_fence_lines(text: str) -> str:
    return _squash("\n".join(ln for ln in text.split("\n") if not ln.strip().startswith("```")))


@settings(max_examples=150, deadline=None)
@given(st.lists(_plain, max_size=30).map("\n".join), st.integers(min_value=64, max_value=600))
def test_chunks_fit_and_keep_every_character(text: str, limit: int) -> None:
    chunks = split_message(text, limit)
    assert all(len(chunk) <= limit for chunk in chunks)
    assert _squash("".join(chunks)) == _squash(text)


_short_line = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="`\n"), max_size=20
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.one_of(_short_line, st.sampled_from(["```", "```js"])), max_size=200),
    st.integers(min_value=64, max_value=400),
)
def test_code_fences_stay_balanced_in_every_message_but_a_dangling_last(
    lines: list[str], limit: int
) -> None:
    text = "\n".join(lines)
    chunks = split_message(text, limit)
    assert all(len(chunk) <= limit for chunk in chunks)
    assert all(fences_balanced(chunk) for chunk in chunks[:-1])
    # Only fence lines are added: everything else arrives, in order.
    assert _without_fence_lines("\n".join(chunks)) == _without_fence_lines(text)
