"""The Stop and SessionStart hooks' decisions: which questions are this session's, when the
agent may end its turn, and which answers a new session is given (exactly once)."""

from __future__ import annotations

import io
import json
from pathlib import Path

from discord_mcp.decisions.model import Decision
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.hooks import session_start, stop
from discord_mcp.hooks.cli import main
from discord_mcp.state.leases import ProcessLease
from tests.decisions.test_store import make_decision

SESSION = "0f3c2a9b-1111-4222-8333-944445555666"


def ask(store: DecisionStore, number: int, **changes: object) -> str:
    values: dict[str, object] = {
        "id": f"20261123-1200{number:02d}-abcdef",
        "session": SESSION[:8],
        "question": f"Question {number}?",
    }
    decision = make_decision(**{**values, **changes})
    store.create(decision)
    return decision.id


def answer(**changes: object) -> dict[str, object]:
    return {
        "status": "answered",
        "answer": "A",
        "selected_option": "Yes",
        "selected_index": 0,
        "answered_by_name": "Ann",
        **changes,
    }


def payload(**changes: object) -> dict[str, object]:
    return {"session_id": SESSION, "cwd": "/tmp", "hook_event_name": "Stop", **changes}


# ---- Stop --------------------------------------------------------------------------------


def test_stop_blocks_while_the_sessions_question_is_pending(tmp_path: Path) -> None:
    store = DecisionStore(tmp_path)
    mine = ask(store, 1)
    ask(store, 2, session="deadbeef")  # another session's question is not ours to wait on
    answer_ = stop.decide(store, payload(stop_hook_active=False))
    assert answer_ is not None
    assert answer_["decision"] == "block"
    assert f"call wait_decision with decision_id {mine!r}" in answer_["reason"]
    assert "20261123-120002-abcdef" not in answer_["reason"]


def test_stop_lets_the_agent_stop_when_it_already_continued_for_a_pending_question(
    tmp_path: Path,
) -> None:
    store = DecisionStore(tmp_path)
    ask(store, 1)
    assert stop.decide(store, payload(stop_hook_active=True)) is None


def test_stop_lets_the_agent_stop_when_nothing_is_open(tmp_path: Path) -> None:
    store = DecisionStore(tmp_path)
    ask(store, 1, **answer(delivered=True))
    ask(store, 2, status="cancelled", delivered=True)
    assert stop.decide(store, payload(stop_hook_active=False)) is None


def test_stop_gives_an_undelivered_answer_once_even_when_already_continuing(
    tmp_path: Path,
) -> None:
    store = DecisionStore(tmp_path)
    decision_id = ask(store, 1, **answer())
    first = stop.decide(store, payload(stop_hook_active=True))
    assert first is not None
    assert first["decision"] == "block"
    assert "Ann answered: 'A) Yes'" in first["reason"]
    assert store.load(decision_id).delivered
    assert stop.decide(store, payload(stop_hook_active=True)) is None


def test_a_question_found_in_the_transcript_is_the_sessions_whatever_its_label(
    tmp_path: Path,
) -> None:
    store = DecisionStore(tmp_path / "home")
    codex = ask(store, 1, session="codex-4242")  # Codex gives its servers no session id
    transcript = tmp_path / "rollout.jsonl"
    transcript.write_text(
        json.dumps({"type": "function_call_output", "output": f'{{"decision_id": "{codex}"}}'})
        + "\n",
        encoding="utf-8",
    )
    without = stop.decide(store, {"session_id": "019a-codex", "stop_hook_active": False})
    assert without is None
    found = stop.decide(
        store,
        {"session_id": "019a-codex", "transcript_path": str(transcript), "stop_hook_active": False},
    )
    assert found is not None
    assert codex in found["reason"]


# ---- SessionStart --------------------------------------------------------------------------


def in_proj(decision: Decision) -> bool:
    return decision.project == "proj"


def test_a_new_session_is_given_answers_that_came_while_away_exactly_once(
    tmp_path: Path,
) -> None:
    store = DecisionStore(tmp_path)
    away = ask(store, 1, session="oldsess1", **answer())
    ask(store, 2, session="oldsess2", project="other", **answer())  # another project's
    ask(store, 3, session="oldsess3", from_run=True, **answer())  # a run's: the daemon's
    given = session_start.decide(store, payload(hook_event_name="SessionStart"), in_proj)
    assert given is not None
    context = given["hookSpecificOutput"]["additionalContext"]
    assert given["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert away in context
    assert "'Question 1?'" in context
    assert "Ann answered: 'A) Yes'" in context
    assert "20261123-120002-abcdef" not in context
    assert "20261123-120003-abcdef" not in context
    assert store.load(away).delivered
    again = session_start.decide(store, payload(hook_event_name="SessionStart"), in_proj)
    assert again is None


def test_an_answer_whose_asker_still_runs_is_not_taken_by_a_new_session(tmp_path: Path) -> None:
    store = DecisionStore(tmp_path)
    lease = ProcessLease(tmp_path)
    try:
        ask(store, 1, session="other", asker_lease=lease.name, **answer())
        assert session_start.decide(store, payload(), in_proj) is None
    finally:
        lease.close()


def test_a_new_session_hears_of_open_questions_no_one_waits_on(tmp_path: Path) -> None:
    store = DecisionStore(tmp_path)
    orphan = ask(store, 1, session="gone")
    lease = ProcessLease(tmp_path)
    try:
        ask(store, 2, session="alive", asker_lease=lease.name)  # its session still waits
        given = session_start.decide(store, payload(), in_proj)
    finally:
        lease.close()
    assert given is not None
    context = given["hookSpecificOutput"]["additionalContext"]
    assert orphan in context
    assert "wait_decision" in context
    assert "20261123-120002-abcdef" not in context


# ---- the command line ----------------------------------------------------------------------


def run_hook(event: str, stdin: str, environ: dict[str, str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main([event], stdin=io.StringIO(stdin), stdout=out, stderr=err, environ=environ)
    return code, out.getvalue(), err.getvalue()


def test_the_stop_hook_prints_only_its_json(tmp_path: Path, hook_env: dict[str, str]) -> None:
    store = DecisionStore(Path(hook_env["DISCORD_MCP_HOME"]))
    ask(store, 1)
    code, out, err = run_hook("stop", json.dumps(payload(cwd=str(tmp_path))), hook_env)
    assert code == 0
    assert json.loads(out)["decision"] == "block"
    assert hook_env["DISCORD_BOT_TOKEN"] not in out + err


def test_a_quiet_hook_exits_0_without_output_on_bad_input_or_settings(
    tmp_path: Path, hook_env: dict[str, str]
) -> None:
    assert run_hook("stop", "not json", hook_env) == (0, "", "")
    assert run_hook("session-start", "[]", hook_env) == (0, "", "")
    no_token = {k: v for k, v in hook_env.items() if k != "DISCORD_BOT_TOKEN"}
    event = json.dumps(payload(cwd=str(tmp_path)))
    assert run_hook("session-start", event, no_token) == (0, "", "")


class CountingStore(DecisionStore):
    """The decision files, counting which ones were parsed."""

    def __init__(self, home: Path) -> None:
        super().__init__(home)
        self.parsed: list[str] = []

    def load(self, decision_id: str) -> Decision:
        self.parsed.append(decision_id)
        return super().load(decision_id)

    def read_open(self, decision_id: str) -> Decision:
        self.parsed.append(decision_id)
        return super().read_open(decision_id)


def test_a_hook_parses_only_its_sessions_files_and_the_ids_its_transcript_names(
    tmp_path: Path,
) -> None:
    writer = DecisionStore(tmp_path)
    mine = ask(writer, 1)
    others = [ask(writer, n, session="deadbeef") for n in range(2, 40)]
    quoted = others[-1]  # another session's question that this transcript waited on
    transcript = tmp_path / "transcript.jsonl"
    transcript.write_text(f'{{"tool_result": "decision_id {quoted}"}}\n', encoding="utf-8")
    store = CountingStore(tmp_path)
    found = stop.session_decisions(store, payload(transcript_path=str(transcript)))
    assert [d.id for d in found] == [mine, quoted]
    assert sorted(store.parsed) == [mine, quoted]
