"""``discord-mcp install claude|codex|gemini|openclaw --skills``: the Agent Skills we ship, where
each client loads skills.

=============  ======================================  ========================================
client         user scope                              project scope
=============  ======================================  ========================================
Claude Code    ``~/.claude/skills/<name>/``             ``./.claude/skills/<name>/``
               (``$CLAUDE_CONFIG_DIR/skills``)
Codex CLI      ``~/.codex/skills/<name>/``              ``./.agents/skills/<name>/``
               (``$CODEX_HOME/skills``)
Gemini CLI     ``~/.gemini/skills/<name>/``             ``./.gemini/skills/<name>/``
               (``$GEMINI_CLI_HOME/.gemini/skills``)
OpenClaw       ``~/.openclaw/skills/<name>/``           ``./skills/<name>/`` (the workspace's)
=============  ======================================  ========================================

OpenClaw (the CodeBridge seed's first client, issue 34) gets ``delegate-coding`` only: it calls
``discord-watch`` from the shell, as CodeBridge's skill calls its CLI; the other skill is about
MCP tools, which ``install`` does not register for it. Its folders are OpenClaw's documented
managed skills (``~/.openclaw/skills``, shared by the machine's agents) and workspace skills
(``<workspace>/skills``, the current directory).

Found in the pinned CLIs (Claude Code 2.1.330: ``<config dir>/skills``; Codex 0.169: its
"codex-home-skills" location, ``$CODEX_HOME/skills``, and ``.agents/skills`` in a repository;
Gemini CLI 0.61: ``Storage.getUserSkillsDir()``, ``~/.gemini/skills``, and the workspace's
``.gemini/skills``) and checked end to end (tests/e2e/test_delegate_e2e.py). A skill is a
folder with a ``SKILL.md`` (name and description in its front matter, the body loaded when
used): other assistants that read Agent Skills folders can use the same folder as it is.

Idempotent: a skill already there with the same text is left alone; a changed one is replaced
(the old file kept as ``SKILL.md.bak-<time>``). No skill holds a token or any setting.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Literal

from discord_mcp.setup.clients import Scope

SKILLS = ("delegate-coding", "discord-decisions")
SkillClient = Literal["claude", "codex", "gemini", "openclaw"]


def skills_for(client: SkillClient) -> tuple[str, ...]:
    """The skills ``client`` gets (OpenClaw: only the one that needs no MCP server)."""
    return ("delegate-coding",) if client == "openclaw" else SKILLS


def skill_text(name: str) -> str:
    """The ``SKILL.md`` of a shipped skill."""
    path = resources.files("discord_mcp").joinpath(f"skills/{name}/SKILL.md")
    return path.read_text(encoding="utf-8")


def skills_dir(
    client: SkillClient, scope: Scope, *, home: Path, cwd: Path, environ: dict[str, str]
) -> Path:
    """Where ``client`` loads skills from for ``scope``."""
    if client == "openclaw":
        return cwd / "skills" if scope == "project" else home / ".openclaw" / "skills"
    if client == "claude":
        if scope == "project":
            return cwd / ".claude" / "skills"
        base = environ.get("CLAUDE_CONFIG_DIR")
        return (Path(base) if base else home / ".claude") / "skills"
    if client == "codex":
        if scope == "project":
            return cwd / ".agents" / "skills"
        base = environ.get("CODEX_HOME")
        return (Path(base) if base else home / ".codex") / "skills"
    if scope == "project":
        return cwd / ".gemini" / "skills"
    base = environ.get("GEMINI_CLI_HOME")
    return (Path(base) if base else home) / ".gemini" / "skills"


@dataclass(frozen=True, slots=True)
class SkillsResult:
    """What ``install --skills`` did, per skill: its file and whether it changed."""

    client: SkillClient
    placed: tuple[tuple[Path, bool, Path | None], ...]

    def describe(self) -> str:
        lines = []
        for path, changed, backup in self.placed:
            if not changed:
                lines.append(f"{path}\n  already up to date: skill '{path.parent.name}'")
                continue
            lines.append(f"{path}\n  * skill '{path.parent.name}' placed for {self.client}")
            if backup is not None:
                lines.append(f"  backup of the previous file: {backup}")
        return "\n".join(lines)


def install_skills(
    client: SkillClient, scope: Scope, *, home: Path, cwd: Path, environ: dict[str, str]
) -> SkillsResult:
    """Place every shipped skill for ``client`` (see the module doc)."""
    from discord_mcp.setup.install import backup, write_text

    directory = skills_dir(client, scope, home=home, cwd=cwd, environ=environ)
    placed: list[tuple[Path, bool, Path | None]] = []
    for name in skills_for(client):
        text = skill_text(name)
        path = directory / name / "SKILL.md"
        try:
            current = path.read_text(encoding="utf-8")
        except OSError:
            current = None
        if current == text:
            placed.append((path, False, None))
            continue
        saved = backup(path)
        write_text(path, text)
        path.chmod(0o644)  # a skill is no secret: the client may run as another process
        placed.append((path, True, saved))
    return SkillsResult(client, tuple(placed))
