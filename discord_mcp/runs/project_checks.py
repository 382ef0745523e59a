"""The checks of a project's settings (:mod:`discord_mcp.runs.projects`): its tools, the argv
fragments given to each, and a setting's allowed values. Each refuses with the
:class:`~discord_mcp.errors.RunError` the owner reads.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence

from discord_mcp.errors import RunError
from discord_mcp.runs.journal.model import TOOLS
from discord_mcp.runs.journal.views import Tool


def check_setting(key: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise RunError("E_INVALID_SETTING", f"{key} {value!r} is not one of {', '.join(allowed)}")


def check_tools(
    tools: Iterable[str], default: str | None, agents: Sequence[str] = ()
) -> tuple[Tool, ...]:
    if isinstance(tools, str):
        tools = [t.strip() for t in tools.split(",")]
    unique: list[Tool] = []
    for tool in tools:
        if tool not in TOOLS and tool not in agents:
            choices = ", ".join((*TOOLS, *agents))
            raise RunError(
                "E_INVALID_TOOLSET",
                f"{tool!r} is not a tool we can run: choose from {choices} (an ACP agent is "
                "added with `discord-watch agent add NAME -- COMMAND`)",
            )
        if tool not in unique:
            unique.append(tool)
    if not unique:
        raise RunError(
            "E_INVALID_TOOLSET", f"a project needs at least one tool: one of {', '.join(TOOLS)}"
        )
    if default is not None and default not in unique:
        raise RunError(
            "E_INVALID_TOOLSET",
            f"the default tool {default!r} is not among the project's tools "
            f"({', '.join(unique)}): add it to the tools or pick one of them",
        )
    return tuple(unique)


def args_from_json(text: str) -> dict[str, list[str]]:
    """``args_json`` as seed 000's ``/project create`` takes it: a JSON object of tool -> argv
    list (``{"codex": ["--model", "o3"]}``), the project file's ``default_args``. Each value is
    held to what ``discord-watch project add --args TOOL=JSON_ARGV`` takes (a JSON list of
    strings, never one shell string); :meth:`ProjectRegistry.add` then checks the tools.

    Raises:
        RunError: E_INVALID_ARGS.
    """
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if not isinstance(value, dict) or not all(
        isinstance(argv, list) and all(isinstance(a, str) for a in argv) for argv in value.values()
    ):
        raise RunError(
            "E_INVALID_ARGS",
            "args_json must be a JSON object of tool -> list of strings, e.g. "
            '{"codex": ["--model", "o3"]} (argv fragments; no shell)',
        )
    return {str(tool): list(argv) for tool, argv in value.items()}


def check_args(
    args: Mapping[str, Sequence[str]], agents: Sequence[str] = ()
) -> dict[Tool, tuple[str, ...]]:
    checked: dict[Tool, tuple[str, ...]] = {}
    for tool, value in args.items():
        if tool not in TOOLS and tool not in agents:
            raise RunError(
                "E_INVALID_ARGS",
                f"default args for {tool!r}: not a tool; use one of {', '.join(TOOLS)}",
            )
        if isinstance(value, str) or not all(isinstance(a, str) for a in value):
            raise RunError(
                "E_INVALID_ARGS",
                f"default args for {tool} must be a list of strings (argv fragments, e.g. "
                '["--model", "x"]), never one shell string',
            )
        if any("\0" in a for a in value):
            raise RunError("E_INVALID_ARGS", f"default args for {tool} contain a NUL character")
        checked[tool] = tuple(value)
    return {tool: checked.get(tool, ()) for tool in dict.fromkeys((*TOOLS, *checked))}
