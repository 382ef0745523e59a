"""The ``discord-mcp`` command line.

``discord-mcp`` alone, or ``discord-mcp serve``, runs the MCP stdio server (what an agent's
client starts). Other subcommands are for people. Each subcommand imports its module only when
chosen, so the server's cold start does not pay for the emulator.

Nothing here writes to stdout on the server path: stdout belongs to the MCP protocol.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import cast

from discord_mcp import __version__, heap
from discord_mcp.errors import ConfigError

_EMULATOR_HELP = "run a local Discord (REST, gateway, interactions) on 127.0.0.1"
_DEMO_HELP = "see the whole loop in a browser: local Discord, discord-watch, a scripted agent"
_ENV_HELP = "~/.config/discord-mcp/.env, or under $XDG_CONFIG_HOME"
_HOOK_HELP = (
    "run as an agent CLI's hook: permission-request, before-tool, pre-tool-use, stop, "
    "session-start, network"
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="discord-mcp",
        description=(
            "Let coding agents reach their human over Discord. Without a subcommand, runs the "
            "MCP stdio server (what Claude Code, Codex or Gemini CLI start). Configuration comes "
            "from the environment and a .env file: DISCORD_BOT_TOKEN, DISCORD_CHANNEL_ID, "
            "DISCORD_OWNER_IDS (required), PROJECT_NAME, DISCORD_MCP_HOME, "
            "POLL_INTERVAL_SECONDS, DISCORD_API_BASE, DISCORD_GATEWAY_URL, "
            "DISCORD_MCP_MAX_BLOCK_SECONDS."
        ),
    )
    parser.add_argument("--version", action="version", version=f"discord-mcp {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    serve = sub.add_parser("serve", help="run the MCP stdio server (the default), or over HTTP")
    serve.add_argument(
        "--http",
        action="store_true",
        help="serve MCP streamable HTTP at http://HOST:PORT/mcp instead of stdio (one process "
        "for every client that connects by URL)",
    )
    serve.add_argument("--host", default="127.0.0.1", help="with --http (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8765, help="with --http (default 8765)")
    serve.add_argument(
        "--auth-token",
        help="with --http: every request must carry Authorization: Bearer TOKEN (required "
        "beyond 127.0.0.1; DISCORD_MCP_HTTP_TOKEN keeps it out of the process list)",
    )
    serve.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME[:PORT]",
        help="with --http: also answer requests whose Host is NAME (any port) or NAME:PORT, "
        "beside 127.0.0.1, localhost and [::1] with --port (repeat it; or "
        "DISCORD_MCP_HTTP_ALLOWED_HOSTS, comma-separated)",
    )
    serve.add_argument(
        "--allowed-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="with --http: also answer browser requests from this origin, e.g. "
        "https://tools.example (repeat it; or DISCORD_MCP_HTTP_ALLOWED_ORIGINS); others are "
        "refused",
    )
    serve.add_argument(
        "--max-sessions",
        type=int,
        default=None,
        help="with --http: MCP sessions open at once, at most (default 64; "
        "DISCORD_MCP_HTTP_MAX_SESSIONS)",
    )
    serve.add_argument(
        "--session-idle-seconds",
        type=float,
        default=None,
        help="with --http: close a session after this long without a request (default 1800; "
        "DISCORD_MCP_HTTP_SESSION_IDLE_SECONDS)",
    )
    sub.add_parser("emulator", help=_EMULATOR_HELP, add_help=False)
    sub.add_parser("demo", help=_DEMO_HELP, add_help=False)
    sub.add_parser("hook", help=_HOOK_HELP, add_help=False)
    setup = sub.add_parser("setup", help="set up the Discord side and write a private .env")
    setup.add_argument("--env-file", help=f"where to write (default: {_ENV_HELP})")
    install = sub.add_parser(
        "install", help="register the server with Claude Code, Codex or Gemini CLI"
    )
    install.add_argument(
        "client",
        choices=["claude", "codex", "gemini", "openclaw"],
        help="openclaw: only with --skills (the delegate-coding skill; no MCP server)",
    )
    install.add_argument(
        "--scope",
        choices=["user", "project"],
        default="user",
        help="user: for every project (default); project: this directory only",
    )
    install.add_argument("--env-file", help=f"the .env written by setup (default: {_ENV_HELP})")
    install.add_argument(
        "--approvals",
        action="store_true",
        help="also send the client's tool permission prompts to Discord (its approval hook)",
    )
    install.add_argument(
        "--skills",
        action="store_true",
        help="also place our Agent Skills (delegate-coding: hand a task to discord-watch) where "
        "the client loads skills; needs no .env",
    )
    install.add_argument(
        "--http",
        action="store_true",
        help="claude only: register the URL of a running `discord-mcp serve --http` instead of "
        "a command to start",
    )
    install.add_argument(
        "--url",
        default="http://127.0.0.1:8765/mcp",
        help="with --http: the server's URL (default http://127.0.0.1:8765/mcp)",
    )
    install.add_argument(
        "--hooks",
        action="store_true",
        help="also wire the Stop and SessionStart hooks: no turn ends while a question is "
        "open, and a new session gets the answers that came while away",
    )
    doctor = sub.add_parser("doctor", help="check token, intents, channel, owners, state, clients")
    doctor.add_argument(
        "--env-file",
        help="the .env written by setup (default: DISCORD_MCP_ENV_FILE, else ./.env and "
        f"{_ENV_HELP})",
    )
    schema = sub.add_parser(
        "schema",
        help="print the JSON Schema of a run folder's request, session, result or worktree",
    )
    schema.add_argument("name", choices=["request", "session", "result", "worktree"])
    return parser


def _env_file(given: str | None) -> Path:
    """``--env-file``, else where ``setup`` writes by default."""
    import os

    from discord_mcp.config import default_env_file

    if given:
        return Path(given).expanduser()
    return default_env_file(os.environ) or Path(".env")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``discord-mcp``; returns the process exit code."""
    if argv is None:  # this process's own command line (a test passes its arguments)
        heap.starting()
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "emulator":
        from discord_mcp.emulator.cli import main as emulator_main

        return emulator_main(args[1:])
    if args and args[0] == "demo":
        from discord_mcp.demo.cli import main as demo_main

        return demo_main(args[1:])
    if args and args[0] == "hook":
        from discord_mcp.hooks.cli import main as hook_main

        return hook_main(args[1:], exit_process=True)
    parsed = _parser().parse_args(args)
    if parsed.command == "serve" and parsed.http:
        return _serve_http(parsed)
    if parsed.command in (None, "serve"):
        return _serve()
    if parsed.command == "setup":
        return _setup(_env_file(parsed.env_file))
    if parsed.command == "install" and parsed.client == "openclaw":
        return _install_openclaw(parsed)
    if parsed.command == "install" and parsed.http:
        return _install_http(parsed.client, parsed.scope, parsed.url)
    if parsed.command == "install":
        return _install(
            parsed.client,
            parsed.scope,
            _env_file(parsed.env_file),
            parsed.approvals,
            parsed.hooks,
            skills=parsed.skills,
        )
    if parsed.command == "schema":
        import json

        from discord_mcp.runs.folders.folders import schema

        sys.stdout.write(json.dumps(schema(parsed.name), indent=2) + "\n")
        return 0
    if parsed.command == "doctor":
        return _doctor(parsed.env_file)
    return 2  # argparse rejects unknown commands before this


def _setup(env_file: Path) -> int:
    import asyncio
    import getpass
    import os

    from discord_mcp.config import DEFAULT_API_BASE, default_env_file
    from discord_mcp.setup.clients import launcher
    from discord_mcp.setup.wizard import run_setup

    default = default_env_file(os.environ)
    asyncio.run(
        run_setup(
            ask=input,
            ask_secret=getpass.getpass,
            out=sys.stdout,
            env_file=env_file.resolve(),
            api_base=os.environ.get("DISCORD_API_BASE", DEFAULT_API_BASE).rstrip("/"),
            program=_runnable_self(launcher()),
            default_env=default.resolve() if default is not None else None,
        )
    )
    return 0


def _runnable_self(prefix: list[str]) -> str:
    """How to run discord-mcp again, as a shell line that works where it is printed: the bare
    name when ``discord-mcp`` on PATH is this very program; the full path of this script when
    it lives in a clone's .venv; else ``prefix`` (:func:`~discord_mcp.setup.clients.launcher`,
    e.g. the uvx form, which outlives uvx's cached environment)."""
    import os
    import shlex
    import shutil

    from discord_mcp.setup.clients import from_clone

    script = Path(sys.argv[0])
    found = shutil.which("discord-mcp")
    if script.name != "discord-mcp" or not script.is_file():
        return shlex.join(prefix)
    if found and os.path.realpath(found) == os.path.realpath(script):
        return "discord-mcp"
    return shlex.quote(str(script.resolve())) if from_clone() else shlex.join(prefix)


def _install_openclaw(parsed: argparse.Namespace) -> int:
    """``install openclaw --skills``: the delegate-coding skill where OpenClaw loads skills.
    OpenClaw calls discord-watch from its shell: nothing else is installed for it."""
    import os

    from discord_mcp.setup.clients import Scope
    from discord_mcp.setup.skills import install_skills

    if not parsed.skills or parsed.approvals or parsed.hooks or parsed.http:
        sys.stderr.write(
            "discord-mcp: install openclaw takes --skills (and --scope) only: OpenClaw hands "
            "tasks to discord-watch through the delegate-coding skill\n"
        )
        return 2
    placed = install_skills(
        "openclaw",
        cast(Scope, parsed.scope),
        home=Path.home(),
        cwd=Path.cwd(),
        environ=dict(os.environ),
    )
    sys.stdout.write(placed.describe() + "\n")
    return 0


def _install(
    client: str,
    scope: str,
    env_file: Path,
    approvals: bool = False,
    hooks: bool = False,
    *,
    skills: bool = False,
) -> int:
    import os

    from discord_mcp.setup.approvals import install_hook
    from discord_mcp.setup.clients import Client, Scope
    from discord_mcp.setup.install import Backups, install
    from discord_mcp.setup.session_hooks import install_session_hooks
    from discord_mcp.setup.skills import install_skills

    home, cwd, environ = Path.home(), Path.cwd(), dict(os.environ)
    chosen, scoped = cast(Client, client), cast(Scope, scope)
    if skills:
        placed = install_skills(chosen, scoped, home=home, cwd=cwd, environ=environ)
        sys.stdout.write(placed.describe() + "\n")
        if not env_file.expanduser().is_file() and not (approvals or hooks):
            sys.stdout.write(
                f"no {env_file} (discord-mcp setup writes it): the discord MCP server was not "
                "registered; the skill works without Discord (discord-watch --local)\n"
            )
            return 0
    backups = Backups()  # one per run: each file's backup is the file as it was before it
    try:
        result = install(
            chosen, scoped, env_file=env_file, home=home, cwd=cwd, environ=environ, backups=backups
        )
        hook = None
        if approvals:
            hook = install_hook(
                chosen,
                scoped,
                env_file=env_file.resolve(),
                home=home,
                cwd=cwd,
                environ=environ,
                backups=backups,
            )
        session = None
        if hooks:
            session = install_session_hooks(
                chosen,
                scoped,
                env_file=env_file.resolve(),
                home=home,
                cwd=cwd,
                environ=environ,
                backups=backups,
            )
    except ConfigError as exc:
        sys.stderr.write(f"discord-mcp install: {exc}\n")
        return 2
    sys.stdout.write(result.describe() + "\n")
    if hook is not None:
        sys.stdout.write(hook.describe() + "\n")
    if session is not None:
        sys.stdout.write(session.describe() + "\n")
    return 0


def _doctor(env_file: str | None = None) -> int:
    import asyncio
    import os

    from discord_mcp.setup.doctor import run_doctor

    environ = dict(os.environ)
    if env_file:
        environ["DISCORD_MCP_ENV_FILE"] = str(Path(env_file).expanduser().resolve())
    checks = asyncio.run(run_doctor(environ, cwd=Path.cwd(), home=Path.home()))
    for check in checks:
        sys.stdout.write(check.render() + "\n")
    failed = sum(check.verdict == "FAIL" for check in checks)
    sys.stdout.write(
        f"\n{failed} problem(s) to fix.\n" if failed else "\nEverything needed works.\n"
    )
    return 1 if failed else 0


def _serve_http(parsed: argparse.Namespace) -> int:
    """``discord-mcp serve --http``: MCP over streamable HTTP; beyond loopback only with a
    bearer token; only to callers whose Host and Origin name this server."""
    from discord_mcp.config import Settings
    from discord_mcp.log import configure
    from discord_mcp.server.http_guard import access_from, is_loopback
    from discord_mcp.server.http_sessions import limits_from

    host: str = parsed.host
    token = parsed.auth_token or os.environ.get("DISCORD_MCP_HTTP_TOKEN", "").strip() or None
    if not is_loopback(host) and token is None:
        sys.stderr.write(
            f"discord-mcp: --host {host} reaches beyond this machine: anyone who can connect "
            "could ask and notify as your agents. Give --auth-token TOKEN (or "
            "DISCORD_MCP_HTTP_TOKEN), or serve on 127.0.0.1\n"
        )
        return 2
    try:
        access = access_from(
            os.environ,
            host=host,
            port=parsed.port,
            token=token,
            allowed_hosts=parsed.allowed_host,
            allowed_origins=parsed.allowed_origin,
        )
        limits = limits_from(
            os.environ, max_sessions=parsed.max_sessions, idle_seconds=parsed.session_idle_seconds
        )
        settings = Settings.from_env()
    except ConfigError as exc:
        sys.stderr.write(f"discord-mcp: configuration error: {exc}\n")
        return 2
    secrets = [settings.token.reveal(), *([token] if token else [])]
    configure(program="discord-mcp", home=settings.home, secrets=secrets)
    from discord_mcp.server.app import serve_http

    serve_http(settings, access, limits)
    return 0


def _install_http(client: str, scope: str, url: str) -> int:
    """``install claude --http``: the URL form of the registration."""
    from typing import cast

    from discord_mcp.setup.clients import Scope
    from discord_mcp.setup.install import install_url

    if client != "claude":
        sys.stderr.write("discord-mcp install: --http is for claude (Claude Code takes a URL)\n")
        return 2
    try:
        result = install_url(
            cast(Scope, scope), url=url, home=Path.home(), cwd=Path.cwd(), environ=dict(os.environ)
        )
    except ConfigError as exc:
        sys.stderr.write(f"discord-mcp install: {exc}\n")
        return 2
    sys.stdout.write(result.describe() + "\n")
    return 0


def _serve() -> int:
    from discord_mcp.config import Settings
    from discord_mcp.log import configure

    try:
        settings = Settings.from_env()
    except ConfigError as exc:
        sys.stderr.write(f"discord-mcp: configuration error: {exc}\n")
        return 2
    configure(program="discord-mcp", home=settings.home, secrets=[settings.token.reveal()])
    from discord_mcp.server.app import serve

    serve(settings)
    return 0
