"""A scripted stand-in for the claude / codex / gemini CLIs (test-only, standard library only).

    python fake_cli.py '<scenario JSON>' -- <the real CLI's argv...>

It replays a recorded sample (tests/data/agent-cli-samples/<sample>) on stdout, as the real CLI
printed it, and can be told to misbehave. The scenario (a JSON object, see
:class:`tests.support.fake_agents.Scenario`) says:

- ``sample``: path of the recorded stdout to replay; ``rc``: the exit code.
- ``session``: rewrite the sample's session key to the one in argv when the argv resumes a
  session (``--resume X`` / ``resume X``), else to a fresh one (like the real CLIs do).
- ``noise``: non-JSON lines printed first (Gemini prints such lines on stdout).
- ``stderr``: text for stderr.
- ``gate``: a file; everything but the last line is printed, then the fake waits for the file
  to exist (at most ``max_wait`` seconds), then prints the last line and exits.
- ``hang``: print everything but the last line, then wait until killed (at most ``max_wait``).
- ``die_by``: print everything but the last line, then kill itself with that signal (a crash).
- ``drop_final``: never print the last line.
- ``child``: start a grandchild that sleeps (to prove a kill reaches the whole group).
- ``ignore_term``: ignore SIGTERM (to prove the SIGKILL escalation).
- ``record``: a JSONL file; one line per run with pid, pgid, argv, cwd, selected env, the
  monotonic start time and the grandchild's pid.
- ``secret``: a value; the record's ``secret_in`` names every variable that contains it.
- ``writes``: ``[[path, text], ...]``: files to write (relative to the working directory)
  before the output, as an agent changing its project would.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

_START = time.monotonic()
_POLL = 0.01


def _session_key(tool: str, lines: list[str]) -> str | None:
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if tool == "codex" and event.get("type") == "thread.started":
            return str(event["thread_id"])
        if tool != "codex" and event.get("session_id"):
            return str(event["session_id"])
    return None


def _resume_key(tool: str, argv: list[str]) -> str | None:
    flag = "resume" if tool == "codex" else "--resume"
    before_prompt = argv[: argv.index("--")] if "--" in argv else argv
    if flag in before_prompt:
        index = before_prompt.index(flag)
        if index + 1 < len(before_prompt):
            return before_prompt[index + 1]
    return None


def _prompt(tool: str, argv: list[str]) -> str | None:
    if tool == "gemini":
        for part in argv:
            if part.startswith("--prompt="):
                return part[len("--prompt=") :]
        return None
    return argv[argv.index("--") + 1] if "--" in argv else None


def _wait_for(path: str, limit: float) -> None:
    deadline = time.monotonic() + limit
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(_POLL)


def main() -> int:
    scenario = json.loads(sys.argv[1])
    argv = sys.argv[sys.argv.index("--", 2) + 1 :]
    tool = scenario["tool"]
    max_wait = float(scenario.get("max_wait", 60))
    if scenario.get("ignore_term"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    with open(scenario["sample"], encoding="utf-8") as handle:
        lines = [line.rstrip("\n") for line in handle if line.strip()]
    key = _resume_key(tool, argv)
    if scenario.get("session", True):
        original = _session_key(tool, lines)
        new = key or f"fake-{os.urandom(8).hex()}"
        if original:
            lines = [line.replace(original, new) for line in lines]
    child_pid = None
    if scenario.get("child"):
        child = subprocess.Popen(
            [sys.executable, "-c", f"import time; time.sleep({max_wait * 2})"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        child_pid = child.pid
    if scenario.get("record"):
        record = {
            "pid": os.getpid(),
            "pgid": os.getpgrp(),
            "ppid": os.getppid(),
            "start": _START,
            "tool": tool,
            "argv": argv,
            "cwd": os.getcwd(),
            "prompt": _prompt(tool, argv),
            "resume": key,
            "child_pid": child_pid,
            "env": {
                name: os.environ.get(name)
                for name in scenario.get("env_names", ["DISCORD_THREAD_ID"])
            },
        }
        if scenario.get("secret"):
            record["secret_in"] = sorted(
                name for name, value in os.environ.items() if scenario["secret"] in value
            )
        with open(scenario["record"], "a", encoding="utf-8") as log:
            log.write(json.dumps(record) + "\n")
    for path, text in scenario.get("writes") or []:
        with open(path, "w", encoding="utf-8") as written:
            written.write(text)
    if scenario.get("stderr"):
        sys.stderr.write(scenario["stderr"])
        sys.stderr.flush()
    out = sys.stdout
    for noise in scenario.get("noise", []):
        out.write(noise + "\n")
    held_back = lines[-1:] if lines else []
    for line in lines[:-1]:
        out.write(line + "\n")
    out.flush()
    if scenario.get("die_by"):
        os.kill(os.getpid(), int(scenario["die_by"]))  # a crash: no final result
    if scenario.get("hang"):
        deadline = time.monotonic() + max_wait
        while time.monotonic() < deadline:
            time.sleep(_POLL * 10)
        return 99
    if scenario.get("gate"):
        _wait_for(scenario["gate"], max_wait)
    if not scenario.get("drop_final"):
        for line in held_back:
            out.write(line + "\n")
    out.flush()
    return int(scenario.get("rc", 0))


if __name__ == "__main__":
    raise SystemExit(main())
