"""``discord-mcp demo model``: the scripted model on its own, for delegation with a real CLI.

``discord-mcp demo --agent`` wires the scripted model (:mod:`discord_mcp.demo.model`) into its
own ``discord-watch``; this command starts the model alone and prints the environment that
points Claude Code, Codex and Gemini CLI at it, so ``discord-watch --local`` and ``discord-watch
submit`` can be tried with a real CLI and no key. The CLIs' settings live in a folder of this
command's own (``CLAUDE_CONFIG_DIR``, ``CODEX_HOME``, ``GEMINI_CLI_HOME``): the user's own
configuration is neither read nor changed, and the folder is removed when the model stops
(Ctrl-C or SIGTERM) unless it was given with ``--home``. ``HTTPS_PROXY`` points at the model,
which refuses, as a proxy, anything meant for the internet: use the variables with a local
``discord-watch`` (or the emulator), not with one connected to the real Discord.

The model plays one job per turn (:func:`delegation_step`): it writes ``DELEGATED.md`` in the
project with the task it was given, using the CLI's own tool, then says what it did.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shlex
import signal
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

from discord_mcp.demo.agents import codex_config, gemini_settings
from discord_mcp.demo.model import BuiltinCall, ModelRequest, ModelServer, Reply, ShellCall, Text
from discord_mcp.emulator.cli import _port

FILE = "DELEGATED.md"
DONE = "Done: I wrote DELEGATED.md with the task"
"""How the scripted model's answer begins when the file was written."""
PROJECT_ARGS = {
    "claude": '["--permission-mode","acceptEdits"]',
    "codex": '["-s","workspace-write"]',
    "gemini": '["--approval-mode","auto_edit"]',
}
"""What ``project add --args`` gives each CLI so the model's write is allowed without asking
(a local discord-watch has nobody to ask): file edits only, never every command."""


def environment(home: Path, model_url: str) -> dict[str, str]:
    """The variables that point the three CLIs at the model, their settings under ``home``."""
    claude, codex, gemini = home / "claude", home / "codex", home / "gemini"
    for folder in (claude, codex, gemini / ".gemini"):
        folder.mkdir(parents=True, exist_ok=True)
    (codex / "config.toml").write_text(codex_config(model_url), encoding="utf-8")
    (gemini / ".gemini" / "settings.json").write_text(gemini_settings(), encoding="utf-8")
    return {
        "ANTHROPIC_BASE_URL": model_url,
        "ANTHROPIC_API_KEY": "sk-ant-discord-mcp-demo",
        "CLAUDE_CONFIG_DIR": str(claude),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_MAX_RETRIES": "0",
        "ENABLE_TOOL_SEARCH": "false",
        "CODEX_HOME": str(codex),
        "DEMO_MODEL_API_KEY": "sk-discord-mcp-demo",
        "GEMINI_CLI_HOME": str(gemini),
        "GOOGLE_GEMINI_BASE_URL": model_url,
        "GEMINI_API_KEY": "gemini-discord-mcp-demo",
        "GEMINI_CLI_TRUST_WORKSPACE": "true",
        "HTTPS_PROXY": model_url,
        "HTTP_PROXY": model_url,
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }


_CWD = (
    re.compile(r"Working directory: ([^\s\"\\]+)"),  # Claude Code's system prompt
    re.compile(r"<cwd>([^<\"\\]+)</cwd>"),  # Codex's environment context
)


def _workdir(request: ModelRequest) -> str | None:
    dump = request.dump()
    for pattern in _CWD:
        found = pattern.search(dump)
        if found:
            return found.group(1)
    return None


_EXIT = re.compile(r"^Process exited with code (\d+)$", re.M)


def _failed_exit(output: str) -> bool:
    """Whether a Codex shell result says its command failed (Codex sends a failed command's
    output as a plain result, ``Process exited with code 1``)."""
    found = _EXIT.search(output)
    return found is not None and found.group(1) != "0"


def delegation_step(request: ModelRequest) -> Reply:
    """The scripted model's move in a delegated turn: write the task into ``DELEGATED.md``
    with the CLI's own tool, then report. Decided from the request alone, so one step serves
    every turn of every run, in each CLI's wire format."""
    results = request.latest_tool_results()
    if results:
        last = results[-1]
        if last.is_error or _failed_exit(last.text):
            return Text(f"I could not write {FILE}: {last.text[:300]}")
        return Text(
            f"{DONE} (the scripted model of discord-mcp demo model; a real model would have "
            "done the task)."
        )
    said = request.user_texts()
    task = " ".join((said[-1] if said else "").split())[:300] or "(no task)"
    text = f"# Delegated\n\nThe task: {task}\n"
    if request.api == "anthropic":
        where = _workdir(request)
        if where:
            return BuiltinCall("Write", {"file_path": f"{where}/{FILE}", "content": text})
    if request.api == "gemini":
        return BuiltinCall("write_file", {"file_path": FILE, "content": text})
    return ShellCall(f"printf %s {shlex.quote(text)} > {FILE}", f"write {FILE}")


def exports(env: dict[str, str]) -> list[str]:
    """``export NAME=value`` lines a POSIX shell reads (``. FILE``)."""
    return [f"export {name}={shlex.quote(value)}" for name, value in env.items()]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="discord-mcp demo model",
        description=(
            "Start the scripted model alone (no key, no network) and print the environment "
            "that points Claude Code, Codex and Gemini CLI at it, to try discord-watch submit "
            "with a real CLI. Stop it with Ctrl-C."
        ),
    )
    parser.add_argument("--port", type=_port, default=0, help="port, 0 for any free one")
    parser.add_argument(
        "--env-file",
        type=Path,
        help="also write the export lines there (read them with `. FILE`)",
    )
    parser.add_argument(
        "--home",
        type=Path,
        help="keep the CLIs' settings and sessions there (default: a folder under "
        "~/.cache/discord-mcp, removed at the end)",
    )
    return parser


@contextlib.contextmanager
def _folder(given: Path | None) -> Iterator[Path]:
    if given is not None:
        given.mkdir(parents=True, exist_ok=True)
        yield given.resolve()
        return
    # Not under the temporary directory: Codex refuses to make its sandbox helper (the
    # codex-linux-sandbox alias) under a CODEX_HOME there, and every shell command then fails.
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "discord-mcp"
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="demo-model-", dir=cache) as name:
        yield Path(name).resolve()


def _say(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def main(argv: list[str]) -> int:
    """Serve until Ctrl-C or SIGTERM; returns the exit code."""
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2
    stopped = threading.Event()

    def stop(signum: int, frame: object) -> None:
        stopped.set()

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        with _folder(args.home) as home:
            try:
                model = ModelServer(delegation_step, repeat=True, port=args.port).start()
            except OSError as exc:
                sys.stderr.write(f"discord-mcp demo model: cannot listen: {exc}\n")
                return 1
            try:
                lines = exports(environment(home, model.base_url))
                _say(f"# The scripted model listens on {model.base_url} (Ctrl-C stops it).")
                _say(f"# The CLIs' settings: {home}")
                _say("# Set these where discord-watch --local runs, then add a project with")
                args_line = " ".join(f"{k}='{v}'" for k, v in PROJECT_ARGS.items())
                _say(f"#   --args {args_line}")
                _say("# and `discord-watch submit PROJECT 'a task' --wait --json`.")
                for line in lines:
                    _say(line)
                if args.env_file is not None:
                    temporary = args.env_file.with_name(f".{args.env_file.name}.tmp")
                    temporary.write_text("\n".join(lines) + "\n", encoding="utf-8")
                    temporary.replace(args.env_file)
                with contextlib.suppress(KeyboardInterrupt):
                    while not stopped.wait(0.5):
                        pass
                _say("# the scripted model stopped")
            finally:
                model.stop()
    finally:
        signal.signal(signal.SIGTERM, previous)
    return 0
