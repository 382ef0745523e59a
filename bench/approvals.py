"""Approval latency: the owner's click on Allow -> the real agent CLI continues.

Each sample is one headless run of a real CLI (installed in ``.agent-clis``) against the scripted
model server: the model asks to run ``touch <file>``, the CLI's approval hook posts the card, the
owner clicks **Allow once** through the emulator, and we time:

* click -> answer delivered: the hook process hands the CLI its answer (a tiny wrapper,
  ``bench/stamp.py``, records when the hook exits); this is the figure with a budget, the same
  as a decision click answered by another process's gateway (DESIGN §6: p50 at most 150 ms).
  The gateway is held by a separate ``discord-mcp`` process, as when ``discord-watch`` runs;
* click -> the CLI continued: the command's file appears (adds the CLI's own work: starting the
  shell, Codex's sandbox); shown, not judged.

Routes: Claude Code's ``PermissionRequest`` hook (headless: no permission-prompt tool), Codex's
``PreToolUse`` hook (``exec --approve-for-me``), Gemini CLI's ``BeforeTool`` hook (yolo mode).

    .venv/bin/python -m bench.approvals [--samples 5] [--cli claude,codex,gemini]

Exits 1 when a CLI's p50 click -> answer is over budget, 2 when a run is broken (no card, the
command never ran, the CLI failed). A CLI over budget is measured again, up to
:data:`AGAIN` times, and judged on all its samples: one busy moment beside a test suite (the
quick mode's single sample) is not a verdict, a slow path stays over.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from bench.mcp_stdio import parse_arguments
from discord_mcp.emulator import RunningEmulator, start_in_thread
from tests.support.agent_clis import CLI_CLASSES, AgentCli, CliName, find_cli
from tests.support.model_server import ModelRequest, ModelServer, Reply, ShellCall, Text

ROOT = Path(__file__).resolve().parent.parent
BUDGET_S = 0.150
AGAIN = 2
"""Rounds of ``--samples`` more a CLI over budget is measured before it is called over."""
INIT = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "bench-holder", "version": "1"},
}


def _env(emulator: RunningEmulator, home: Path, **extra: str) -> dict[str, str]:
    return {
        "DISCORD_BOT_TOKEN": emulator.token,
        "DISCORD_CHANNEL_ID": emulator.channel_id,
        "DISCORD_OWNER_IDS": emulator.owner_user_id,
        "DISCORD_API_BASE": emulator.api_base,
        "DISCORD_MCP_HOME": str(home),
        "POLL_INTERVAL_SECONDS": "5",
        "PROJECT_NAME": "bench",
        **extra,
    }


def _wait(condition: Callable[[], Any], what: str, seconds: float = 60) -> Any:
    deadline = time.monotonic() + seconds
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        time.sleep(0.002)
    return value


class Holder:
    """An idle ``discord-mcp`` server that holds the machine's gateway (as discord-watch would)."""

    def __init__(self, env: dict[str, str], home: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "discord_mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, **env},
            cwd=ROOT,
        )
        assert self.process.stdin is not None
        for message in (
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
        ):
            self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

        def holding() -> bool:
            from discord_mcp.relay.holder import read_status

            status = read_status(home / "gateway" / "status.json")
            return (
                status is not None
                and status.pid == self.process.pid
                and status.connected(time.time())
            )

        _wait(holding, "the gateway holder")

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=15)


def _hook_command(client: CliName, stamps: Path, env_file: Path) -> str:
    event = {"claude": "permission-request", "codex": "pre-tool-use", "gemini": "before-tool"}
    hook = [sys.executable, "-m", "discord_mcp", "hook", event[client], "--client", client]
    hook += ["--env-file", str(env_file), "--wait", "60"]
    return shlex.join([sys.executable, "-m", "bench.stamp", str(stamps), "--", *hook])


def _configure(client: CliName, cli: AgentCli, command: str) -> None:
    """Install the approval hook the way each CLI reads it for a headless run."""
    if client == "claude":
        group = {
            "matcher": "Bash",
            "hooks": [{"type": "command", "command": command, "timeout": 90}],
        }
        cli.extra_args = ["--settings", json.dumps({"hooks": {"PermissionRequest": [group]}})]
    elif client == "codex":
        handler = f'{{type="command", command={json.dumps(command)}, timeout=90}}'
        cli.extra_args = [
            "--approve-for-me",
            "--dangerously-bypass-hook-trust",
            "-c",
            f"hooks.PreToolUse=[{{hooks=[{handler}]}}]",
        ]
    else:
        path = cli.home / ".gemini" / "settings.json"
        settings = json.loads(path.read_text(encoding="utf-8"))
        handler = {"type": "command", "command": command, "timeout": 90_000}
        settings["hooks"] = {"BeforeTool": [{"matcher": "run_shell_command", "hooks": [handler]}]}
        path.write_text(json.dumps(settings), encoding="utf-8")
        cli.extra_args = ["--approval-mode", "yolo"]


def _script(marker: Path) -> Callable[[ModelRequest], Reply]:
    def step(request: ModelRequest) -> Reply:
        if request.latest_tool_results():
            return Text("done")
        return ShellCall(f"touch {marker}")

    return step


def _card(control: httpx.Client) -> dict[str, Any] | None:
    for channel in control.get("/state").json()["channels"]:
        if channel.get("type") not in (11, 12):
            continue
        for message in control.get(f"/channels/{channel['id']}/messages").json():
            if "Approval needed" in message["content"] and message.get("components"):
                return dict(message)
    return None


def measure(client: CliName, samples: int) -> tuple[list[float], list[float]]:
    """(click -> answer delivered, click -> the CLI continued), in seconds."""
    answered: list[float] = []
    continued: list[float] = []
    for _ in range(samples):
        emulator = start_in_thread(rate_limit_scale=0.05)
        try:
            with tempfile.TemporaryDirectory() as scratch, ModelServer() as model:
                root = Path(scratch)
                home = root / "state"
                env = _env(emulator, home)
                env_file = root / "discord.env"
                env_file.write_text("".join(f"{k}={v}\n" for k, v in env.items()), encoding="utf-8")
                holder = Holder({**env, "DISCORD_MCP_GATEWAY": "auto"}, home)
                stamps = root / "stamps"
                marker = root / "work" / "touched"
                cli = CLI_CLASSES[client](
                    root=root / client,
                    model_url=model.base_url,
                    proxy_url=model.proxy_url,
                    workdir=root / "work",
                )
                _configure(client, cli, _hook_command(client, stamps, env_file))
                model.script(_script(marker), repeat=True)
                control = httpx.Client(base_url=emulator.base_url + "/_emulator", timeout=30)
                try:
                    running = cli.start("Touch the file.", timeout=120)
                    card = running.wait_for(
                        functools.partial(_card, control), timeout=90, what="the card"
                    )
                    allow = card["components"][0]["components"][0]["custom_id"]
                    clicked = time.monotonic()
                    control.post(
                        "/interactions",
                        json={
                            "user_id": emulator.owner_user_id,
                            "message_id": card["id"],
                            "custom_id": allow,
                        },
                    ).raise_for_status()
                    _wait(marker.exists, "the command's effect", 60)
                    continued.append(time.monotonic() - clicked)
                    _wait(stamps.exists, "the hook's exit", 30)
                    exits = [float(x) for x in stamps.read_text(encoding="utf-8").split()]
                    answered.append(max(exits) - clicked)
                    result = running.wait()
                    if not result.succeeded:
                        raise RuntimeError(result.describe())
                finally:
                    control.close()
                    cli.close()
                    holder.close()
        finally:
            emulator.stop()
    return answered, continued


def _percentiles(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return statistics.median(ordered), p99


QUICK = ("--samples", "1")
"""``--quick``: the same checks on fewer rounds."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--cli", default="claude,codex,gemini")
    args = parse_arguments(parser, QUICK)
    ok, broken = True, False
    print(f"approval click -> CLI continues ({args.samples} runs each; budget p50 <= 150 ms)")
    for name in [n.strip() for n in args.cli.split(",") if n.strip()]:
        client: CliName = name  # type: ignore[assignment]
        if find_cli(client) is None:
            # A figure that was never measured is no verdict: the run is broken, not fine.
            print(f"  {client:<7} MISSING: not installed (scripts/install-agent-clis)")
            broken = True
            continue
        try:
            answered, continued = measure(client, args.samples)
            for _ in range(AGAIN):
                if _percentiles(answered)[0] <= BUDGET_S:
                    break
                print(f"  {client:<7} over budget once: measured again")
                more_answered, more_continued = measure(client, args.samples)
                answered += more_answered
                continued += more_continued
        except (TimeoutError, RuntimeError, httpx.HTTPError) as exc:
            print(f"  {client:<7} BROKEN: {str(exc)[:300]}")
            broken = True
            continue
        a50, a99 = _percentiles(answered)
        c50, c99 = _percentiles(continued)
        verdict = "OK" if a50 <= BUDGET_S else "OVER BUDGET"
        ok &= a50 <= BUDGET_S
        print(
            f"  {client:<7} click -> answer delivered p50 {a50 * 1000:6.0f} ms  p99 "
            f"{a99 * 1000:6.0f} ms  {verdict}  ({len(answered)} samples)\n"
            f"  {'':<7} click -> the CLI continued  p50 {c50 * 1000:6.0f} ms  p99 "
            f"{c99 * 1000:6.0f} ms  (the CLI's own work included; not judged)"
        )
    return 2 if broken else 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
