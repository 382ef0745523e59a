"""Delegating a coding task from a script or another agent (issue 23), with the real CLIs on
the scripted model server and no Discord at all.

What docs/delegation.md shows, run as a script
would run it, once per CLI: ``discord-watch --local &``, ``discord-watch project add``,
``submit --wait --json``, ``resume``, ``status``, and the run folder's ``result.json`` and
``changes.patch``. Then the real Claude Code, given the delegate-coding skill by ``discord-mcp
install claude --skills``, uses it to hand a task to Codex and reports Codex's answer.
"""

from __future__ import annotations

import http.server
import json
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from tests.support.agent_clis import (
    CLAUDE_MODEL,
    GEMINI_MODEL,
    AgentCli,
    ClaudeCli,
    CodexCli,
    GeminiCli,
)
from tests.support.model_server import (
    BuiltinCall,
    ModelRequest,
    ModelServer,
    Reply,
    ScriptError,
    ShellCall,
    Text,
    quote_tool_result,
    wait_until,
)

pytestmark = pytest.mark.e2e

WATCH = [sys.executable, "-c", "from discord_mcp.watch.cli import main; raise SystemExit(main())"]
MCP = [sys.executable, "-m", "discord_mcp"]
PROJECT_ARGS: dict[str, list[str]] = {
    "claude": ["--model", CLAUDE_MODEL, "--permission-mode", "acceptEdits"],
    "codex": ["-s", "workspace-write"],
    "gemini": ["-m", GEMINI_MODEL, "--approval-mode", "yolo"],
}


def git(workdir: Path, *args: str) -> str:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(workdir), "GIT_AUTHOR_NAME": "t"}
    env |= {"GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@x"}
    done = subprocess.run(
        ["git", *args],
        cwd=workdir,
        env=env,
        capture_output=True,
        encoding="utf-8",
        text=True,
        check=True,
    )
    return done.stdout


class Script:
    """A shell of its own: the environment a script sees (the three CLIs set up against the
    scripted model, a state directory, no Discord), and ``discord-watch`` as commands."""

    def __init__(self, tmp_path: Path, model: ModelServer) -> None:
        root = tmp_path / "clis"
        # One home for all three: each keeps its configuration under it (.claude, .codex,
        # .gemini), as on a developer's machine.
        self.clis: dict[str, AgentCli] = {
            "claude": ClaudeCli(root=root, model_url=model.base_url, proxy_url=model.proxy_url),
            "codex": CodexCli(root=root, model_url=model.base_url, proxy_url=model.proxy_url),
            "gemini": GeminiCli(root=root, model_url=model.base_url, proxy_url=model.proxy_url),
        }
        env: dict[str, str] = {}
        for cli in self.clis.values():
            env |= cli.env()
        bin_dir = Path(sys.executable).parent  # discord-watch and discord-mcp, as installed
        env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
        self.home = tmp_path / "state"
        env |= {"DISCORD_MCP_HOME": str(self.home), "DISCORD_WATCH_ROOTS": str(tmp_path)}
        self.env = env
        self.cwd = tmp_path
        self.daemon: subprocess.Popen[str] | None = None

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*WATCH, *args],
            capture_output=True,
            encoding="utf-8",
            text=True,
            env=self.env,
            cwd=self.cwd,
            timeout=240,
        )

    def json(self, *args: str) -> tuple[int, dict[str, Any]]:
        done = self.run(*args, "--json")
        assert done.stdout.count("\n") == 1, (done.stdout, done.stderr)
        return done.returncode, json.loads(done.stdout)

    def start_daemon(self) -> str:
        """``discord-watch --local &``; its first line."""
        self.daemon = subprocess.Popen(
            [*WATCH, "--local"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            encoding="utf-8",
            text=True,
            env=self.env,
            cwd=self.cwd,
        )
        assert self.daemon.stdout is not None
        first = self.daemon.stdout.readline()
        wait_until(
            lambda: (self.home / "watch" / "alive.json").exists(), timeout=30, what="the daemon"
        )
        return first

    def stop_daemon(self) -> str:
        if self.daemon is None:
            return ""
        self.daemon.send_signal(signal.SIGTERM)
        try:
            _, err = self.daemon.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.daemon.kill()
            _, err = self.daemon.communicate()
        return err


@pytest.fixture
def script(tmp_path: Path, model_server: ModelServer) -> Iterator[Script]:
    made = Script(tmp_path, model_server)
    yield made
    made.stop_daemon()
    for cli in made.clis.values():
        cli.close()


def project(tmp_path: Path, name: str) -> Path:
    """A git work tree with one committed file."""
    workdir = tmp_path / name
    workdir.mkdir()
    git(workdir, "init", "-q")
    (workdir / "README.md").write_text("# app\n", encoding="utf-8")
    git(workdir, "add", "README.md")
    git(workdir, "commit", "-q", "-m", "start")
    return workdir


def write_file(cli: str, path: Path, text: str) -> Reply:
    """The model writes a file with the CLI's own tool."""
    if cli == "claude":
        return BuiltinCall("Write", {"file_path": str(path), "content": text})
    if cli == "gemini":
        return BuiltinCall("write_file", {"file_path": str(path), "content": text})
    return ShellCall(f"printf %s {json.dumps(text)} > {path.name}")


def after_tool(text: str) -> Callable[[ModelRequest], Reply]:
    """Answer ``text`` once the tool's result came back (and fail loudly if it did not)."""

    def step(request: ModelRequest) -> Reply:
        if not request.latest_tool_results():
            raise ScriptError("expected the tool's result")
        return Text(text)

    return step


@pytest.mark.parametrize("cli", ["claude", "codex", "gemini"])
def test_a_script_delegates_with_local_discord_watch_and_reads_the_result(
    cli: str, script: Script, model_server: ModelServer, tmp_path: Path
) -> None:
    workdir = project(tmp_path, "app")
    model_server.script(
        write_file(cli, workdir / "hello.txt", "hello from the agent\n"),
        after_tool("Wrote hello.txt."),
        Text("Still the same session: hello.txt is there."),
    )
    first = script.start_daemon()
    added = script.run(
        "project", "add", "app", str(workdir), "--tools", cli, "--args",
        f"{cli}={json.dumps(PROJECT_ARGS[cli])}",
    )  # fmt: skip
    code, result = script.json("submit", "app", "Create hello.txt", "--wait")
    again_code, again = script.json("resume", result["run_id"], "Is it still there?", "--wait")
    status_code, status = script.json("status", result["run_id"])
    err = script.stop_daemon()
    run_dir = Path(status["run_dir"])
    stored = json.loads((run_dir / "result.json").read_text(encoding="utf-8"))
    patch = (run_dir / "artifacts" / "changes.patch").read_text(encoding="utf-8")
    assert first.startswith("discord-watch: local only (no Discord)")
    assert added.returncode == 0, added.stderr
    assert code == 0, (result, err)
    assert result["status"] == "completed"
    assert result["summary"] == "Wrote hello.txt."
    assert result["session_id"]
    assert again_code == 0, again
    assert again["session_id"] == result["session_id"]  # resumed, not a new session
    assert [t["status"] for t in again["turns"]] == ["completed", "completed"]
    assert again["summary"] == "Still the same session: hello.txt is there."
    assert status_code == 0
    assert (status["status"], status["turn"]) == ("completed", 2)
    assert again["run_dir"] == str(run_dir)  # --wait's result says where its folder is
    assert stored == {k: v for k, v in again.items() if k != "run_dir"}
    assert stored["duration_ms"] > 0
    assert stored["token_usage"]["input"] > 0
    assert stored["token_usage"]["output"] > 0
    usage = stored["token_usage"]  # the CodeBridge seed's names too (issue 34)
    assert (usage["prompt_tokens"], usage["completion_tokens"]) == (usage["input"], usage["output"])
    assert usage["total_tokens"] == usage["input"] + usage["output"]
    assert "+hello from the agent" in patch
    assert "hello.txt" in patch
    assert (run_dir / "logs" / "turn-002.stdout.ndjson").stat().st_size > 0
    assert "## Turn 2" in (run_dir / "logs" / "events.md").read_text(encoding="utf-8")
    resumed = [r for r in model_server.turn_requests() if "Is it still there?" in r.user_texts()]
    assert resumed
    assert "Create hello.txt" in resumed[0].user_texts()  # the conversation went on


def test_claude_uses_the_skill_to_delegate_a_task_to_codex_and_reports_its_result(
    script: Script, model_server: ModelServer, tmp_path: Path
) -> None:
    workdir = project(tmp_path, "svc")
    claude = ClaudeCli(
        root=tmp_path / "clis",  # the script's own Claude Code, allowed its Skill and Bash tools
        model_url=model_server.base_url,
        proxy_url=model_server.proxy_url,
        extra_args=["--allowedTools", "Skill", "Bash"],
        extra_env={"PATH": script.env["PATH"], "DISCORD_MCP_HOME": str(script.home)},
    )
    installed = subprocess.run(
        [*MCP, "install", "claude", "--skills"],
        capture_output=True,
        encoding="utf-8",
        text=True,
        env=script.env,
        cwd=tmp_path,
        timeout=60,
    )
    submit = "discord-watch submit svc 'Add fixed.txt saying fixed' --tool codex --wait --json"

    def use_the_skill(request: ModelRequest) -> Reply:
        if request.api != "anthropic" or "delegate-coding" not in request.dump():
            raise ScriptError("Claude was not offered the delegate-coding skill")
        return BuiltinCall("Skill", {"skill": "delegate-coding"})

    def follow_it(request: ModelRequest) -> Reply:
        loaded = " ".join(r.text for r in request.tool_results()) + request.dump()
        if "discord-watch submit" not in loaded:
            raise ScriptError("the skill's instructions did not reach the model")
        return ShellCall(submit, description="delegate to codex")

    def report(request: ModelRequest) -> Reply:
        results = request.latest_tool_results()
        if request.api != "anthropic" or not results:
            raise ScriptError("expected Claude's Bash result")
        text = results[-1].text
        result = json.loads(text[text.index("{") :])
        return Text(
            f"Codex {result['status']}: {result['summary']} "
            f"(run {result['run_id']}, session {result['session_id']})"
        )

    model_server.script(
        use_the_skill,
        follow_it,
        ShellCall("printf 'fixed\\n' > fixed.txt"),  # Codex, under discord-watch
        after_tool("Codex: fixed.txt is written."),
        report,
    )
    script.start_daemon()
    added = script.run(
        "project", "add", "svc", str(workdir), "--tools", "codex", "--args",
        f"codex={json.dumps(PROJECT_ARGS['codex'])}",
    )  # fmt: skip
    running = claude.start(
        "Delegate this to Codex with discord-watch: add fixed.txt saying fixed in the svc "
        "project, then tell me what it did.",
        timeout=240,
    )
    outcome = running.wait()
    script.stop_daemon()
    assert installed.returncode == 0, installed.stderr
    assert added.returncode == 0, added.stderr
    assert outcome.succeeded, outcome.describe()
    final = outcome.final_text() or ""
    assert final.startswith("Codex completed: Codex: fixed.txt is written.")
    [run_dir] = (script.home / "runs").glob("run_*")
    result = json.loads((run_dir / "result.json").read_text(encoding="utf-8"))
    assert result["engine"] == "codex"
    assert f"run {result['run_id']}" in final
    assert "+fixed" in (run_dir / "artifacts" / "changes.patch").read_text(encoding="utf-8")
    assert (workdir / "fixed.txt").read_text(encoding="utf-8") == "fixed\n"
    codex_turns = model_server.turn_requests("openai")
    assert codex_turns
    assert "Add fixed.txt saying fixed" in codex_turns[0].user_texts()


class Hits(http.server.BaseHTTPRequestHandler):
    seen: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        Hits.seen.append(self.path)
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"NETWORK-OK")

    def log_message(self, format: str, *args: Any) -> None:
        return None


@pytest.fixture
def listener() -> Iterator[str]:
    """A local web server that counts the requests that reached it."""
    Hits.seen = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hits)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


OFFLINE_ARGS: dict[str, list[str]] = {
    "claude": ["--model", CLAUDE_MODEL, "--allowedTools", "Bash"],
    "codex": ["-s", "workspace-write"],
    "gemini": ["-m", GEMINI_MODEL, "--approval-mode", "yolo"],
}


def test_no_network_keeps_codex_off_the_network(
    script: Script, model_server: ModelServer, tmp_path: Path, listener: str
) -> None:
    workdir = project(tmp_path, "app")
    # Codex's sandbox is tried with a program the agent runs itself.
    command = f"python3 -c \"import urllib.request as u; print(u.urlopen('{listener}').read())\""
    model_server.script(ShellCall(command), quote_tool_result("Fetched: {result}"))
    script.start_daemon()
    added = script.run(
        "project", "add", "app", str(workdir), "--tools", "codex", "--args",
        f"codex={json.dumps(OFFLINE_ARGS['codex'])}",
    )  # fmt: skip
    code, result = script.json("submit", "app", "Fetch the page", "--no-network", "--wait")
    script.stop_daemon()
    assert added.returncode == 0, added.stderr
    assert code == 0, result
    assert Hits.seen == []  # nothing reached the listener
    assert "NETWORK-OK" not in (result["summary"] or "")
    assert result["constraints"]["allow_network"] is False
    assert result["constraints"]["network_enforcement"] == "sandbox"
    [tool_result] = [r for r in model_server.tool_results() if r.text]
    assert "Operation not permitted" in tool_result.text


class Connections:
    """A TCP listener on the host's loopback that counts the connections it accepts (each one
    closed at once)."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.accepted = 0
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            self.accepted += 1
            connection.close()

    def close(self) -> None:
        self.server.shutdown(socket.SHUT_RDWR)  # wakes the accept() under way
        self.server.close()
        self.thread.join(5)


@pytest.fixture
def connections() -> Iterator[Connections]:
    listener = Connections()
    yield listener
    listener.close()


def reaching(port: int) -> list[str]:
    """Commands that open a TCP connection to ``port`` on 127.0.0.1, each in a form the command
    check (``discord-mcp hook network``) lets through, each printing its exit code."""
    return [
        f"python3 -c \"__import__('soc'+'ket').create_connection(('127.0.0.1', {port}))\"; "
        "echo PY:$?",
        f"node -e \"require('net').connect({port}, '127.0.0.1')"
        ".on('connect', () => process.exit(0)).on('error', () => process.exit(3))\"; echo NODE:$?",
        f"$'\\x63url' -s --max-time 10 127.0.0.1:{port}; echo CURL:$?",
    ]


def in_background(cli: str, command: str) -> Reply:
    """The model runs ``command`` with the CLI's shell tool, in the background."""
    if cli == "claude":
        arguments = {"command": command, "description": "bg", "run_in_background": True}
        return BuiltinCall("Bash", arguments)
    return BuiltinCall(
        "run_shell_command", {"command": command, "description": "bg", "is_background": True}
    )


def reaching_in_background(port: int) -> tuple[str, str]:
    """A background command that connects to ``port``, and one that waits for its exit code."""
    start = (
        f"python3 -c \"__import__('soc'+'ket').create_connection(('127.0.0.1', {port}))\"; "
        "echo $? > bg-exit"
    )
    # (Gemini CLI refuses commands with $(...) in them.)
    wait = (
        "python3 -c \"import pathlib, time; p = pathlib.Path('bg-exit'); "
        "[time.sleep(0.1) for _ in range(300) if not (p.exists() and p.read_text().strip())]; "
        "print('BG:' + p.read_text().strip())\""
    )
    return start, wait


@pytest.mark.parametrize("cli", ["claude", "gemini"])
def test_no_network_runs_every_command_of_the_agent_in_a_namespace_without_network(
    cli: str,
    script: Script,
    model_server: ModelServer,
    tmp_path: Path,
    connections: Connections,
) -> None:
    """Commands the command check lets through, in the foreground and in the background, never
    reach a listener on the host: the operating system keeps the promise, not the check."""
    workdir = project(tmp_path, "app")
    start, wait = reaching_in_background(connections.port)
    model_server.script(
        *[ShellCall(command) for command in reaching(connections.port)],
        in_background(cli, start),
        ShellCall(wait),
        after_tool("Tried them all."),
    )
    script.start_daemon()
    added = script.run(
        "project", "add", "app", str(workdir), "--tools", cli, "--args",
        f"{cli}={json.dumps(OFFLINE_ARGS[cli])}",
    )  # fmt: skip
    code, result = script.json("submit", "app", "Connect", "--no-network", "--wait")
    script.stop_daemon()
    assert added.returncode == 0, added.stderr
    assert code == 0, result
    assert connections.accepted == 0  # nothing reached the listener
    said = "\n".join(r.text for r in model_server.tool_results())
    # Each ran, and each failed to connect: refused by the namespace's own loopback.
    assert "PY:1" in said
    assert "NODE:3" in said
    assert "CURL:7" in said
    assert "BG:1" in said
    assert result["constraints"]["allow_network"] is False
    assert result["constraints"]["network_enforcement"] == "namespace"


@pytest.mark.parametrize("cli", ["claude", "gemini"])
def test_with_network_the_same_commands_reach_the_listener(
    cli: str,
    script: Script,
    model_server: ModelServer,
    tmp_path: Path,
    connections: Connections,
) -> None:
    """The control for the test above: its commands do connect when the run has network."""
    workdir = project(tmp_path, "app")
    start, wait = reaching_in_background(connections.port)
    model_server.script(
        *[ShellCall(command) for command in reaching(connections.port)],
        in_background(cli, start),
        ShellCall(wait),
        after_tool("Tried them all."),
    )
    script.start_daemon()
    script.run(
        "project", "add", "app", str(workdir), "--tools", cli, "--args",
        f"{cli}={json.dumps(OFFLINE_ARGS[cli])}",
    )  # fmt: skip
    code, result = script.json("submit", "app", "Connect", "--wait")
    script.stop_daemon()
    assert code == 0, result
    assert connections.accepted == 4
    said = "\n".join(r.text for r in model_server.tool_results())
    assert "PY:0" in said
    assert "NODE:0" in said
    assert "BG:0" in said


def test_with_network_codex_reaches_the_listener(
    script: Script, model_server: ModelServer, tmp_path: Path, listener: str
) -> None:
    """The control for the Codex test above: its command does reach the network when allowed."""
    cli = "codex"
    workdir = project(tmp_path, "app")
    args = [*OFFLINE_ARGS[cli], "-c", "sandbox_workspace_write.network_access=true"]
    command = f"python3 -c \"import urllib.request as u; print(u.urlopen('{listener}').read())\""
    model_server.script(ShellCall(command), quote_tool_result("Fetched: {result}"))
    script.start_daemon()
    script.run(
        "project", "add", "app", str(workdir), "--tools", cli, "--args", f"{cli}={json.dumps(args)}"
    )
    code, result = script.json("submit", "app", "Fetch the page", "--wait")
    script.stop_daemon()
    assert code == 0, result
    assert Hits.seen == ["/"]
    assert "NETWORK-OK" in result["summary"]
