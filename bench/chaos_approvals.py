"""The approval rounds of ``bench.chaos`` (issue 21): a guard hook asked while Discord is down.

Each round runs one guard hook, as its CLI runs it (Gemini CLI's ``before-tool``, Codex's
``pre-tool-use`` and ``permission-request``, headless Claude Code's ``permission-request``),
about a shell command while Discord is down in one of :data:`DOWN`'s ways, and reads its answer
as that CLI reads it (tests/support/hook_runs.py). Round ``n`` takes the way ``n`` modulo
their number and the next guard each round (:func:`round_plan`): any four rounds in a row ask
every guard, and 24 rounds ask every guard in every way.
"""

from __future__ import annotations

import contextlib
import socket
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from discord_mcp.emulator import RunningEmulator, start_in_thread
from tests.support.hook_runs import cli_reading, run_hook

DOWN = ("stopped", "503", "401", "429", "hang", "stopped-while-waiting")
GUARDS = (
    ("before-tool", "gemini", "run_shell_command"),
    ("pre-tool-use", "codex", "Bash"),
    ("permission-request", "codex", "Bash"),
    ("permission-request", "claude", "Bash"),
)
GUARD_TIMEOUT_S = 10.0
"""The CLI hook timeout the guard hooks are given (``--timeout``) in the approval rounds."""
Guard = tuple[str, str, str]


def round_plan(n: int) -> tuple[str, Guard]:
    """Round ``n``'s way of being down and its guard hook.

    The guard moves on every round, and shifts by one against the ways at each pass over them,
    so that every pair comes up once in ``len(DOWN) * len(GUARDS)`` rounds (6 and 4 share a
    factor: a plain ``n % 4`` would pair each way with two guards only).
    """
    passes, way = divmod(n, len(DOWN))
    return DOWN[way], GUARDS[(n + passes) % len(GUARDS)]


def env_for(emulator: RunningEmulator, home: Path, **extra: str) -> dict[str, str]:
    """The environment of a chaos process on ``emulator`` with the state directory ``home``."""
    return {
        "DISCORD_BOT_TOKEN": emulator.token,
        "DISCORD_CHANNEL_ID": emulator.channel_id,
        "DISCORD_OWNER_IDS": emulator.owner_user_id,
        "DISCORD_API_BASE": emulator.api_base,
        "DISCORD_MCP_HOME": str(home),
        "POLL_INTERVAL_SECONDS": "0.5",
        "DISCORD_MCP_MAX_BLOCK_SECONDS": "20",
        "PROJECT_NAME": "proj",
        **extra,
    }


def _control(emulator: RunningEmulator) -> httpx.Client:
    return httpx.Client(base_url=emulator.base_url + "/_emulator", timeout=10)


def approval_while_down(
    n: int, down: str, guard: Guard, emulator: RunningEmulator, home: Path
) -> str:
    """One guard hook asked about a shell command while Discord is down in the ``down`` way;
    the verdict its CLI reads (``block``, telling the agent the call was not run, is the only
    right one)."""
    hook, client, tool = guard
    # As discord-watch runs them: headless (Claude Code unattended, Codex in a run).
    env = {**env_for(emulator, home), "POLL_INTERVAL_SECONDS": "0.2", "DISCORD_MCP_RUN": "1"}
    listener: socket.socket | None = None
    separate: RunningEmulator | None = None
    with _control(emulator) as control:
        if down == "stopped":
            separate = start_in_thread()
            separate.stop()
            env["DISCORD_API_BASE"] = separate.api_base
        elif down in ("503", "429"):
            status = int(down)
            fault: dict[str, Any] = {
                "route": "POST /channels/{channel_id}/threads",
                "status": status,
            }
            if status == 429:
                fault["retry_after"] = 3600
            control.post("/faults", json={**fault, "count": 20}).raise_for_status()
        elif down == "401":
            env["DISCORD_BOT_TOKEN"] = "MTIz.refused.token-of-another-bot"
        elif down == "hang":
            listener = socket.socket()
            listener.bind(("127.0.0.1", 0))
            listener.listen(64)  # connections complete in the kernel; nobody ever answers
            env["DISCORD_API_BASE"] = f"http://127.0.0.1:{listener.getsockname()[1]}/api/v10"
        elif down == "stopped-while-waiting":
            separate = start_in_thread(rate_limit_scale=0.05)
            env.update(env_for(separate, home), POLL_INTERVAL_SECONDS="0.2", DISCORD_MCP_RUN="1")
            stopper = threading.Thread(target=_stop_at_the_card, args=(separate, n), daemon=True)
            stopper.start()
        payload = {
            "session_id": f"chaos-{n:04d}-0000-0000-000000000000",
            "cwd": str(home.parent),
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": {"command": f"touch approval-round-{n}.txt"},
        }
        args = [hook, "--client", client, "--timeout", f"{GUARD_TIMEOUT_S:g}", "--wait", "2"]
        try:
            run = run_hook(args, payload, env, within=GUARD_TIMEOUT_S, cwd=str(home.parent))
        except AssertionError:
            return "no answer before the CLI's timeout"
        finally:
            if listener is not None:
                listener.close()
            if separate is not None:
                separate.stop()
            control.post("/faults", json={"clear": True})
    reading = cli_reading(client, hook, run)
    if reading.verdict == "block" and "not run" not in reading.reason:
        return "block without saying why"  # a hook that merely crashed with exit code 2
    return reading.verdict


def _stop_at_the_card(emulator: RunningEmulator, n: int) -> None:
    """Stop ``emulator`` once round ``n``'s approval card is up (or after a few seconds)."""
    deadline = time.monotonic() + 5
    with contextlib.suppress(Exception), _control(emulator) as control:
        while time.monotonic() < deadline:
            channels = control.get("/state").json()["channels"]
            threads = [c["id"] for c in channels if c.get("type") == 11]
            if any(
                f"approval-round-{n}.txt" in m["content"]
                for t in threads
                for m in control.get(f"/channels/{t}/messages").json()
            ):
                break
            time.sleep(0.05)
    emulator.stop()


def approval_rounds(emulator: RunningEmulator, rounds: int) -> tuple[int, set[Guard]]:
    """Run ``rounds`` approval rounds; how many let the call run, and the guards asked."""
    unguarded = 0
    asked: set[Guard] = set()
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:
        for n in range(rounds):
            down, guard = round_plan(n)
            asked.add(guard)
            verdict = approval_while_down(n, down, guard, emulator, Path(tmp) / f"home-{n}")
            if verdict != "block":
                print(f"  approval round {n} ({guard[1]} {guard[0]}, {down}): RAN ({verdict})")
                unguarded += 1
    return unguarded, asked
