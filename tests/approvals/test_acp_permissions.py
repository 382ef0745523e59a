"""An ACP agent's permission options on the approval card, and the answer back (fail closed)."""

from __future__ import annotations

from discord_mcp.approvals.acp import choice, tool_request
from discord_mcp.approvals.acp_parts import card_options
from discord_mcp.approvals.service import Outcome
from discord_mcp.decisions.model import Decision
from discord_mcp.runs.contract import PermissionAsk, PermissionOption

GEMINI = (
    PermissionOption("proceed_always", "Allow for this session", "allow_always"),
    PermissionOption("proceed_once", "Allow", "allow_once"),
    PermissionOption("cancel", "Reject", "reject_once"),
)
CLAUDE = (
    PermissionOption("allow-once", "Yes", "allow_once"),
    PermissionOption("reject", "No", "reject_once"),
)
ODD = (
    PermissionOption("y", "Yes", "allow_once"),
    PermissionOption("never", "Never for this repo", "reject_always"),
    PermissionOption("n", "No", "reject_once"),
    PermissionOption("ask-later", "Ask me later", "some_future_kind"),
)


def parts_of(options: tuple[PermissionOption, ...]) -> dict[str, str]:
    return {row["option_id"]: row["part"] for row in card_options(options)}


def test_the_agents_options_map_onto_the_cards_buttons_where_they_fit() -> None:
    assert parts_of(GEMINI) == {
        "proceed_always": "session",
        "proceed_once": "allow",
        "cancel": "deny",
    }
    assert parts_of(CLAUDE) == {"allow-once": "allow", "reject": "deny"}


def test_options_that_fit_no_button_get_their_own_with_their_names() -> None:
    rows = {row["option_id"]: row for row in card_options(ODD)}
    assert rows["n"]["part"] == "deny"  # reject_once is preferred for Deny
    assert rows["never"]["part"] == "o1"
    assert rows["ask-later"]["part"] == "o3"
    assert rows["ask-later"]["name"] == "Ask me later"


def decision(**fields: object) -> Decision:
    base = Decision(
        id="d1",
        project="app",
        session="s",
        question="q",
        context=None,
        options=("Allow", "Deny"),
        channel_id="1",
        thread_id="2",
        card_message_id="3",
        thread_url="",
        asked_at="2026-01-01T00:00:00+00:00",
        kind="approval",
        approval={"acp": {}},
    )
    return base.replace(**fields)


def test_allow_once_and_for_the_session_pick_the_matching_options() -> None:
    once = Outcome("allow", "", "owner", decision(status="answered", answer="allow", scope="once"))
    session = Outcome(
        "allow", "", "owner", decision(status="answered", answer="allow", scope="session")
    )
    assert choice(once, GEMINI).option_id == "proceed_once"
    assert choice(session, GEMINI).option_id == "proceed_always"


def test_allow_for_the_session_without_such_an_option_is_cancelled_not_widened() -> None:
    session = Outcome(
        "allow", "", "owner", decision(status="answered", answer="allow", scope="session")
    )
    assert choice(session, CLAUDE).option_id is None


def test_no_answer_is_a_cancelled_request_never_an_allow() -> None:
    for how in ("timeout", "elsewhere"):
        outcome = Outcome("deny", "No one answered", how, decision())  # type: ignore[arg-type]
        assert choice(outcome, GEMINI).option_id is None


def test_a_deny_picks_the_reject_option_and_carries_the_note() -> None:
    denied = Outcome(
        "deny", "denied", "owner", decision(status="answered", answer="deny", note="not now")
    )
    picked = choice(denied, GEMINI)
    assert picked.option_id == "cancel"
    assert picked.note == "not now"


def test_a_click_on_one_of_the_agents_own_options_picks_exactly_it() -> None:
    chosen = decision(status="answered", answer="deny", approval={"acp": {}, "acp_choice": "never"})
    assert choice(Outcome("deny", "", "owner", chosen), ODD).option_id == "never"


def test_a_command_the_agent_wants_to_run_is_shown_as_a_shell_command() -> None:
    ask = PermissionAsk(
        thread_id="1",
        job_id="j",
        project_name="app",
        agent="claude-acp",
        session_id="s",
        cwd="/tmp",
        title="touch made.txt",
        kind="execute",
        raw_input={"command": "touch made.txt"},
        options=CLAUDE,
    )
    request = tool_request(ask)
    assert request.tool_name == "shell"
    assert request.client == "acp"
    assert request.tool_input == {"command": "touch made.txt"}
