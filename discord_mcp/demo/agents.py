"""``discord-mcp demo --agent claude|codex|gemini``: a real agent CLI, offline.

The CLI is the newcomer's own (on ``PATH``) or the project's (``.agent-clis/``, what
``scripts/install-agent-clis`` installs). Its model is the scripted one
(:mod:`discord_mcp.demo.model`) on 127.0.0.1, which also refuses, as the CLI's proxy, anything
meant for the internet; its home is the demo's own folder, so nothing of the user's real
configuration is read or changed. ``discord-watch`` runs it in a run thread, as it would run it
for a real project, and the scripted model plays one job there: it asks the owner a decision,
waits for the answer, then runs a shell command, which the owner approves (or denies) on an
approval card, and ends with a sentence. A later message in the thread is the next job.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Literal

from discord_mcp.demo.model import ModelRequest, Reply, ShellCall, Text, ToolCall

Agent = Literal["claude", "codex", "gemini"]
AGENTS: tuple[Agent, ...] = ("claude", "codex", "gemini")
MODELS: dict[Agent, str] = {
    "claude": "claude-opus-5-5",
    "codex": "gpt-5.5",
    "gemini": "gemini-2.5-flash",
}
"""Model names each CLI knows (the scripted model answers to any; Codex refuses unknown ones)."""
SERVER = "discord"
"""The MCP server's name in a ``discord-watch`` run."""
QUESTION = "Which branch should I deploy to staging?"
OPTIONS = ("main", "release/1.4")
PROMPT = "Deploy the latest build to staging (this is the discord-mcp demo)."


def find_cli(agent: Agent, *, path: str | None = None, roots: tuple[Path, ...] = ()) -> Path | None:
    """The agent's CLI: on ``path`` (default: ``PATH``), else in ``<root>/.agent-clis``."""
    found = shutil.which(agent, path=path)
    if found:
        return Path(found)
    for root in roots:
        candidate = root / ".agent-clis" / "node_modules" / ".bin" / agent
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def project_args(agent: Agent) -> list[str]:
    """What the demo project passes the CLI (the model; Codex's is in its config)."""
    if agent == "claude":
        return ["--model", MODELS[agent]]
    if agent == "gemini":
        return ["-m", MODELS[agent]]
    return []


def environment(agent: Agent, home: Path, model_url: str) -> dict[str, str]:
    """The variables the CLI runs with, writing its config under ``home`` (its HOME)."""
    env = {
        "HOME": str(home),
        "HTTPS_PROXY": model_url,
        "HTTP_PROXY": model_url,
        "ALL_PROXY": model_url,
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }
    home.mkdir(parents=True, exist_ok=True)
    if agent == "claude":
        env.update(
            {
                "CLAUDE_CONFIG_DIR": str(home / ".claude"),
                "ANTHROPIC_BASE_URL": model_url,
                "ANTHROPIC_API_KEY": "sk-ant-discord-mcp-demo",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                "DISABLE_AUTOUPDATER": "1",
                "DISABLE_TELEMETRY": "1",
                "DISABLE_ERROR_REPORTING": "1",
                "CLAUDE_CODE_MAX_RETRIES": "0",
                "ENABLE_TOOL_SEARCH": "false",
            }
        )
    elif agent == "codex":
        codex_home = home / ".codex"
        codex_home.mkdir(parents=True, exist_ok=True)
        (codex_home / "config.toml").write_text(codex_config(model_url), encoding="utf-8")
        env.update({"CODEX_HOME": str(codex_home), "DEMO_MODEL_API_KEY": "sk-discord-mcp-demo"})
    else:
        (home / ".gemini").mkdir(parents=True, exist_ok=True)
        (home / ".gemini" / "settings.json").write_text(gemini_settings(), encoding="utf-8")
        env.update(
            {
                "GOOGLE_GEMINI_BASE_URL": model_url,
                "GEMINI_API_KEY": "gemini-discord-mcp-demo",
                "GEMINI_CLI_TRUST_WORKSPACE": "true",
            }
        )
    return env


def gemini_settings() -> str:
    """Gemini CLI's settings for the scripted model: its API key, nothing reaching out."""
    return json.dumps(
        {
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "general": {
                "enableAutoUpdate": False,
                "enableAutoUpdateNotification": False,
                "maxAttempts": 1,
                "retryFetchErrors": False,
            },
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
        }
    )


def codex_config(model_url: str) -> str:
    return "\n".join(
        [
            f'model = "{MODELS["codex"]}"',
            'model_provider = "demo"',
            "check_for_update_on_startup = false",
            "[analytics]",
            "enabled = false",
            "[feedback]",
            "enabled = false",
            "[features]",
            "plugins = false",
            "apps = false",
            "remote_plugin = false",
            "plugin_sharing = false",
            "[model_providers.demo]",
            'name = "discord-mcp demo model"',
            f"base_url = {json.dumps(model_url + '/v1')}",
            'env_key = "DEMO_MODEL_API_KEY"',
            'wire_api = "responses"',
            "request_max_retries = 0",
            "stream_max_retries = 0",
            "",
        ]
    )


def _result(text: str) -> dict[str, object]:
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def job_step(request: ModelRequest) -> Reply:
    """The scripted model's move in a demo job: ask, wait while pending, run a command, report.

    Decided from the request alone (the tool result that just came back), so one step serves
    every request of every job, in each CLI's own wire format.
    """
    results = request.latest_tool_results()
    if not results:
        return ToolCall(
            SERVER,
            "ask_decision",
            {
                "question": QUESTION,
                "context": "The build passed. Staging runs one branch at a time.",
                "options": list(OPTIONS),
            },
        )
    last = results[-1]
    name = last.name or ""
    if name.endswith(("ask_decision", "wait_decision")):
        answer = _result(last.text)
        if answer.get("status") == "pending":
            return ToolCall(SERVER, "wait_decision", {"decision_id": answer.get("decision_id")})
        if answer.get("status") != "answered":
            return Text(f"The question ended without an answer ({answer.get('status')}).")
        branch = str(answer.get("selected_option") or answer.get("answer") or "main")
        safe = "".join(c if c.isalnum() or c in "./-_" else "-" for c in branch)[:60]
        return ShellCall(
            f"echo deploying {safe} to staging > deploy.log", "deploy the branch to staging"
        )
    if "deploying" in last.text or not last.is_error:
        return Text(
            "Done: the deploy command ran (deploy.log says what it did). Write in this thread "
            "to give me the next job."
        )
    return Text(f"I did not run the deploy command: {last.text[:300]}")
