"""`discord-mcp install <client> --approvals` and what `doctor` says about approvals."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from discord_mcp.errors import ConfigError
from discord_mcp.hooks.guard import FAIL_CLOSED
from discord_mcp.setup.approvals import hook_file, hook_state, install_hook
from discord_mcp.setup.client_checks import approval_checks
from discord_mcp.setup.clients import Client


@pytest.fixture
def env_file(tmp_path: Path) -> Path:
    path = tmp_path / "project" / ".env"
    path.parent.mkdir()
    path.write_text("DISCORD_BOT_TOKEN=secret-token-value\n", encoding="utf-8")
    return path


def installed(client: Client, tmp_path: Path, env_file: Path) -> Path:
    install_hook(client, "user", env_file=env_file, home=tmp_path, cwd=tmp_path, environ={})
    return hook_file(client, "user", home=tmp_path, cwd=tmp_path, environ={})


@pytest.mark.parametrize(
    ("client", "event", "timeout"),
    [("claude", "PermissionRequest", 630), ("codex", "PermissionRequest", 630),
     ("gemini", "BeforeTool", 630_000)],
)  # fmt: skip
def test_the_hook_goes_into_the_clients_own_file_without_the_token(
    client: Client, event: str, timeout: int, tmp_path: Path, env_file: Path
) -> None:
    path = installed(client, tmp_path, env_file)
    document = json.loads(path.read_text(encoding="utf-8"))
    [group] = document["hooks"][event]
    [handler] = group["hooks"]
    assert "-m discord_mcp hook" in handler["command"]
    assert f"--env-file {env_file}" in handler["command"]
    assert "--wait 600" in handler["command"]
    assert handler["timeout"] == timeout  # the hook's own wait always ends first
    assert "secret-token-value" not in path.read_text(encoding="utf-8")
    assert os.stat(path).st_mode & 0o077 == 0


def test_installing_twice_changes_nothing_and_other_hooks_stay(
    tmp_path: Path, env_file: Path
) -> None:
    path = hook_file("claude", "user", home=tmp_path, cwd=tmp_path, environ={})
    path.parent.mkdir(parents=True)
    theirs = {"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]}
    path.write_text(
        json.dumps({"model": "x", "hooks": {"PermissionRequest": [theirs]}}), encoding="utf-8"
    )
    first = install_hook(
        "claude", "user", env_file=env_file, home=tmp_path, cwd=tmp_path, environ={}
    )
    assert first.changed
    assert first.backup is not None
    again = install_hook(
        "claude", "user", env_file=env_file, home=tmp_path, cwd=tmp_path, environ={}
    )
    assert not again.changed
    assert again.backup is None
    document = json.loads(path.read_text(encoding="utf-8"))
    assert document["model"] == "x"
    groups = document["hooks"]["PermissionRequest"]
    assert groups[0] == theirs
    assert len(groups) == 2
    moved = env_file.with_name("other.env")
    moved.write_text("", encoding="utf-8")
    install_hook("claude", "user", env_file=moved, home=tmp_path, cwd=tmp_path, environ={})
    groups = json.loads(path.read_text(encoding="utf-8"))["hooks"]["PermissionRequest"]
    assert len(groups) == 2
    assert str(moved) in groups[1]["hooks"][0]["command"]


def test_a_file_that_cannot_be_parsed_is_never_overwritten(tmp_path: Path, env_file: Path) -> None:
    path = hook_file("gemini", "user", home=tmp_path, cwd=tmp_path, environ={})
    path.parent.mkdir(parents=True)
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(ConfigError):
        install_hook("gemini", "user", env_file=env_file, home=tmp_path, cwd=tmp_path, environ={})
    assert path.read_text(encoding="utf-8") == "{not json"


def test_doctor_says_whether_each_clients_approvals_are_wired(
    tmp_path: Path, env_file: Path
) -> None:
    installed("claude", tmp_path, env_file)
    codex = installed("codex", tmp_path, env_file)
    checks = {c.name: c for c in approval_checks(
        {"claude", "codex", "gemini"}, home=tmp_path, cwd=tmp_path, environ={}
    )}  # fmt: skip
    assert checks["claude approvals"].verdict == "OK"
    assert checks["claude approvals"].detail.startswith("wired")
    assert checks["codex approvals"].verdict == "WARN"  # Codex runs it only once trusted
    assert "/hooks" in checks["codex approvals"].fix
    assert "install gemini --approvals" in checks["gemini approvals"].detail
    (tmp_path / ".codex" / "config.toml").write_text(
        f'[hooks.state."{codex}:permission_request:0:0"]\ntrusted_hash = "sha256:abc"\n',
        encoding="utf-8",
    )
    assert hook_state("codex", home=tmp_path, cwd=tmp_path, environ={})[0] == "wired"


def edit_our_handler(path: Path, **changes: object) -> None:
    document = json.loads(path.read_text(encoding="utf-8"))
    [event] = document["hooks"]
    [group] = document["hooks"][event]
    group["hooks"][0].update(changes)
    path.write_text(json.dumps(document), encoding="utf-8")


def approvals_check(client: Client, tmp_path: Path) -> tuple[str, str, str]:
    [check] = approval_checks({client}, home=tmp_path, cwd=tmp_path, environ={})
    return check.verdict, check.detail, check.fix


@pytest.mark.parametrize("client", ["claude", "gemini"])
def test_doctor_passes_the_hook_as_install_writes_it(
    client: Client, tmp_path: Path, env_file: Path
) -> None:
    installed(client, tmp_path, env_file)
    verdict, detail, _ = approvals_check(client, tmp_path)
    assert (verdict, detail.split(":")[0]) == ("OK", "wired")


@pytest.mark.parametrize("client", ["claude", "gemini"])
@pytest.mark.parametrize(
    ("change", "said"),
    [
        pytest.param(
            lambda c: c.replace(c.split()[0], "/gone/bin/python3", 1), "is gone", id="no-program"
        ),
        pytest.param(
            lambda c: c.replace(" --timeout 630", ""), "does not know", id="no-timeout-option"
        ),
        pytest.param(
            lambda c: c.replace("--timeout 630", "--timeout 900"), "believes", id="timeout-longer"
        ),
        pytest.param(
            lambda c: c.replace("--timeout 630", "--timeout soon"), "not a number", id="bad-timeout"
        ),
    ],
)  # fmt: skip
def test_doctor_fails_a_hook_that_cannot_guard_the_calls(
    client: Client, change: object, said: str, tmp_path: Path, env_file: Path
) -> None:
    path = installed(client, tmp_path, env_file)
    document = json.loads(path.read_text(encoding="utf-8"))
    [event] = document["hooks"]
    command = document["hooks"][event][0]["hooks"][0]["command"]
    edit_our_handler(path, command=change(command))  # type: ignore[operator]
    verdict, detail, fix = approvals_check(client, tmp_path)
    assert verdict == "FAIL"
    assert said in detail
    assert f"install {client} --approvals" in fix


@pytest.mark.parametrize("client", ["claude", "codex", "gemini"])
def test_doctor_says_a_hook_that_fails_open_when_killed_needs_reinstalling(
    client: Client, tmp_path: Path, env_file: Path
) -> None:
    path = installed(client, tmp_path, env_file)
    document = json.loads(path.read_text(encoding="utf-8"))
    [event] = document["hooks"]
    command = document["hooks"][event][0]["hooks"][0]["command"]
    assert command.endswith(FAIL_CLOSED)
    edit_our_handler(path, command=command.removesuffix(FAIL_CLOSED))  # as older installs wrote
    assert hook_state(client, home=tmp_path, cwd=tmp_path, environ={})[0] == "needs reinstall"
    verdict, detail, fix = approvals_check(client, tmp_path)
    assert verdict == "FAIL"
    assert "needs reinstall" in detail
    assert "fails open when killed" in detail
    assert fix == f"discord-mcp install {client} --approvals"
    again = install_hook(client, "user", env_file=env_file, home=tmp_path, cwd=tmp_path, environ={})
    assert again.changed  # install replaces it with the wrapped command
    assert hook_state(client, home=tmp_path, cwd=tmp_path, environ={})[0] != "needs reinstall"


def test_doctor_fails_a_hook_whose_timeout_leaves_no_time_to_ask(
    tmp_path: Path, env_file: Path
) -> None:
    path = installed("gemini", tmp_path, env_file)
    document = json.loads(path.read_text(encoding="utf-8"))
    command = document["hooks"]["BeforeTool"][0]["hooks"][0]["command"]
    edit_our_handler(path, command=command.replace("--timeout 630", "--timeout 8"), timeout=8000)
    verdict, detail, _ = approvals_check("gemini", tmp_path)
    assert verdict == "FAIL"
    assert "no time to ask" in detail


def test_doctor_fails_a_hook_without_a_timeout_where_the_clients_default_is_shorter(
    tmp_path: Path, env_file: Path
) -> None:
    path = installed("gemini", tmp_path, env_file)
    document = json.loads(path.read_text(encoding="utf-8"))
    del document["hooks"]["BeforeTool"][0]["hooks"][0]["timeout"]  # Gemini's default: 60 s
    path.write_text(json.dumps(document), encoding="utf-8")
    verdict, detail, _ = approvals_check("gemini", tmp_path)
    assert verdict == "FAIL"
    assert "630 s but the client gives it 60 s" in detail


def test_doctor_fails_a_hook_whose_env_file_is_gone(tmp_path: Path, env_file: Path) -> None:
    installed("claude", tmp_path, env_file)
    env_file.unlink()
    verdict, detail, _ = approvals_check("claude", tmp_path)
    assert verdict == "FAIL"
    assert "env file" in detail


def test_install_with_approvals_and_hooks_keeps_the_original_file_as_its_one_backup(
    tmp_path: Path, env_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from discord_mcp.cli import main

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    original = '{"theme": "dark", "hooks": {}}\n'
    settings.write_text(original, encoding="utf-8")
    code = main(["install", "claude", "--approvals", "--hooks", "--env-file", str(env_file)])
    assert code == 0
    backups = sorted(settings.parent.glob("settings.json.bak-*"))
    assert len(backups) == 1
    assert backups[0].read_text(encoding="utf-8") == original
    hooks = json.loads(settings.read_text(encoding="utf-8"))["hooks"]
    assert {"PermissionRequest", "Stop", "SessionStart"} <= set(hooks)
    # A second run in the same second changes nothing, and so makes no backup.
    assert main(["install", "claude", "--approvals", "--hooks", "--env-file", str(env_file)]) == 0
    assert len(list(settings.parent.glob("settings.json.bak-*"))) == 1


def test_backups_of_two_runs_in_the_same_second_never_overwrite_each_other(
    tmp_path: Path,
) -> None:
    from discord_mcp.setup.install import Backups

    path = tmp_path / "settings.json"
    path.write_text("first", encoding="utf-8")
    one = Backups().save(path)
    path.write_text("second", encoding="utf-8")
    two = Backups().save(path)
    assert one is not None
    assert two is not None
    assert one != two
    assert (one.read_text(encoding="utf-8"), two.read_text(encoding="utf-8")) == ("first", "second")
