"""The owner's commands, declared once: Discord's slash commands are built from this table and
the ``!`` text commands are parsed with it. The names are a public contract.

A text command takes its options in the order given here, separated by spaces; an option
marked ``rest`` takes everything that is left (a prompt, a name), and any option may also be
given by name before that, as ``--name value``::

    !start app fix the flaky test          project=app, prompt="fix the flaky test"
    !start app --tool codex fix the test   the same with tool=codex
    !session rename release checks         name="release checks"
    !schedule add 30m check the CI         when=30m, prompt="check the CI"
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from discord_mcp.errors import RunError
from discord_mcp.runs.projects import APPROVAL_MODES
from discord_mcp.watch.commands import Command as TextCommand
from discord_mcp.watch.commands import split_word

STRING, SUB_COMMAND = 3, 1
HIDDEN_FROM_MEMBERS = "0"
"""``default_member_permissions``: only administrators see the commands by default (the guild
owner always does). A convenience, never the check: every handler checks the owner ids."""
VISIBLE_TO = ("admins", "everyone")
"""Who Discord offers the commands to (``DISCORD_WATCH_COMMANDS_FOR``); only owners are obeyed."""


@dataclass(frozen=True)
class Option:
    """One string option of a command."""

    name: str
    description: str
    required: bool = False
    suggest: str | None = None  # autocomplete: project, session, tool, model, job, schedule,
    # chat, machine
    choices: tuple[str, ...] = ()
    rest: bool = False  # in text: takes the rest of the line

    def to_discord(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "type": STRING,
            "name": self.name,
            "description": self.description,
            "required": self.required,
        }
        if self.suggest:
            data["autocomplete"] = True
        if self.choices:
            data["choices"] = [{"name": c, "value": c} for c in self.choices]
        return data


@dataclass(frozen=True)
class Spec:
    """A command (``"status"``) or a subcommand (``"project add"``) and its options."""

    path: str
    description: str
    options: tuple[Option, ...] = ()

    @property
    def usage(self) -> str:
        parts = [f"`/{self.path}"]
        for option in self.options:
            parts.append(f"<{option.name}>" if option.required else f"[{option.name}]")
        return " ".join(parts) + "`"

    def option(self, name: str) -> Option | None:
        return next((o for o in self.options if o.name == name), None)


def _o(name: str, description: str, **fields: Any) -> Option:
    return Option(name, description, **fields)


PROJECT = _o("project", "A project", required=True, suggest="project")
MACHINE = _o("machine", "The machine it goes on (default: the first live one)", suggest="machine")
SESSION = _o("session", "A run thread (default: this one)", suggest="session")
PERIODS = ("today", "7d", "30d", "all")

GROUPS = {
    "project": "Projects agents run in",
    "session": "Run threads (sessions)",
    "schedule": "Prompts that run on a schedule",
    "chat": "Chat channels: an agent that answers in a channel",
}

SPECS: tuple[Spec, ...] = (
    Spec(
        "project add",
        "Register a project directory",
        (
            _o("name", "1-40 characters: a-z, 0-9, - and _", required=True),
            _o("path", "Absolute path of an existing directory", required=True),
            _o("tools", "Comma-separated: claude,codex,gemini (default: all three)"),
            _o("default", "The tool new sessions use", suggest="tool"),
            _o(
                "approvals",
                "Tool calls: ask (writes and commands ask you, default), ask-all, off",
                choices=APPROVAL_MODES,
            ),
            MACHINE,
            _o(
                "worktrees",
                "Each run in a git worktree of its own, to merge or discard (default: no)",
                choices=("yes", "no"),
            ),
            _o(
                "args_json",
                'Extra arguments per tool, JSON: {"codex": ["--model", "o3"]}',
            ),
        ),
    ),
    Spec(
        "project new",
        "Create a project folder under the allowed roots and register it",
        (
            _o(
                "name", "1-40 characters: a-z, 0-9, - and _ (also the folder's name)", required=True
            ),
            _o("tools", "Comma-separated tools or ACP agents (default: claude,codex,gemini)"),
            _o("default", "The tool new sessions use", suggest="tool"),
            _o("git", "Run git init in it (default: no)", choices=("yes", "no")),
            MACHINE,
        ),
    ),
    Spec("project list", "List projects"),
    Spec("project status", "How busy a project is", (PROJECT,)),
    Spec("project remove", "Remove a project", (PROJECT,)),
    Spec(
        "start",
        "Open a run thread (and give its agent a first prompt)",
        (
            PROJECT,
            _o(
                "prompt",
                "What the agent should do (without: the thread opens and waits for you)",
                rest=True,
            ),
            _o(
                "tool",
                "claude, codex, gemini or an ACP agent (default: the project's)",
                suggest="tool",
            ),
            _o("model", "The model (default: the CLI's)", suggest="model"),
            _o(
                "worktree",
                "Work in a git worktree of its own (default: as the project says)",
                choices=("yes", "no"),
            ),
        ),
    ),
    Spec(
        "diff",
        "What a run changed: its patch, here",
        (_o("run", "A run id (default: this thread's run)"),),
    ),
    Spec(
        "session list",
        "Run threads, most recent first",
        (_o("project", "Only this project", suggest="project"),),
    ),
    Spec("session close", "Close a run thread's session", (SESSION,)),
    Spec(
        "session open",
        "Open a session's thread (unarchived) to go on there",
        (_o("session", "The run thread", required=True, suggest="session"),),
    ),
    Spec(
        "session reopen",
        "Reopen a closed session",
        (_o("session", "The run thread", required=True, suggest="session"),),
    ),
    Spec(
        "session rename",
        "Rename a run thread",
        (_o("name", "The new name", required=True, rest=True), SESSION),
    ),
    Spec("status", "This session, or everything", (SESSION,)),
    Spec(
        "tool",
        "Switch the agent CLI from the next job on",
        (
            _o("tool", "claude, codex, gemini or an ACP agent", required=True, suggest="tool"),
            SESSION,
        ),
    ),
    Spec(
        "model",
        "Switch the model from the next job on",
        (_o("model", "A model name, or default", required=True, suggest="model"), SESSION),
    ),
    Spec(
        "retry",
        "Run a failed job again",
        (_o("job", "The job (default: the last failed one)", suggest="job"), SESSION),
    ),
    Spec("stop", "Stop the running job", (SESSION,)),
    Spec(
        "cancel",
        "Cancel waiting jobs",
        (_o("job", "One job (default: every waiting one)", suggest="job"), SESSION),
    ),
    Spec(
        "logs",
        "The tail of a job's log",
        (_o("job", "The job (default: this thread's latest)", suggest="job"),),
    ),
    Spec(
        "usage",
        "Tokens and cost per day, project and thread",
        (
            _o("project", "Only this project", suggest="project"),
            _o("period", "today, 7d, 30d or all (default: 7d)", choices=PERIODS),
        ),
    ),
    Spec("pending", "Open questions and approvals, with links"),
    Spec(
        "schedule add",
        "Run a prompt on a schedule, or a chat channel's heartbeat",
        (
            _o(
                "when",
                'every 30m, daily 09:00 (UTC), cron:"0 9 * * *" tz:Asia/Tokyo',
                required=True,
            ),
            _o("prompt", "What the agent does each time (a heartbeat: HEARTBEAT.md)", rest=True),
            _o("project", "Run in a new thread of this project", suggest="project"),
            SESSION,
            _o("chat", "A chat channel: its heartbeat", suggest="chat"),
        ),
    ),
    Spec("schedule list", "Scheduled prompts"),
    Spec(
        "schedule remove",
        "Remove a scheduled prompt",
        (_o("schedule", "The schedule", required=True, suggest="schedule"),),
    ),
    Spec(
        "chat add",
        "Make a channel a chat channel: an agent answers there",
        (
            _o("tool", "claude, codex, gemini or an ACP agent", required=True, suggest="tool"),
            _o("channel", "The channel id (default: this channel)"),
            _o(
                "project",
                "Work in this project (default: the chat's own folder)",
                suggest="project",
            ),
            _o("persona", "A folder of persona files (default: <state>/chat/<channel id>)"),
            _o("history", "How many recent messages each turn reads (default 10)"),
            _o("who", "Who it answers: owners (default), everyone, or role ids"),
            _o(
                "keep_session",
                "Keep the agent's session between turns (default: no)",
                choices=("yes", "no"),
            ),
            _o(
                "on_failure",
                "When a turn fails: a short line (notice, default) or nothing (silent)",
                choices=("notice", "silent"),
            ),
        ),
    ),
    Spec("chat list", "Chat channels"),
    Spec(
        "chat remove",
        "Stop answering in a chat channel",
        (_o("channel", "The channel (default: this channel)", suggest="chat"),),
    ),
    Spec("help", "What you can do here"),
)

BY_PATH = {spec.path: spec for spec in SPECS}


def discord_commands(visible_to: str = "admins") -> list[dict[str, Any]]:
    """The CHAT_INPUT commands to register (the body of a bulk overwrite of a guild's).

    ``visible_to``: ``admins`` (Discord offers them to administrators only) or ``everyone``
    (every member sees them; the handlers still answer only the owners). No ``contexts``: only
    global commands take it, and Discord keeps none for a guild's, so sending it would make
    every start see a difference and register again.
    """
    commands: dict[str, dict[str, Any]] = {}
    for spec in SPECS:
        head, _, sub = spec.path.partition(" ")
        if head not in commands:
            commands[head] = {
                "type": 1,
                "name": head,
                "description": GROUPS.get(head, spec.description),
                "options": [],
                "default_member_permissions": (
                    HIDDEN_FROM_MEMBERS if visible_to == "admins" else None
                ),
            }
        options = [option.to_discord() for option in spec.options]
        if sub:
            commands[head]["options"].append(
                {"type": SUB_COMMAND, "name": sub, "description": spec.description}
                | ({"options": options} if options else {})
            )
        else:
            commands[head]["options"] = options
    return list(commands.values())


def from_text(command: TextCommand) -> tuple[Spec, dict[str, str]]:
    """The spec and options of a ``!`` command.

    Raises:
        RunError: E_UNKNOWN_COMMAND, E_BAD_ARGUMENTS (with the usage).
    """
    name, tail = command.name, command.text
    if name in GROUPS:
        sub, tail = split_word(tail)
        name = f"{name} {sub.lower()}" if sub else name
    spec = BY_PATH.get(name)
    if spec is None:
        raise RunError("E_UNKNOWN_COMMAND", f"there is no command `!{name}`: see `!help`")
    options: dict[str, str] = {}
    positional = list(spec.options)
    rest = tail.strip()
    while rest:
        word, after = split_word(rest)
        if word.startswith("--") and len(word) > 2:
            key, eq, value = word[2:].partition("=")
            option = spec.option(key)
            if option is None:
                raise _bad(spec, f"it has no option --{key}")
            if not eq:
                value, after = split_word(after)
            options[key] = value
            rest = after.strip()
            continue
        positional = [o for o in positional if o.name not in options]
        if not positional:
            raise _bad(spec, f"{rest!r} is more than it takes")
        option = positional.pop(0)
        if option.rest:
            options[option.name] = rest
            break
        options[option.name] = word
        rest = after.strip()
    missing = [o.name for o in spec.options if o.required and o.name not in options]
    if missing and spec.path != "start":  # the text !start may open a thread without a prompt
        raise _bad(spec, f"{', '.join(missing)} missing")
    return spec, options


def _bad(spec: Spec, problem: str) -> RunError:
    usage = spec.usage.replace("`/", "`!", 1)
    return RunError("E_BAD_ARGUMENTS", f"{problem}; usage: {usage}")
