"""``discord-mcp doctor``: check everything a decision depends on, and say how to fix each.

Each check prints ``OK``, ``WARN`` or ``FAIL`` with what was found and, when something is wrong,
exactly what to do. The exit status is non-zero when any check fails. Checks:

1. configuration: the variables load (token, channel, owners...);
2. token: ``GET /users/@me`` accepts it; before it, the invalid requests this machine sent in
   the last 10 minutes (a warning from a quarter of Discord's limit) and Cloudflare's ban, which
   doctor respects like every other process (nothing is sent while it lasts); then this
   machine's name (``DISCORD_MCP_MACHINE``) and the machines sharing the bot, as their presence
   records in Discord say, and the gateway logins (identifies) left for the bot token today,
   which every machine spends (``GET /gateway/bot``);
3. Message Content intent: the application's flags, and a gateway login (close 4014 means the
   intent is off) unless a live session on this machine already proves it; and the
   Interactions Endpoint URL, which must be empty for clicks to come over the gateway
   (:mod:`discord_mcp.setup.portal_checks`);
4. channel: reachable, and the bot's effective permissions there include everything needed;
5. owners: every id in DISCORD_OWNER_IDS is a real Discord user;
6. state directory: writable, and not readable by other users;
7. state files: a line per corrupt file that was set aside, and what to do
   (:mod:`discord_mcp.setup.state_checks`);
8. projects: every CLI a registered project enables is on PATH;
9. agent clients: for Claude Code, Codex and Gemini CLI configured on this machine, our server
   is registered, and their timeout and approval settings will not kill or block a decision;
   and whether their tool approvals are wired to Discord (the hook of ``install --approvals``);
   then each registered server is started as its client would start it and must answer
   ``tools/list`` (:mod:`discord_mcp.setup.server_checks`);
10. emulator: when ``DISCORD_API_BASE`` is not Discord, whether the server there (a
   ``discord-mcp emulator``) listens beyond this machine: by its address, and by what the
   emulator says of its own binding (``GET /_emulator/binding``). Its control API acts as any
   user, so that is a warning.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import os
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlsplit

from discord_mcp.config import Settings, default_env_file, state_home, watch_roots
from discord_mcp.errors import (
    ConfigError,
    DiscordError,
    DiscordHTTPError,
    DownloadFailed,
    Forbidden,
    GatewayError,
    NotFound,
    Unauthorized,
)
from discord_mcp.relay.budget import IdentifyBudget
from discord_mcp.relay.holder import read_status
from discord_mcp.setup.channel_kinds import USABLE, channel_problem
from discord_mcp.setup.checks import Check, Verdict
from discord_mcp.setup.client_checks import client_checks
from discord_mcp.setup.edge import edge_check
from discord_mcp.setup.permissions import NEEDED, effective_permissions, missing
from discord_mcp.setup.portal_checks import endpoint_check
from discord_mcp.setup.server_checks import ServerProbe, ours_registered, server_checks
from discord_mcp.setup.state_checks import project_checks, quarantine_checks
from discord_mcp.setup.team_checks import identify_check, machine_check
from discord_mcp.state.files import ensure_dir
from discord_mcp.transport.cdn import download
from discord_mcp.transport.gateway import CONTENT_TOGGLE, Gateway
from discord_mcp.transport.rest import RestClient
from discord_mcp.transport.shared_ledger import shared_limiter

__all__ = ["Check", "Verdict", "probe_gateway", "run_doctor"]

MESSAGE_CONTENT_FLAGS = (1 << 18) | (1 << 19)
"""GATEWAY_MESSAGE_CONTENT and GATEWAY_MESSAGE_CONTENT_LIMITED application flags."""
GATEWAY_PROBE_S = 15.0


GatewayProbe = Callable[[Settings, str], Awaitable[str | None]]
"""Tries a gateway login; returns None when it worked, else what went wrong."""


async def probe_gateway(settings: Settings, url: str) -> str | None:
    """Identify once (counted in the machine's identify budget), then leave."""
    ready = asyncio.Event()

    def dispatched(name: str, _data: dict[str, Any], _seq: int | None) -> None:
        if name == "READY":
            ready.set()

    gateway = Gateway(
        settings.token,
        url=url,
        on_dispatch=dispatched,
        identify_guard=IdentifyBudget(settings.home / "gateway" / "identifies.json"),
        on_content_refused=ready.set,  # that answers the question: no second login
    )
    task = asyncio.create_task(gateway.run())
    waiting = asyncio.create_task(ready.wait())
    try:
        done, _ = await asyncio.wait(
            {task, waiting}, timeout=GATEWAY_PROBE_S, return_when=asyncio.FIRST_COMPLETED
        )
        if waiting in done:
            if not gateway.content:
                return "Discord refused the Message Content intent (gateway close 4014)"
            return None
        if task in done:
            error = task.exception()
            return str(error) if error else "the gateway closed without a reason"
        return f"no READY within {GATEWAY_PROBE_S:.0f} s"
    finally:
        await gateway.close()
        for pending in (task, waiting):
            pending.cancel()
        await asyncio.wait({task, waiting}, timeout=5)


async def run_doctor(
    environ: Mapping[str, str],
    *,
    cwd: Path,
    home: Path,
    probe: GatewayProbe = probe_gateway,
    servers: ServerProbe | None = None,
) -> list[Check]:
    """Every check, in order, each once; Discord checks are skipped when the configuration is
    broken. ``servers``: how a registered server is started and asked for its tools (default
    :func:`~discord_mcp.setup.server_checks.start_and_list`)."""
    checks = await _all_checks(environ, cwd=cwd, home=home, probe=probe)
    found = ours_registered(home=home, cwd=cwd, environ=environ)
    checks += await server_checks(found, environ, cwd, servers)
    return list(dict.fromkeys(checks))  # the same finding twice (e.g. ~ is also the cwd): once


def _configuration_failure(exc: ConfigError, environ: Mapping[str, str], cwd: Path) -> Check:
    """The configuration's failure, saying where settings were looked for when none was found."""
    fix = f"{exc.variable}: {exc.fix}"
    default = default_env_file(environ)
    explicit = environ.get("DISCORD_MCP_ENV_FILE", "").strip()
    named = ("DISCORD_BOT_TOKEN", "DISCORD_CHANNEL_ID", "DISCORD_OWNER_IDS")
    found_none = (
        not explicit and not (cwd / ".env").is_file() and not any(environ.get(n) for n in named)
    )
    if found_none and (default is None or not default.is_file()):
        fix = (
            f"no settings found: not in {cwd / '.env'}"
            + (f" nor {default}" if default is not None else "")
            + ". Run `discord-mcp setup` (it writes "
            + (str(default) if default is not None else "a .env")
            + "), or name your .env with --env-file PATH or DISCORD_MCP_ENV_FILE=PATH"
        )
    return Check("FAIL", "configuration", f"{exc.variable} {exc.problem}", fix)


async def _all_checks(
    environ: Mapping[str, str], *, cwd: Path, home: Path, probe: GatewayProbe
) -> list[Check]:
    checks: list[Check] = []
    try:
        settings = Settings.from_env(environ, cwd=cwd)
    except ConfigError as exc:
        checks.append(_configuration_failure(exc, environ, cwd))
        with contextlib.suppress(ConfigError):  # the same broken setting, reported above
            checks.extend(_local_checks(state_home(environ, cwd=cwd), environ))
        checks.extend(client_checks(home=home, cwd=cwd, environ=environ))
        return checks
    checks.append(
        Check("OK", "configuration", f"project {settings.project_name}, state {settings.home}")
    )
    edge = await edge_check(settings)
    checks.append(edge)
    if edge.verdict != "FAIL":
        async with RestClient(
            settings.token,
            api_base=settings.api_base,
            limiter=shared_limiter(settings.home, settings.token),
        ) as rest:
            checks.extend(await _discord_checks(settings, rest, probe))
    exposure = await emulator_exposure(settings.api_base)
    if exposure is not None:
        checks.append(exposure)
    checks.append(_state_check(settings.home))
    checks.extend(_local_checks(settings.home, environ))
    checks.extend(client_checks(home=home, cwd=cwd, environ=environ))
    return checks


async def emulator_exposure(api_base: str, *, deadline: float = 3.0) -> Check | None:
    """A line about the emulator behind ``api_base``, or None when it is Discord itself."""
    parts = urlsplit(api_base)
    host = (parts.hostname or "").lower()
    if host == "discord.com" or host.endswith(".discord.com"):
        return None
    origin = f"{parts.scheme}://{parts.netloc}"
    binding: dict[str, Any] | None = None
    try:
        got = await download(origin + "/_emulator/binding", max_bytes=4096, deadline=deadline)
        data = json.loads(got.data)
        binding = data if isinstance(data, dict) else None
    except (DownloadFailed, ValueError):
        binding = None
    bound = str(binding.get("host")) if binding else host
    local = _loopback(host) and (binding is None or binding.get("loopback") is True)
    if local:
        if binding is None:
            return None  # not an emulator we know; nothing to say
        return Check("OK", "emulator", f"listens on {bound} only: no other machine reaches it")
    guarded = " (with a control token)" if binding and binding.get("control_token") else ""
    return Check(
        "WARN",
        "emulator",
        f"the emulator at {origin} listens on {bound}, reachable from other machines{guarded}: "
        "its control API acts as any user, the owner included; without a control token anyone "
        "who reaches it can",
        "restart it on 127.0.0.1 (the default), or keep its --control-token and --token secret",
    )


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _local_checks(state: Path, environ: Mapping[str, str]) -> list[Check]:
    """The state files set aside, and the registered projects' CLIs."""
    try:
        roots = watch_roots(environ)
    except ConfigError:
        roots = [Path.home()]  # only used to validate new paths, which doctor never adds
    return quarantine_checks(state) + project_checks(state, environ, roots)


async def _discord_checks(settings: Settings, rest: RestClient, probe: GatewayProbe) -> list[Check]:
    checks: list[Check] = []
    try:
        me = await rest.get_current_user()
    except Unauthorized as exc:
        return [Check("FAIL", "token", "Discord rejected it (401)", str(exc))]
    except DiscordError as exc:
        return [Check("FAIL", "token", f"could not ask Discord: {exc}", "Check the network")]
    checks.append(Check("OK", "token", f"logged in as {me.get('username')} ({me['id']})"))
    checks.append(await machine_check(settings, rest, me["id"]))
    checks.append(await identify_check(rest))
    checks.append(await _intent_check(settings, rest, probe))
    checks.append(await endpoint_check(rest))
    checks.append(await _channel_check(settings, rest, me["id"]))
    checks.append(await _owner_check(settings, rest))
    return checks


async def _intent_check(settings: Settings, rest: RestClient, probe: GatewayProbe) -> Check:
    name = "message content intent"
    fix = CONTENT_TOGGLE
    without = (
        "; without it buttons, selects, modals and slash commands work, but the text of your "
        "replies cannot be read"
    )
    try:
        application = await rest.get_current_application()
        if not int(application.get("flags") or 0) & MESSAGE_CONTENT_FLAGS:
            return Check("FAIL", name, "not enabled for the application" + without, fix)
    except (NotFound, Forbidden):
        pass  # older APIs: the gateway login below decides
    except DiscordError as exc:
        return Check("WARN", name, f"could not read the application ({exc})")
    status = read_status(settings.home / "gateway" / "status.json")
    if status is not None and status.connected(time.time()):
        if not status.message_content:
            refused = f"Discord refused it to the live session of {status.program}" + without
            return Check("FAIL", name, refused, fix)
        return Check("OK", name, f"enabled (a live gateway session is held by {status.program})")
    if settings.gateway == "off":
        return Check("WARN", name, "not tested: DISCORD_MCP_GATEWAY=off (answers by polling)")
    try:
        url = settings.gateway_url or (await rest.get_gateway_bot())["url"]
        problem = await probe(settings, url)
    except (DiscordError, GatewayError) as exc:
        problem = str(exc)
    if problem is None:
        return Check("OK", name, "enabled (a gateway login succeeded)")
    if "4014" in problem or "Message Content" in problem:
        return Check("FAIL", name, "Discord refused it (gateway close 4014)" + without, fix)
    return Check(
        "WARN",
        name,
        f"the gateway login did not work ({problem[:160]}); answers will be read by polling",
    )


async def _channel_check(settings: Settings, rest: RestClient, bot_id: str) -> Check:
    name = "channel"
    channel_id = settings.channel_id
    try:
        channel = await rest.get_channel(channel_id)
    except (NotFound, Forbidden) as exc:
        return Check(
            "FAIL",
            name,
            f"{channel_id} is not reachable ({exc.status}, code {exc.code})",
            "Check DISCORD_CHANNEL_ID (right-click the channel > Copy ID) and that the bot was "
            "invited to that server (`discord-mcp setup` prints the invite URL)",
        )
    except DiscordError as exc:
        return Check("WARN", name, f"could not read channel {channel_id}: {exc}")
    problem = channel_problem(cast(dict[str, Any], channel))
    if problem is not None:
        return problem
    kind = USABLE[int(channel.get("type", -1))]
    guild_id = channel.get("guild_id")
    if not guild_id:
        return Check("FAIL", name, "the channel is not in a server", "Use a server text channel")
    try:
        guild = await rest.get_guild(guild_id)
        member = await rest.get_guild_member(guild_id, bot_id)
    except DiscordHTTPError as exc:
        return Check("WARN", name, f"#{channel.get('name')} reachable; permissions unknown ({exc})")
    bits = effective_permissions(
        guild_id=guild_id,
        guild_owner_id=guild.get("owner_id"),
        roles=guild.get("roles") or [],
        member_id=bot_id,
        member_role_ids=[str(r) for r in member.get("roles") or []],
        overwrites=cast(list[dict[str, Any]], channel.get("permission_overwrites") or []),
    )
    lacking = missing(bits)
    if lacking:
        return Check(
            "FAIL",
            name,
            f"#{channel.get('name')}: the bot lacks {', '.join(lacking)}",
            "Server Settings > Roles (or the channel's Permissions) > allow "
            + ", ".join(lacking)
            + " for the bot's role",
        )
    return Check("OK", name, f"#{channel.get('name')} ({kind}): all {len(NEEDED)} permissions")


async def _owner_check(settings: Settings, rest: RestClient) -> Check:
    unknown, names = [], []
    for owner in sorted(settings.owner_ids):
        try:
            user = await rest.get_user(owner)
        except NotFound:
            unknown.append(owner)
            continue
        except DiscordError as exc:
            return Check("WARN", "owners", f"could not look up {owner}: {exc}")
        if user.get("bot"):
            unknown.append(f"{owner} (a bot)")
        else:
            names.append(str(user.get("global_name") or user.get("username")))
    if unknown:
        return Check(
            "FAIL",
            "owners",
            f"not a Discord user: {', '.join(unknown)}",
            "DISCORD_OWNER_IDS needs your own user id: Developer Mode on, right-click your "
            "name > Copy User ID",
        )
    return Check("OK", "owners", ", ".join(names))


def _state_check(home: Path) -> Check:
    name = "state directory"
    try:
        ensure_dir(home)
        probe = home / ".doctor-write-test"
        probe.write_text("ok", encoding="utf-8")
        probe.unlink()
    except OSError as exc:
        return Check(
            "FAIL", name, f"{home} is not writable ({exc.strerror})", "Fix DISCORD_MCP_HOME"
        )
    if os.stat(home).st_mode & 0o077:
        return Check(
            "FAIL",
            name,
            f"{home} is readable by other users (decisions and logs are private)",
            f"chmod 700 {home}",
        )
    return Check("OK", name, f"{home} (private, writable)")
