"""A Codex turn through ``codex app-server`` whose calls go to the owner's card starts only once
Codex said it runs the run's approval hooks (issue 34): app-server ignores
``-c bypass_hook_trust=true``, takes it from the thread's config, and warns when it applies it.
Without that warning a command would run with no card, so the thread fails instead (fail
closed). The real Codex: tests/e2e/test_approvals_watch_e2e.py (codex-steer)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from discord_mcp.errors import RunError
from discord_mcp.runs.adapters.codex_app import CodexAppServer


def _server(tmp_path: Path, *options: str) -> tuple[CodexAppServer, Path]:
    record = tmp_path / "requests.ndjson"
    argv = [sys.executable, "-m", "tests.support.fake_codex_app_server", "--record", str(record)]
    env = {"PYTHONPATH": str(Path(__file__).parents[2])}
    return CodexAppServer([*argv, *options], env=env, cwd=tmp_path, hook_check_s=1.0), record


def _sent(record: Path, method: str) -> dict[str, object]:
    [params] = [
        json.loads(line)["params"]
        for line in record.read_text(encoding="utf-8").splitlines()
        if json.loads(line).get("method") == method
    ]
    return dict(params)


@pytest.mark.parametrize("late", [False, True])
async def test_a_thread_that_trusts_its_hooks_opens_once_codex_confirms_them(
    tmp_path: Path, late: bool
) -> None:
    codex, record = _server(tmp_path, "--confirm-hooks", *(["--late"] if late else []))
    async with codex:
        assert await codex.start_thread(sandbox="workspace-write", trust_hooks=True) == "thr-fake"
    assert _sent(record, "thread/start")["config"] == {"bypass_hook_trust": True}


@pytest.mark.parametrize("resume", [False, True])
async def test_a_thread_whose_hooks_codex_does_not_confirm_fails(
    tmp_path: Path, resume: bool
) -> None:
    codex, _ = _server(tmp_path)  # never says the hooks run
    async with codex:
        opening = (
            codex.resume_thread("thr-1", trust_hooks=True)
            if resume
            else codex.start_thread(trust_hooks=True)
        )
        with pytest.raises(RunError) as raised:
            await opening
    assert raised.value.code == "E_CLI_ERROR"
    assert "approval hooks" in raised.value.message


async def test_a_thread_without_hooks_neither_asks_for_trust_nor_waits(tmp_path: Path) -> None:
    codex, record = _server(tmp_path)
    async with codex:
        await codex.resume_thread("thr-1", approval_policy="never")
    sent = _sent(record, "thread/resume")
    assert "config" not in sent
    assert sent["approvalPolicy"] == "never"
