"""One label for one session on the server's and the hook's cards (discord_mcp.session_labels),
with what the real CLIs give: Codex's ``_meta`` as codex-cli 0.169.0 sends it, Gemini CLI's
process tree as 0.61.0 starts its servers and hooks (a fake ``/proc``)."""

from __future__ import annotations

import os
from pathlib import Path

from discord_mcp.hooks.runner import session_label as hook_label
from discord_mcp.server.toolkit import session_label as server_label
from discord_mcp.session_labels import (
    FOLDER,
    CliProcess,
    gemini_process,
    id_label,
    meta_session,
    remember,
    remembered,
)

CODEX_THREAD = "01a222ff-2fa6-7373-a43e-d1e1b05fd56e"
CODEX_META = {
    "callId": "call_stub_000583a21c33cfb6",
    "x-codex-turn-metadata": {
        "session_id": CODEX_THREAD,
        "thread_id": CODEX_THREAD,
        "turn_id": "01a222ff-3441-7bb1-a161-eaf817d0a36f",
        "codex_version": "0.169.0",
    },
    "threadId": CODEX_THREAD,
    "sessionId": CODEX_THREAD,
    "windowId": f"{CODEX_THREAD}:0",
    "progressToken": 1,
}
GEMINI_SESSION = "89ab9582-97fd-413a-9d8b-7a560080b99c"


def this_process() -> CliProcess:
    fields = Path("/proc/self/stat").read_text(encoding="ascii").rsplit(")", 1)[1].split()
    return CliProcess(os.getpid(), int(fields[19]))


def test_a_time_ordered_codex_id_is_labelled_by_its_random_tail() -> None:
    # Two Codex threads started within a minute share their first 8 characters.
    other = "01a222ff-9b0c-7d11-8e2f-0a1b2c3d4e5f"
    assert id_label(CODEX_THREAD) == "b05fd56e"
    assert id_label(CODEX_THREAD) != id_label(other)
    assert id_label(GEMINI_SESSION) == "89ab9582"
    assert id_label("") == "session"


def test_codex_names_its_session_in_a_calls_meta() -> None:
    assert meta_session(CODEX_META) == CODEX_THREAD
    assert meta_session({"x-codex-turn-metadata": {"session_id": CODEX_THREAD}}) == CODEX_THREAD
    assert meta_session({"progressToken": "db2a1bd6"}) is None  # what Gemini CLI sends
    assert meta_session({"sessionId": "not an id; rm -rf /"}) is None
    assert meta_session(None) is None


def test_a_codex_question_and_its_hooks_approval_have_one_label() -> None:
    assert server_label({}, "codex-mcp-client", meta=CODEX_META) == hook_label(CODEX_THREAD)


def test_claude_codes_label_is_as_before() -> None:
    claude = "5c1e9f0a-1111-4222-8333-444455556666"
    assert server_label({"CLAUDE_CODE_SESSION_ID": claude}, "claude-code") == "5c1e9f0a"
    assert hook_label(claude) == "5c1e9f0a"


def fake_process(proc: Path, pid: int, parent: int, argv: list[str], start: int = 100) -> None:
    folder = proc / str(pid)
    folder.mkdir(parents=True)
    fields = ["S", str(parent), *["0"] * 17, str(start), "0"]
    (folder / "stat").write_text(f"{pid} (x y) {' '.join(fields)}\n", encoding="ascii")
    (folder / "cmdline").write_bytes(b"\0".join(a.encode() for a in argv) + b"\0")


def gemini_tree(proc: Path) -> None:
    """Gemini CLI relaunched under its launcher; its MCP server (through uvx) and a hook
    (through the shell of its command line), as 0.61.0 starts them."""
    fake_process(proc, 10, 1, ["node", "/usr/lib/node_modules/.bin/gemini", "-p", "x"])
    fake_process(proc, 11, 10, ["/usr/bin/node", "--max-old-space-size=12052", "/x/.bin/gemini"])
    fake_process(proc, 20, 11, ["/home/u/.local/bin/uvx", "discord-mcp"])
    fake_process(proc, 21, 20, ["/home/u/.cache/uv/python", "-m", "discord_mcp"])
    fake_process(proc, 30, 11, ["/bin/sh", "-c", "discord-mcp hook session-start"])
    fake_process(proc, 31, 30, ["/home/u/.local/bin/discord-mcp", "hook", "session-start"])


def test_the_server_and_the_hooks_find_the_same_gemini_process(tmp_path: Path) -> None:
    gemini_tree(tmp_path)
    server = gemini_process(tmp_path, pid=21)
    hook = gemini_process(tmp_path, pid=31)
    assert server == hook == CliProcess(11, 100)


def test_no_gemini_process_under_another_cli(tmp_path: Path) -> None:
    fake_process(tmp_path, 10, 1, ["node", "/usr/lib/node_modules/.bin/claude"])
    fake_process(tmp_path, 11, 10, ["/bin/sh", "-c", "discord-mcp hook session-start"])
    fake_process(tmp_path, 12, 11, ["python", "-m", "discord_mcp", "hook"])
    assert gemini_process(tmp_path, pid=12) is None
    assert gemini_process(tmp_path / "absent", pid=12) is None


def test_a_recorded_gemini_session_labels_the_servers_questions(tmp_path: Path) -> None:
    home = tmp_path / "home"
    me = this_process()
    assert remembered(home, me) is None
    remember(home, GEMINI_SESSION, me)
    assert remembered(home, me) == GEMINI_SESSION
    assert remembered(home, CliProcess(me.pid, me.start + 1)) is None  # a reused pid
    # After /clear the hook records the new session, which the next question carries.
    cleared = "0f0e0d0c-1111-4222-8333-444455556666"
    remember(home, cleared, me)
    assert remembered(home, me) == cleared
    remember(home, "", me)
    remember(home, "../../etc", me)
    assert remembered(home, me) == cleared


def test_an_unreadable_record_is_no_label(tmp_path: Path) -> None:
    home = tmp_path / "home"
    me = CliProcess(os.getpid(), 1)
    (home / FOLDER).mkdir(parents=True)
    (home / FOLDER / f"{me.key}.json").write_text("{not json", encoding="utf-8")
    assert remembered(home, me) is None


def test_records_of_ended_processes_are_removed(tmp_path: Path) -> None:
    home = tmp_path / "home"
    gone = CliProcess(2**22 + 7, 5)  # above any pid this machine hands out
    folder = home / FOLDER
    folder.mkdir(parents=True)
    (folder / f"{gone.key}.json").write_text('{"version": 1, "session_id": "a"}', "utf-8")
    remember(home, GEMINI_SESSION, this_process())
    assert remembered(home, this_process()) == GEMINI_SESSION
    assert not (folder / f"{gone.key}.json").exists()
