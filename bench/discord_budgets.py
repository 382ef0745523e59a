"""Discord's budgets on a long day: streaming, several machines and a long answer at once.

Against one emulator at Discord's own speed (``--rate-limit-scale 1``: 5 messages or edits per
5 s in a channel, 50 requests a second, 3 s per interaction), three real ``discord-watch``
processes share one bot, each with its own state directory and ``DISCORD_MCP_MACHINE``:

* ``alpha`` runs a job of a scripted ACP agent (tests/support/fake_acp_agent.py, no model) that
  writes steadily for ``--stream-seconds`` (10 minutes; its text streams into the run's thread
  while the job's status message follows it), then ends with an answer of ``--answer-chars``
  (20,000 characters: eleven Discord messages);
* meanwhile the owner sends ``--interactions`` slash commands (200), spread over the run, that
  any machine may answer: the first by name answers, the others take their turns.

The machines start at the same moment. Figures, with their budgets:

* 429s Discord sent (0), from the machines' first request on: every request waited for its
  bucket, including the per-bot and per-channel ones three machines spend together;
* the most edits of one channel in one rate-limit window (5 s), within the bucket's limit (5, as
  the emulator's headers say); shown too, with no budget: how many edits took a window's last
  place (streamed text leaves it to writers that cannot wait);
* interactions not acknowledged within Discord's 3 seconds (0);
* commands run twice, or by no machine (0): a command's effect runs where the machine logs
  ``running interaction <id>``; counted per interaction over the three machines' logs. A refused
  second acknowledgement (40060 or 10062) is not counted: with several machines live the
  acknowledgement decides who runs the command, so a refused one is the race working;
* answers cut (0): lines of the agent's answer missing from the thread, or shown twice.

Exits 1 over budget, 2 when something measured is broken. ``--quick`` (under a minute): a
10-second run, 20 interactions, the same 20,000-character answer.

    .venv/bin/python -m bench.discord_budgets [--quick] [--rate-limit-scale 1] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from bench.mcp_stdio import OVER_BUDGET, BenchFailure, parse_arguments, run_main
from discord_mcp.emulator import Exchange, RunningEmulator, start_in_thread
from discord_mcp.team.deadline import DEADLINE_S
from discord_mcp.team.presence import THREAD_NAME
from discord_mcp.transport.snowflakes import made_at

ROOT = Path(__file__).resolve().parent.parent
AGENT = ROOT / "tests" / "support" / "fake_acp_agent.py"
CLI = "from discord_mcp.watch.cli import main; raise SystemExit(main())"
NAMES = ("alpha", "bravo", "charlie")
COMMANDS = 15
"""Slash commands each discord-watch registers (the bot's set, once all are there)."""
EDIT_ROUTE = re.compile(r"^/channels/(\d+)/messages/\d+$")
LINE = re.compile(r"L(\d{5}) ")
RAN = re.compile(r"/[\w-]+: running interaction (\d+)")
QUICK = ("--stream-seconds", "10", "--interactions", "20")
"""``--quick``: the same checks on a shorter run."""


@dataclass
class Figures:
    """What one run measured."""

    rest_429: int = 0
    edit_limit: int = 0
    most_edits: int = 0
    edits_leaving_none: int = 0
    interactions: int = 0
    late: int = 0
    twice: int = 0
    unrun: int = 0
    refused_acks: int = 0
    answer_lines: int = 0
    missing: int = 0
    doubled: int = 0
    answer_messages: int = 0
    refused: dict[str, int] = field(default_factory=dict)
    phases: dict[str, float] = field(default_factory=dict)

    def over_budget(self) -> list[str]:
        """The figures over their budgets, as sentences (none: within budget)."""
        over = []
        if self.rest_429:
            over.append(f"{self.rest_429} 429s (budget 0)")
        if self.edit_limit and self.most_edits > self.edit_limit:
            over.append(f"{self.most_edits} edits in one window (budget {self.edit_limit})")
        if self.late:
            over.append(f"{self.late} interactions not answered within 3 s (budget 0)")
        if self.twice or self.unrun:
            over.append(
                f"{self.twice} commands run on two machines, {self.unrun} on none (budget 0)"
            )
        if self.missing or self.doubled:
            over.append(
                f"the answer was cut: {self.missing} lines missing, {self.doubled} shown twice "
                "(budget 0)"
            )
        return over


@dataclass
class Exchanges:
    """What the emulator answered, counted as it answers (its own thread)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    edits: Counter[tuple[str, str]] = field(default_factory=Counter)
    """(channel, window) -> edits Discord accepted in that window of the channel's bucket."""
    limit: int = 0
    leaving_none: int = 0
    refused: Counter[str] = field(default_factory=Counter)
    """429s by route (``method path``, ids as ``{id}``)."""

    def __call__(self, exchange: Exchange) -> None:
        if os.environ.get("BENCH_TRACE") and re.match(r"^/channels/\d+$", exchange.path):
            print(f"{exchange.status} {time.monotonic():.2f} {exchange.method} {exchange.path}")
        if exchange.status == 429:
            if os.environ.get("BENCH_TRACE"):
                print(f"429 {time.monotonic():.2f} {exchange.method} {exchange.path}", flush=True)
            with self.lock:
                self.refused[f"{exchange.method} {re.sub(r'/[0-9]+', '/{id}', exchange.path)}"] += 1
        if exchange.method != "PATCH" or exchange.status != 200:
            return
        found = EDIT_ROUTE.match(exchange.path)
        headers = exchange.response_headers
        if found is None or "X-RateLimit-Reset" not in headers:
            return
        window = f"{float(headers['X-RateLimit-Reset']):.1f}"
        with self.lock:
            self.edits[(found.group(1), window)] += 1
            self.limit = max(self.limit, int(headers.get("X-RateLimit-Limit", "0")))
            if headers.get("X-RateLimit-Remaining") == "0":
                self.leaving_none += 1


def _env(
    emulator: RunningEmulator, root: Path, name: str, stream: float, chars: int
) -> dict[str, str]:
    return {
        **os.environ,
        "PATH": str(root / "no-clis"),  # no job may reach a real agent CLI
        "DISCORD_BOT_TOKEN": emulator.token,
        "DISCORD_CHANNEL_ID": emulator.channel_id,
        "DISCORD_OWNER_IDS": emulator.owner_user_id,
        "DISCORD_API_BASE": emulator.api_base,
        "DISCORD_MCP_HOME": str(root / name / "home"),
        "DISCORD_MCP_MACHINE": name,
        "DISCORD_WATCH_ROOTS": str(root),
        "DISCORD_WATCH_DEBOUNCE_SECONDS": "0",
        "FAKE_ACP_STEADY_SECONDS": str(stream),
        "FAKE_ACP_STEADY_CHARS": str(chars),
    }


def _cli(env: dict[str, str], root: Path, *args: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", CLI, *args],
        env=env,
        cwd=root,
        capture_output=True,
        text=True,
        encoding="utf-8",
    )
    if done.returncode != 0:
        raise BenchFailure(f"discord-watch {' '.join(args[:2])} failed: {done.stderr[-300:]}")


@contextmanager
def _machines(
    emulator: RunningEmulator, root: Path, stream: float, chars: int
) -> Iterator[list[subprocess.Popen[bytes]]]:
    (root / "no-clis").mkdir(exist_ok=True)
    daemons: list[subprocess.Popen[bytes]] = []
    try:
        for name in NAMES:
            env = _env(emulator, root, name, stream, chars)
            (root / name).mkdir()
            if name == NAMES[0]:
                (root / "app").mkdir()
                _cli(env, root, "agent", "add", "fake", "--", sys.executable, str(AGENT))
                _cli(env, root, "project", "add", "app", str(root / "app"), "--tools", "fake")
            log = (root / f"{name}.log").open("wb")
            daemons.append(
                subprocess.Popen(
                    [sys.executable, "-c", CLI, "run"],
                    env=env,
                    cwd=root,
                    stdout=subprocess.DEVNULL,
                    stderr=log,
                )
            )
            log.close()
        yield daemons
    finally:
        for daemon in daemons:
            if daemon.poll() is None:
                daemon.terminate()
        for daemon in daemons:
            try:
                daemon.wait(timeout=20)
            except subprocess.TimeoutExpired:
                daemon.kill()


def _command(emulator: RunningEmulator, name: str) -> dict[str, Any]:
    return {
        "user_id": emulator.owner_user_id,
        "channel_id": emulator.channel_id,
        "command": name,
        "options": [],
    }


def _report(control: httpx.Client, report: dict[str, Any], within: float) -> str:
    """The text a command's answer ends up with (a deferred answer is edited in later)."""
    limit = time.monotonic() + within
    while time.monotonic() < limit:
        content = (report.get("message") or {}).get("content") or ""
        if content:
            return str(content)
        time.sleep(0.1)
        report = control.get(f"/interactions/{report['interaction_id']}").json()
    return ""


def _up(
    emulator: RunningEmulator, control: httpx.Client, daemons: list[subprocess.Popen[bytes]]
) -> None:
    """Every machine connected, the commands registered, and each knowing the others."""
    limit = time.monotonic() + 90
    while time.monotonic() < limit:
        for daemon in daemons:
            if daemon.poll() is not None:
                raise BenchFailure(f"a discord-watch exited with {daemon.returncode}")
        state = control.get("/state").json()
        connected = sum(1 for s in state["gateway_sessions"] if s.get("connected"))
        presence = any(c.get("name") == THREAD_NAME for c in state["channels"])
        if (
            connected >= len(NAMES)
            and presence
            and len(control.get("/commands").json()) >= COMMANDS
        ):
            report = control.post("/interactions", json=_command(emulator, "status")).json()
            if all(f"`{n}`" in _report(control, report, 10) for n in NAMES):
                return
        time.sleep(0.5)
    raise BenchFailure("the three machines did not all come up within 90 s")


def _interact(
    emulator: RunningEmulator, count: int, over: float, figures: Figures, sent: list[str]
) -> threading.Thread:
    """Send ``count`` commands spread over ``over`` seconds, from a background thread."""

    def send(number: int) -> tuple[str, bool]:
        with httpx.Client(base_url=emulator.base_url + "/_emulator", timeout=30) as control:
            name = "help" if number % 2 else "pending"
            report = control.post("/interactions", json=_command(emulator, name)).json()
        answered = bool(report.get("acknowledged")) and not report.get("expired")
        return str(report.get("interaction_id") or ""), answered

    def run() -> None:
        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=4) as pool:
            futures = []
            for number in range(count):
                due = started + over * number / max(count, 1)
                time.sleep(max(0.0, due - time.monotonic()))
                futures.append(pool.submit(send, number))
            answered = [f.result() for f in futures]
        figures.interactions = len(answered)
        figures.late = sum(1 for _, ok in answered if not ok)
        sent.extend(interaction for interaction, _ in answered)

    thread = threading.Thread(target=run, name="interactions")
    thread.start()
    return thread


def _answer(control: httpx.Client, thread_id: str, lines: int, within: float) -> list[str]:
    """The thread's messages once the answer is whole there (or ``within`` passed)."""
    limit = time.monotonic() + within
    contents: list[str] = []
    while time.monotonic() < limit:
        response = control.get(f"/channels/{thread_id}/messages")
        if response.status_code == 200:
            contents = [str(m.get("content") or "") for m in response.json()]
            joined = "\n".join(contents)
            if "THE END" in joined and "Reply in this thread" in joined:
                return contents
        time.sleep(0.5)
    return contents


def measure(
    stream: float, interactions: int, chars: int, scale: float, keep: Path | None = None
) -> Figures:
    figures = Figures()
    exchanges = Exchanges()
    sent: list[str] = []
    emulator = start_in_thread(rate_limit_scale=scale, exchange_hook=exchanges)
    try:
        with _workdir(keep) as name:
            root = Path(name)
            with (
                _machines(emulator, root, stream, chars) as daemons,
                httpx.Client(base_url=emulator.base_url + "/_emulator", timeout=30) as control,
            ):
                mark = time.monotonic()
                _up(emulator, control, daemons)
                figures.phases["machines up"] = time.monotonic() - mark
                mark = time.monotonic()
                before = control.get("/state").json()["stats"]
                with exchanges.lock:
                    exchanges.edits.clear()
                    exchanges.leaving_none = 0
                started = control.post(
                    f"/channels/{emulator.channel_id}/messages",
                    json={"author_id": emulator.owner_user_id, "content": "!start app steady"},
                ).json()
                thread_id = str(started["id"])
                asking = _interact(emulator, interactions, max(stream - 2.0, 1.0), figures, sent)
                lines = max(1, int(stream * 2))
                contents = _answer(control, thread_id, lines, stream + 180)
                figures.phases["run to answer shown"] = time.monotonic() - mark
                asking.join(timeout=stream + 120)
                if asking.is_alive():
                    raise BenchFailure("the interactions were still being sent after the run")
                _settled(sent)
                after = control.get("/state").json()["stats"]
                for daemon in daemons:
                    if daemon.poll() is not None:
                        raise BenchFailure(f"a discord-watch exited with {daemon.returncode}")
            ran = Counter(
                found
                for machine in NAMES
                for found in RAN.findall((root / f"{machine}.log").read_text("utf-8", "replace"))
            )
    finally:
        emulator.stop()
    seen = Counter(int(m) for text in contents for m in LINE.findall(text))
    figures.answer_lines = lines
    figures.missing = sum(1 for n in range(lines) if seen[n] == 0)
    figures.doubled = sum(1 for n in range(lines) if seen[n] > 1)
    figures.answer_messages = sum(1 for text in contents if LINE.search(text))
    figures.rest_429 = sum(exchanges.refused.values())  # from the machines' start on
    figures.twice = sum(1 for interaction in sent if ran[interaction] > 1)
    figures.unrun = sum(1 for interaction in sent if ran[interaction] == 0)
    figures.refused_acks = int(after["interactions_acknowledged_twice"]) - int(
        before["interactions_acknowledged_twice"]
    )
    figures.edit_limit = exchanges.limit
    figures.most_edits = max(exchanges.edits.values(), default=0)
    figures.edits_leaving_none = exchanges.leaving_none
    figures.refused = dict(exchanges.refused)
    return figures


def _settled(sent: list[str]) -> None:
    """Until no machine may still start a command sent: none starts one later than
    :data:`DEADLINE_S` after Discord made it (its snowflake's time), whatever its turn."""
    made = [at for at in (made_at(interaction) for interaction in sent) if at is not None]
    if made:
        time.sleep(max(0.0, max(made) + DEADLINE_S + 0.5 - time.time()))


@contextmanager
def _workdir(keep: Path | None) -> Iterator[str]:
    if keep is None:
        with tempfile.TemporaryDirectory() as name:
            yield name
        return
    keep.mkdir(parents=True, exist_ok=False)
    yield str(keep)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rate-limit-scale", type=float, default=1.0)
    parser.add_argument("--stream-seconds", type=float, default=600.0)
    parser.add_argument("--interactions", type=int, default=200)
    parser.add_argument("--answer-chars", type=int, default=20_000)
    parser.add_argument(
        "--keep", type=Path, default=None, help="a new directory to keep the machines' logs in"
    )
    args = parse_arguments(parser, QUICK)
    stream, count = args.stream_seconds, args.interactions
    started = time.monotonic()
    figures = measure(stream, count, args.answer_chars, args.rate_limit_scale, args.keep)
    took = time.monotonic() - started
    print(
        f"discord budgets: a {stream:.0f} s streaming run, {count} interactions on 3 machines, "
        f"a {args.answer_chars:,}-character answer, rate-limit scale {args.rate_limit_scale:g} "
        f"({took:.0f} s)"
    )
    rows = [
        ("429s", str(figures.rest_429), "0"),
        (
            "edits of one channel per 5 s window, most",
            str(figures.most_edits),
            f"<= {figures.edit_limit or '?'} (the bucket)",
        ),
        ("  of them taking a window's last edit", str(figures.edits_leaving_none), "(shown)"),
        ("interactions sent", str(figures.interactions), ""),
        ("interactions not answered within 3 s", str(figures.late), "0"),
        ("commands run twice / by no machine", f"{figures.twice} / {figures.unrun}", "0 / 0"),
        ("  acknowledgements refused as second", str(figures.refused_acks), "(the race)"),
        ("answer: lines, in messages", f"{figures.answer_lines}, {figures.answer_messages}", ""),
        ("answers cut (lines missing / twice)", f"{figures.missing} / {figures.doubled}", "0 / 0"),
    ]
    for label, value, budget in rows:
        print(f"  {label:44s} {value:>10s}   {budget}")
    print("  (" + ", ".join(f"{k}: {v:.0f} s" for k, v in figures.phases.items()) + ")")
    print(
        "  (a command's run is its machine's log line 'running interaction <id>'; a refused "
        "second acknowledgement is another machine losing the race, not a command run twice)"
    )
    for route, refused in sorted(figures.refused.items()):
        print(f"    429s on {route}: {refused}")
    if figures.interactions != count or not figures.edit_limit or not figures.answer_messages:
        raise BenchFailure(
            f"the run did not happen as measured: {figures.interactions} of {count} commands "
            f"sent, edit limit {figures.edit_limit}, {figures.answer_messages} answer messages"
        )
    over = figures.over_budget()
    for sentence in over:
        print(f"OVER BUDGET: {sentence}")
    print("OK" if not over else "OVER BUDGET")
    return 0 if not over else OVER_BUDGET


if __name__ == "__main__":
    run_main(main)
