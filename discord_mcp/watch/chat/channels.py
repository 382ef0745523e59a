"""The chat channels: where an agent lives and answers (``<state>/chat/channels.json``).

The file is a public contract, version 1::

    {"version": 1,
     "channels": {"1359...": {"channel_id": "1359...", "tool": "claude",
                              "project": "app" | null, "persona": "/abs/dir" | null,
                              "history": 10, "who": "owners" | "everyone" | ["role id", ...],
                              "keep_session": false, "on_failure": "notice",
                              "created_at": "...Z"}}}

``persona`` null means the default folder, ``<state>/chat/<channel id>/`` (created by ``chat
add``). A channel without a project works in its persona folder: the engine sees it as the
project ``chat-<channel id>`` (:class:`ChatProjects`), with the chat's tool and the default
settings (approvals ``ask``). ``on_failure`` (absent: ``notice``) says whether a failed turn
answers with one short line (``notice``) or says nothing (``silent``: only the log has it).

Changes are read-modify-writes under the file's lock: the command line and the daemon may both
write it; the daemon reads it again at every message.
"""

from __future__ import annotations

import builtins
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from discord_mcp.errors import RunError
from discord_mcp.runs.journal.model import TOOLS, utc_iso
from discord_mcp.runs.projects import Project, ProjectRegistry
from discord_mcp.runs.restricted import check_engine
from discord_mcp.state.files import ensure_dir, locked, read_json, write_json

VERSION = 1
HISTORY_RANGE = (0, 50)
DEFAULT_HISTORY = 10
WHO_MODES = ("owners", "everyone")
ON_FAILURE = ("notice", "silent")
_SNOWFLAKE = re.compile(r"^\d{15,21}$")
PROJECT_PREFIX = "chat-"


@dataclass(frozen=True)
class ChatChannel:
    """One chat channel's settings (see the module doc)."""

    channel_id: str
    tool: str
    project: str | None = None
    persona: str | None = None
    history: int = DEFAULT_HISTORY
    who: str | tuple[str, ...] = "owners"
    keep_session: bool = False
    created_at: str = ""
    on_failure: str = "notice"

    @property
    def project_name(self) -> str:
        """The project its turns run in (its own, derived one without ``--project``)."""
        return self.project or f"{PROJECT_PREFIX}{self.channel_id}"

    @property
    def open_to_others(self) -> bool:
        """Whether anyone but the owners may start a turn."""
        return self.who != "owners"

    def persona_dir(self, home: Path) -> Path:
        return Path(self.persona) if self.persona else default_persona_dir(home, self.channel_id)

    def who_text(self) -> str:
        return self.who if isinstance(self.who, str) else "roles " + ", ".join(self.who)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["who"] = self.who if isinstance(self.who, str) else list(self.who)
        return data


def default_persona_dir(home: Path, channel_id: str) -> Path:
    return home / "chat" / channel_id


def parse_who(text: str) -> str | tuple[str, ...]:
    """``owners``, ``everyone``, or comma-separated role ids.

    Raises:
        RunError: E_BAD_ARGUMENTS.
    """
    given = text.strip().lower()
    if given in WHO_MODES:
        return given
    roles = tuple(part.strip() for part in given.replace("<@&", "").replace(">", "").split(","))
    if roles and all(_SNOWFLAKE.match(role) for role in roles):
        return tuple(dict.fromkeys(roles))
    raise RunError(
        "E_BAD_ARGUMENTS",
        f"{text!r} is not who may talk: write owners, everyone, or role ids separated by commas",
    )


class ChatStore:
    """The chat channels in ``<state_dir>/chat/channels.json`` (blocking: call off the event
    loop)."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.path = home / "chat" / "channels.json"

    def list(self) -> builtins.list[ChatChannel]:
        return [_load(e) for _, e in sorted(self._read()["channels"].items())]

    def get(self, channel_id: str) -> ChatChannel | None:
        entry = self._read()["channels"].get(str(channel_id))
        return _load(entry) if entry is not None else None

    def add(
        self,
        channel_id: str,
        *,
        tool: str,
        projects: ProjectRegistry,
        project: str | None = None,
        persona: str | None = None,
        history: int = DEFAULT_HISTORY,
        who: str = "owners",
        keep_session: bool = False,
        on_failure: str = "notice",
        now: float,
    ) -> ChatChannel:
        """Make ``channel_id`` a chat channel (replacing its settings if it was one).

        Raises:
            RunError: E_BAD_ARGUMENTS, E_PROJECT_NOT_FOUND, E_TOOL_NOT_ENABLED,
                E_UNKNOWN_TOOL, E_RESTRICTED_NOT_ENFORCEABLE, E_INVALID_PATH.
        """
        channel_id = str(channel_id).strip()
        if not _SNOWFLAKE.match(channel_id):
            raise RunError("E_BAD_ARGUMENTS", f"{channel_id!r} is not a channel id (digits)")
        low, high = HISTORY_RANGE
        if not low <= history <= high:
            raise RunError("E_BAD_ARGUMENTS", f"history must be {low} to {high} messages")
        chosen_who = parse_who(who)
        if on_failure not in ON_FAILURE:
            raise RunError(
                "E_BAD_ARGUMENTS",
                f"on-failure {on_failure!r}: write notice (a short line) or silent (nothing)",
            )
        if tool not in TOOLS and tool not in projects.agent_names():
            known = ", ".join((*TOOLS, *projects.agent_names()))
            raise RunError("E_UNKNOWN_TOOL", f"{tool!r} is not a tool here: use one of {known}")
        if chosen_who != "owners":
            check_engine(tool)  # a stranger's turn must be lockable
        if project is not None:
            found = projects.get(project)
            if tool not in found.tools:
                raise RunError(
                    "E_TOOL_NOT_ENABLED",
                    f"project {found.name!r} does not enable {tool}: add it to the project's "
                    "tools, or choose another",
                )
            project = found.name
        folder = Path(persona).expanduser() if persona else None
        if folder is not None:
            if not folder.is_absolute():
                raise RunError("E_INVALID_PATH", f"--persona {persona}: give an absolute path")
            if not folder.is_dir():
                raise RunError("E_INVALID_PATH", f"--persona {persona} is not a directory")
            folder = folder.resolve()
        else:
            ensure_dir(default_persona_dir(self.home, channel_id))
        chat = ChatChannel(
            channel_id=channel_id,
            tool=tool,
            project=project,
            persona=str(folder) if folder is not None else None,
            history=history,
            who=chosen_who,
            keep_session=keep_session,
            created_at=utc_iso(now),
            on_failure=on_failure,
        )
        ensure_dir(self.path.parent)
        with locked(self.path):
            document = self._read()
            document["channels"][channel_id] = chat.to_dict()
            write_json(self.path, document)
        return chat

    def remove(self, channel_id: str) -> ChatChannel:
        """Stop answering in ``channel_id`` (its persona folder stays).

        Raises:
            RunError: E_CHAT_NOT_FOUND.
        """
        with locked(self.path):
            document = self._read()
            entry = document["channels"].pop(str(channel_id).strip(), None)
            if entry is None:
                raise RunError(
                    "E_CHAT_NOT_FOUND", f"{channel_id} is not a chat channel: see chat list"
                )
            write_json(self.path, document)
        return _load(entry)

    def _read(self) -> dict[str, Any]:
        document = read_json(self.path, max_version=VERSION)
        if document is None:
            document = {"version": VERSION}
        document.setdefault("channels", {})
        return document


class ChatProjects:
    """The projects of chat channels that have none of their own (``chat-<channel id>``, in
    the persona folder): :class:`~discord_mcp.runs.projects.ImplicitProjects` for the engine."""

    def __init__(self, store: ChatStore) -> None:
        self.store = store

    def get(self, name: str) -> Project | None:
        if not name.startswith(PROJECT_PREFIX):
            return None
        chat = self.store.get(name[len(PROJECT_PREFIX) :])
        if chat is None or chat.project is not None:
            return None
        return Project(
            name=name,
            path=chat.persona_dir(self.store.home),
            tools=(chat.tool,),
            default_tool=chat.tool,
            args={},
            created_at=chat.created_at,
            updated_at=chat.created_at,
            stream="off",
        )

    def owns(self, path: Path) -> bool:
        return any(
            chat.project is None and chat.persona_dir(self.store.home).resolve() == path
            for chat in self.store.list()
        )


def _load(entry: dict[str, Any]) -> ChatChannel:
    who = entry.get("who", "owners")
    if isinstance(who, list):
        chosen: str | tuple[str, ...] = tuple(str(role) for role in who)
    else:
        chosen = str(who) if str(who) in WHO_MODES else "owners"
    history = entry.get("history", DEFAULT_HISTORY)
    return ChatChannel(
        channel_id=str(entry["channel_id"]),
        tool=str(entry["tool"]),
        project=str(entry["project"]) if entry.get("project") else None,
        persona=str(entry["persona"]) if entry.get("persona") else None,
        history=history if isinstance(history, int) and not isinstance(history, bool) else 0,
        who=chosen,
        keep_session=entry.get("keep_session") is True,
        created_at=str(entry.get("created_at") or ""),
        on_failure="silent" if entry.get("on_failure") == "silent" else "notice",
    )
