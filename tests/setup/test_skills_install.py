"""`discord-mcp install <client> --skills`: the delegate-coding skill where each client loads
skills, idempotent, holding nothing secret; and `discord-mcp schema`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from discord_mcp.runs.folders.folders import SCHEMAS, schema
from discord_mcp.setup.clients import Client
from discord_mcp.setup.skills import install_skills, skill_text, skills_dir

MCP = [sys.executable, "-m", "discord_mcp"]
TOKEN = "secret-token-value-1234567890"


def mcp(
    *args: str, home: Path, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MCP, *args],
        capture_output=True,
        encoding="utf-8",
        text=True,
        timeout=60,
        cwd=cwd,
        env={"PATH": "/usr/bin:/bin", "HOME": str(home), **(env or {})},
    )


def test_the_skill_is_in_agent_skills_format() -> None:
    text = skill_text("delegate-coding")
    front, body = text.split("---\n", 2)[1:]
    fields = dict(line.split(": ", 1) for line in front.strip().splitlines())
    assert fields["name"] == "delegate-coding"
    assert 50 < len(fields["description"]) <= 1024
    for command in ("submit", "status", "resume", "logs", "result.json", "retryable"):
        assert command in body


@pytest.mark.parametrize(
    ("client", "user", "project"),
    [
        ("claude", ".claude/skills", ".claude/skills"),
        ("codex", ".codex/skills", ".agents/skills"),
        ("gemini", ".gemini/skills", ".gemini/skills"),
    ],
)
def test_each_client_gets_the_skill_where_it_loads_skills(
    client: Client, user: str, project: str, tmp_path: Path
) -> None:
    home, cwd = tmp_path / "home", tmp_path / "repo"
    assert skills_dir(client, "user", home=home, cwd=cwd, environ={}) == home / user
    assert skills_dir(client, "project", home=home, cwd=cwd, environ={}) == cwd / project
    first = install_skills(client, "user", home=home, cwd=cwd, environ={})
    again = install_skills(client, "user", home=home, cwd=cwd, environ={})
    placed = {path.parent.name: (path, changed) for path, changed, _ in first.placed}
    assert set(placed) == {"delegate-coding", "discord-decisions"}
    for name, (path, changed) in placed.items():
        assert path == home / user / name / "SKILL.md"
        assert changed
        assert path.read_text(encoding="utf-8") == skill_text(name)
    assert [c for _, c, _ in again.placed] == [False, False]  # idempotent
    assert "already up to date" in again.describe()


def test_the_clients_own_home_variables_are_followed(tmp_path: Path) -> None:
    env = {
        "CLAUDE_CONFIG_DIR": str(tmp_path / "cc"),
        "CODEX_HOME": str(tmp_path / "cx"),
        "GEMINI_CLI_HOME": str(tmp_path / "gm"),
    }
    found = {
        c: skills_dir(c, "user", home=tmp_path, cwd=tmp_path, environ=env)
        for c in ("claude", "codex", "gemini")
    }  # type: ignore[arg-type]
    assert found == {
        "claude": tmp_path / "cc" / "skills",
        "codex": tmp_path / "cx" / "skills",
        "gemini": tmp_path / "gm" / ".gemini" / "skills",
    }


def test_a_changed_skill_is_replaced_and_the_old_one_kept(tmp_path: Path) -> None:
    path = skills_dir("claude", "user", home=tmp_path, cwd=tmp_path, environ={})
    target = path / "delegate-coding" / "SKILL.md"
    target.parent.mkdir(parents=True)
    target.write_text("old text\n", encoding="utf-8")
    placed = install_skills("claude", "user", home=tmp_path, cwd=tmp_path, environ={}).placed
    [(_, changed, backup)] = [p for p in placed if p[0] == target]
    assert changed
    assert backup is not None
    assert backup.read_text(encoding="utf-8") == "old text\n"


def test_install_skills_needs_no_env_file_and_writes_no_token(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    done = mcp(
        "install",
        "claude",
        "--skills",
        home=tmp_path / "home",
        cwd=tmp_path,
        env={"DISCORD_BOT_TOKEN": TOKEN},
    )
    again = mcp("install", "claude", "--skills", home=tmp_path / "home", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "skill 'delegate-coding' placed for claude" in done.stdout
    assert "was not registered" in done.stdout
    assert again.returncode == 0
    assert "already up to date" in again.stdout
    written = [p for p in (tmp_path / "home").rglob("*") if p.is_file()]
    assert [p.name for p in written] == ["SKILL.md", "SKILL.md"]
    assert all(TOKEN not in p.read_text(encoding="utf-8") for p in written)


def test_with_an_env_file_the_server_is_registered_too(tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text(f"DISCORD_BOT_TOKEN={TOKEN}\n", encoding="utf-8")
    (tmp_path / "home").mkdir()
    done = mcp(
        "install",
        "gemini",
        "--skills",
        "--env-file",
        str(env_file),
        home=tmp_path / "home",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    settings = json.loads(
        (tmp_path / "home" / ".gemini" / "settings.json").read_text(encoding="utf-8")
    )
    assert "discord" in settings["mcpServers"]
    assert (tmp_path / "home" / ".gemini" / "skills" / "delegate-coding" / "SKILL.md").exists()
    assert TOKEN not in (tmp_path / "home" / ".gemini" / "settings.json").read_text(
        encoding="utf-8"
    )


@pytest.mark.parametrize("name", SCHEMAS)
def test_schema_prints_the_shipped_json_schema(name: str, tmp_path: Path) -> None:
    done = mcp("schema", name, home=tmp_path, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == schema(name)
    assert schema(name)["$schema"].endswith("2020-12/schema")


@pytest.mark.parametrize(("scope", "where"), [("user", ".openclaw/skills"), ("project", "skills")])
def test_install_openclaw_skills_places_the_delegation_skill_where_openclaw_loads_it(
    scope: str, where: str, tmp_path: Path
) -> None:
    """The CodeBridge seed's first client (issue 34): OpenClaw's managed skills folder, or the
    workspace's ``skills/``; only the skill that needs no MCP server, and no .env."""
    home, cwd = tmp_path / "home", tmp_path / "workspace"
    home.mkdir()
    cwd.mkdir()
    done = mcp("install", "openclaw", "--skills", "--scope", scope, home=home, cwd=cwd)
    assert done.returncode == 0, done.stderr
    base = (home if scope == "user" else cwd) / where
    placed = base / "delegate-coding" / "SKILL.md"
    assert placed.read_text(encoding="utf-8") == skill_text("delegate-coding")
    assert sorted(p.name for p in base.iterdir()) == ["delegate-coding"]
    assert str(placed) in done.stdout
    again = mcp("install", "openclaw", "--skills", "--scope", scope, home=home, cwd=cwd)
    assert again.returncode == 0
    assert "already up to date" in again.stdout


def test_install_openclaw_without_skills_or_with_more_is_refused(tmp_path: Path) -> None:
    for extra in ([], ["--skills", "--approvals"], ["--skills", "--hooks"]):
        refused = mcp("install", "openclaw", *extra, home=tmp_path, cwd=tmp_path)
        assert refused.returncode == 2, extra
        assert "--skills" in refused.stderr
    assert not (tmp_path / ".openclaw").exists()
