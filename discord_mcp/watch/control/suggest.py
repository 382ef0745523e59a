"""Autocomplete: what the owner is offered while typing an option (Discord shows at most 25).

Projects (this machine's, then every other live machine's, labelled with it), session threads
(labelled with their project and first prompt), tools (the project's, when the command names
one), models (an ACP agent's: the ones its sessions offered; a CLI's: well-known names of the
thread's tool, the project's own ``--model`` arguments and models used before), jobs,
schedules and the live machines; each list is filtered by what was typed so far (any part of
the label or value, case-insensitive).
"""

from __future__ import annotations

from collections.abc import Mapping

from discord_mcp.errors import RunError
from discord_mcp.runs import TOOLS
from discord_mcp.runs.journal.model import is_builtin, is_tool
from discord_mcp.watch.control.base import Controls
from discord_mcp.watch.control.spec import BY_PATH
from discord_mcp.watch.control.words import clip

MAX = 25
KNOWN_MODELS: Mapping[str, tuple[str, ...]] = {
    "claude": ("sonnet", "opus", "haiku"),
    "codex": ("gpt-5-codex", "gpt-5", "o3"),
    "gemini": ("gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite"),
}

Choice = tuple[str, str]


def suggestions(
    c: Controls, command: str, focused: str, typed: str, options: Mapping[str, str], channel: str
) -> list[Choice]:
    """Choices ``(name, value)`` for the focused option of ``command``."""
    spec = BY_PATH.get(command)
    option = spec.option(focused) if spec else None
    if option is None or option.suggest is None:
        return []
    kind = option.suggest
    if kind == "project":
        found = [(p.name, p.name) for p in c.projects.list()]
        if c.team is not None:
            mine = {value for _, value in found}
            found += [(f"{p} · on {m}", p) for p, m in c.team.all_projects() if p not in mine]
    elif kind == "machine":
        names = c.team.roster.live_names() if c.team is not None else [c.settings.machine]
        found = [(n, n) for n in names]
    elif kind == "session":
        found = _sessions(c)
    elif kind == "tool":
        found = [(t, t) for t in _tools(c, options, channel)]
    elif kind == "model":
        found = _models(c, options, channel)
    elif kind == "job":
        found = _jobs(c, options.get("session") or channel)
    elif kind == "chat":
        chats = c.chat.channels() if c.chat is not None else []
        labels = c.chat.names() if c.chat is not None else {}
        found = [
            (f"#{labels.get(x.channel_id, x.channel_id)} · {x.tool} · {x.who_text()}", x.channel_id)
            for x in chats
        ]
    else:  # schedules: read by the caller off the loop? a tiny file; read here.
        found = [(f"{s.id} · {s.when} · {clip(s.prompt, 60)}", s.id) for s in c.schedules.list()]
    needle = typed.strip().lower()
    matching = [(n, v) for n, v in found if needle in n.lower() or needle in v.lower()]
    return matching[:MAX]


def _sessions(c: Controls) -> list[Choice]:
    choices = []
    for s in c.engine.sessions():
        jobs = c.engine.jobs(s.thread_id)
        first = clip(jobs[0].prompt, 50) if jobs else "no job yet"
        closed = " (closed)" if s.closed else ""
        choices.append((f"{s.project_name} · {first} · {s.state}{closed}", s.thread_id))
    return choices


def _project_of(c: Controls, options: Mapping[str, str], channel: str) -> str | None:
    if options.get("project"):
        return options["project"]
    session = c.engine.session(options.get("session") or channel)
    return session.project_name if session else None


def _tools(c: Controls, options: Mapping[str, str], channel: str) -> tuple[str, ...]:
    name = _project_of(c, options, channel)
    if name:
        try:
            return c.projects.get(name).tools
        except RunError:
            pass
    try:
        return (*TOOLS, *c.projects.agent_names())
    except RunError:
        return TOOLS


def _models(c: Controls, options: Mapping[str, str], channel: str) -> list[Choice]:
    session = c.engine.session(options.get("session") or channel)
    tool = options.get("tool") or (session.tool if session else "")
    if tool and not is_builtin(tool):  # an ACP agent: the models its sessions offer
        offered = c.engine.agent_models(tool)
        if offered:
            return [("default (the agent's own)", "default")] + [
                (m.label(), m.model_id) for m in offered
            ]
    tools = (
        (tool,)
        if tool in KNOWN_MODELS or (tool and not is_builtin(tool))
        else _tools(c, options, channel)
    )
    names: list[str] = []
    project = None
    if name := _project_of(c, options, channel):
        try:
            project = c.projects.get(name)
        except RunError:
            project = None
    for t in tools:
        args = list(project.args_for(t)) if project and is_tool(t) else []
        names += [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("--model", "-m")]
    names += [s.model for s in c.engine.sessions() if s.model]
    for t in tools:
        names += KNOWN_MODELS.get(t, ())
    unique = list(dict.fromkeys(["default", *names]))
    return [(n if n != "default" else "default (the CLI's own)", n) for n in unique]


def _jobs(c: Controls, thread_id: str) -> list[Choice]:
    jobs = c.engine.jobs(thread_id) or c.engine.jobs()
    return [
        (f"{j.job_id} · {j.state} · {clip(j.prompt, 50)}", j.job_id) for j in reversed(jobs[-MAX:])
    ]
