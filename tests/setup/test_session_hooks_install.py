"""`discord-mcp install <client> --hooks`: the Stop/SessionStart hooks merged into the client's
own file, idempotently, beside every other hook; and what `doctor` says about them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from discord_mcp.errors import ConfigError
from discord_mcp.setup.approvals import hook_file, install_hook
from discord_mcp.setup.client_checks import session_hook_checks
from discord_mcp.setup.clients import Client
from discord_mcp.setup.session_hooks import install_session_hooks, session_hooks_state


@pytest.fixture
def env_file(tmp_path: Path) -> Path:
    path = tmp_path / "project" / ".env"
    path.parent.mkdir()
    path.write_text("DISCORD_BOT_TOKEN=secret-token-value\n", encoding="utf-8")
    return path


def install(client: Client, tmp_path: Path, env_file: Path) -> bool:
    done = install_session_hooks(
        client, "user", env_file=env_file, home=tmp_path, cwd=tmp_path, environ={}
    )
    return done.changed


@pytest.mark.parametrize(
    ("client", "events"),
    [("claude", ("Stop", "SessionStart")), ("codex", ("Stop", "SessionStart")),
     ("gemini", ("AfterAgent", "SessionStart"))],
)  # fmt: skip
def test_both_hooks_go_into_the_clients_file_without_the_token(
    client: Client, events: tuple[str, str], tmp_path: Path, env_file: Path
) -> None:
    assert install(client, tmp_path, env_file)
    path = hook_file(client, "user", home=tmp_path, cwd=tmp_path, environ={})
    text = path.read_text(encoding="utf-8")
    assert "secret-token-value" not in text
    hooks = json.loads(text)["hooks"]
    stop, start = ([h["command"] for g in hooks[e] for h in g["hooks"]] for e in events)
    assert "hook stop --client" in stop[0]
    assert "hook session-start --client" in start[0]
    assert f"--env-file {env_file}" in stop[0]


def test_installing_twice_changes_nothing_and_keeps_other_hooks(
    tmp_path: Path, env_file: Path
) -> None:
    path = hook_file("claude", "user", home=tmp_path, cwd=tmp_path, environ={})
    path.parent.mkdir(parents=True)
    theirs = {"hooks": [{"type": "command", "command": "notify-send done"}]}
    path.write_text(json.dumps({"model": "x", "hooks": {"Stop": [theirs]}}), encoding="utf-8")
    install_hook("claude", "user", env_file=env_file, home=tmp_path, cwd=tmp_path, environ={})
    assert install("claude", tmp_path, env_file)
    before = path.read_text(encoding="utf-8")
    assert not install("claude", tmp_path, env_file)
    assert path.read_text(encoding="utf-8") == before
    document = json.loads(before)
    assert document["model"] == "x"
    assert document["hooks"]["Stop"][0] == theirs
    assert len(document["hooks"]["Stop"]) == 2
    assert "PermissionRequest" in document["hooks"]  # the approval hook stays
    state, _ = session_hooks_state("claude", home=tmp_path, cwd=tmp_path, environ={})
    assert state == "wired"


def test_a_file_that_cannot_be_parsed_is_left_alone(tmp_path: Path, env_file: Path) -> None:
    path = hook_file("gemini", "user", home=tmp_path, cwd=tmp_path, environ={})
    path.parent.mkdir(parents=True)
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(ConfigError):
        install("gemini", tmp_path, env_file)
    assert path.read_text(encoding="utf-8") == "{not json"


def test_doctor_says_whether_the_hooks_are_wired(tmp_path: Path, env_file: Path) -> None:
    [absent] = session_hook_checks({"claude"}, home=tmp_path, cwd=tmp_path, environ={})
    assert "not wired" in absent.detail
    assert "install claude --hooks" in absent.detail
    install("claude", tmp_path, env_file)
    install("codex", tmp_path, env_file)
    checks = session_hook_checks({"claude", "codex"}, home=tmp_path, cwd=tmp_path, environ={})
    verdicts = {c.name: (c.verdict, c.detail) for c in checks}
    assert verdicts["claude hooks"][0] == "OK"
    assert "Stop and SessionStart" in verdicts["claude hooks"][1]
    assert verdicts["codex hooks"][0] == "WARN"  # Codex runs them once trusted
