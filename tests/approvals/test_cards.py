"""The approval card: what it shows, how long input is cut, the buttons, the outcome."""

from __future__ import annotations

import dataclasses
from typing import Any

from discord_mcp.approvals import cards
from discord_mcp.approvals.kind import APPROVAL
from discord_mcp.approvals.request import ToolRequest, describe
from discord_mcp.decisions.model import Decision


def approval(request: ToolRequest, **changes: Any) -> Decision:
    document = {
        **request.to_json(),
        "action": dataclasses.asdict(describe(request)),
        "wait_seconds": 600,
        "resume": False,
    }
    decision = Decision(
        id="20261123-120000-abcdef",
        project="proj",
        session="sess1234",
        question="Run: x",
        context=None,
        options=cards.OPTIONS,
        channel_id="1",
        thread_id="2",
        card_message_id="3",
        thread_url="",
        asked_at="2026-11-23T12:00:00.000+00:00",
        kind="approval",
        approval=document,
    )
    return decision.replace(**changes)


def bash(command: str) -> ToolRequest:
    return ToolRequest("claude", "Bash", {"command": command}, "sess", cwd="/home/me/app")


def test_the_card_names_the_command_project_directory_and_session() -> None:
    text = cards.render_card(approval(bash("make deploy")), ["42"], buttons=True)
    assert "```sh\nmake deploy\n```" in text
    assert "`proj`" in text
    assert "`/home/me/app`" in text
    assert "sess1234" in text
    assert "claude" in text
    for label in ("Allow once", "Allow for this session", "Deny", "Deny with a note…"):
        assert label in text
    assert "<@42>" in text
    assert "decision `20261123-120000-abcdef`" in text  # how a lost card is found again
    assert (
        "covers `make deploy` with further arguments that are words or relative paths, and no "
        "options (never with "
        "environment variables, chaining, redirections, substitutions or anything flagged "
        "risky) in this session only"
    ) in text


def test_a_risky_command_is_flagged() -> None:
    text = cards.render_card(approval(bash("git push --force")), ["42"])
    assert "Risky:** force push" in text


def test_long_input_is_cut_visibly_and_the_card_fits_in_one_message() -> None:
    script = "\n".join(f"echo line {n}" for n in range(150))
    text = cards.render_card(approval(bash(script)), ["42"], buttons=True)
    assert len(text) <= 2000
    assert "echo line 0" in text
    assert "more lines" in text
    assert "Allow once" in text  # the footer survives


def test_a_very_long_single_line_says_how_much_was_cut() -> None:
    text = cards.render_card(approval(bash("echo " + "x" * 5000)), ["42"])
    assert len(text) <= 2000
    assert "more characters" in text


def test_agent_content_cannot_close_the_code_block() -> None:
    text = cards.render_card(approval(bash("echo ```\n**bold** <@&123> @everyone")), ["42"])
    body = text.split("```sh\n", 1)[1]
    inner = body.split("\n```", 1)[0]
    assert "```" not in inner
    assert "@everyone" in inner  # shown, but inside the block (and sent with parse: [])


def test_the_buttons_carry_the_decision_and_the_contract_labels() -> None:
    [row] = cards.components("20261123-120000-abcdef")
    labels = [b["label"] for b in row["components"]]
    assert labels == ["Allow once", "Allow for this session", "Deny", "Deny with a note…"]
    assert row["components"][0]["custom_id"] == "dmcp:20261123-120000-abcdef:allow"
    assert {b["custom_id"].split(":")[2] for b in row["components"]} == {
        "allow",
        "session",
        "deny",
        "note",
    }


def test_a_card_nobody_answered_in_time_says_so_and_stays_answerable() -> None:
    text = cards.render_card(
        approval(bash("make"), gave_up_at="2026-11-23T12:10:00+00:00"), ["42"], buttons=True
    )
    assert "No one answered within 10 minutes" in text
    assert "not as a refusal" in text


def test_the_final_card_shows_who_answered_and_how() -> None:
    allowed = approval(
        bash("make"),
        status="answered",
        answer="allow",
        scope="session",
        answered_by="42",
        via="button",
        answered_at="2026-11-23T12:01:00+00:00",
    )
    assert "Allow for this session" in cards.render_final(allowed)
    assert "<@42>" in cards.render_final(allowed)
    denied = allowed.replace(answer="deny", scope=None, note="use make clean", via="modal")
    text = cards.render_final(denied)
    assert "Denied" in text
    assert "use make clean" in text
    terminal = approval(bash("make"), status="cancelled", cancel_reason="Answered at the terminal")
    assert "Answered at the terminal" in cards.render_final(terminal)


def test_a_file_change_shows_the_file_and_its_diff(tmp_path: Any) -> None:
    request = ToolRequest(
        "gemini", "write_file", {"file_path": str(tmp_path / "a.txt"), "content": "hi\n"}, "s"
    )
    text = cards.render_card(approval(request), ["42"])
    assert "```diff" in text
    assert "+hi" in text
    assert "a.txt" in text


def test_an_approval_card_names_its_machine_on_its_buttons_and_its_marker() -> None:
    """Issue 27: with several machines on one bot, the card says where it was asked, and only
    that machine answers its buttons; a card from before machines had names shows none."""
    decision = approval(bash("make deploy"), machine="build-server")
    [row] = APPROVAL.components(decision)
    assert {b["custom_id"].rsplit(":", 1)[1] for b in row["components"]} == {"build-server"}
    card = cards.render_card(decision, ["42"], buttons=True)
    assert "decision `20261123-120000-abcdef` · on `build-server`" in card
    final = cards.render_final(decision.replace(status="cancelled"))
    assert "· cancelled · on `build-server`" in final
    old = approval(bash("make deploy"))
    assert cards.render_card(old, ["42"], buttons=True).endswith(
        "decision `20261123-120000-abcdef`"
    )
    [old_row] = APPROVAL.components(old)
    assert old_row["components"][0]["custom_id"] == "dmcp:20261123-120000-abcdef:allow"


def test_waits_are_said_as_people_say_them_never_zero_and_never_to_the_ten_thousandth() -> None:
    """Issue 32: cards said "waits up to 26.9249 seconds" and "within 0 seconds"."""

    def said(seconds: float, lang: str = "en") -> str:
        document = {**approval(bash("make")).approval, "wait_seconds": seconds}  # type: ignore[dict-item]
        return cards.wait_words(approval(bash("make"), approval=document), lang)

    assert said(26.9249) == "27 seconds"
    assert said(0) == "less than a second"
    assert said(0.3) == "less than a second"
    assert said(1.2) == "1 second"
    assert said(59.6) == "1 minute"
    assert said(90) == "1.5 minutes"
    assert said(125.7) == "2 minutes"
    assert said(600) == "10 minutes"
    assert said(5999) == "100 minutes"
    assert said(7200) == "2 hours"
    assert said(99_000) == "27.5 hours"
    assert said(26.9249, "ko") == "27초"
    assert "0" not in said(0, "ja")
    text = cards.render_card(
        approval(
            bash("make"), approval={**approval(bash("make")).approval, "wait_seconds": 26.9249}
        ),  # type: ignore[dict-item]
        ["42"],
        buttons=True,
    )
    assert "waits up to 27 seconds" in text
    assert "26.9249" not in text
