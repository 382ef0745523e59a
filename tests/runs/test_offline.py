"""A run without network (issue 32): the launcher that puts each of the agent's commands in a
network namespace (discord_mcp/runs/netns.py), the probe that refuses a run where no namespace
can be made, and how Claude Code's and Gemini CLI's invocations route their commands through
it. The real CLIs are in tests/e2e/test_delegate_e2e.py."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from discord_mcp.errors import RunError
from discord_mcp.runs import ProjectRegistry
from discord_mcp.runs.acp.agents import AgentRegistry
from discord_mcp.runs.adapters.base import InvocationRequest, McpRegistration
from discord_mcp.runs.adapters.claude import ClaudeAdapter
from discord_mcp.runs.adapters.gemini import GeminiAdapter
from discord_mcp.runs.constraints import Constraints
from discord_mcp.runs.netns import REFUSED, netns_inode
from discord_mcp.runs.offline import LAUNCHER, Jail, Probe, config_text, probe
from discord_mcp.runs.processes.spawner import run_blocking
from tests.runs.conftest import EngineFactory
from tests.support.fake_agents import FakeSpawner, RecordingNotifier
from tests.support.requirements import missing, require_program

BASH = shutil.which("bash") or "/bin/bash"


class Listener:
    """A TCP listener on the host's loopback that counts the connections made to it: a
    connection the kernel completed waits in the backlog, so counting takes them from there
    (no thread that might not have accepted yet)."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.server.setblocking(False)
        self.port: int = self.server.getsockname()[1]
        self._count = 0

    @property
    def accepted(self) -> int:
        while True:
            try:
                connection, _ = self.server.accept()
            except BlockingIOError:
                return self._count
            self._count += 1
            connection.close()

    def close(self) -> None:
        self.server.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    made = Listener()
    yield made
    made.close()


def connect(port: int) -> str:
    """Shell code that connects to ``port`` on 127.0.0.1 and exits 0 only if it could."""
    code = f"import socket; socket.create_connection(('127.0.0.1', {port}), 5)"
    return shlex.join([sys.executable, "-c", code])


@pytest.fixture(params=["unshare", "bwrap"])
def jail(request: pytest.FixtureRequest) -> Jail:
    bwrap = (
        require_program("bwrap", "the bubblewrap way of making a namespace")
        if (request.param == "bwrap")
        else None
    )
    return Jail(request.param, sys.executable, netns_inode(), bwrap)


INTERFACES = "import socket; print('interfaces:', [n for _, n in socket.if_nameindex()])"


def write_config(
    directory: Path,
    jail: Jail,
    allow: list[list[str]] | None = None,
    strip: Path | None = None,
    allow_code: list[str] | None = None,
) -> Path:
    path = directory / "no-network.json"
    path.write_text(config_text(jail, BASH, allow or [], strip, allow_code or []), encoding="utf-8")
    return path


def launch(
    config: Path, mode: str, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-I", "-S", str(LAUNCHER), "--config", str(config), mode, *args]
    return subprocess.run(
        argv, capture_output=True, text=True, encoding="utf-8", timeout=30, check=False, env=env
    )


# --------------------------------------------------------------------------------------------
# The launcher


def test_a_command_in_the_namespace_cannot_reach_a_listener_on_the_host(
    jail: Jail, listener: Listener, tmp_path: Path
) -> None:
    config = write_config(tmp_path, jail)
    interfaces = shlex.join([sys.executable, "-c", INTERFACES])
    done = launch(config, "--prefix", f"{connect(listener.port)}; echo exit:$?; {interfaces}")
    assert done.returncode == 0, done.stderr
    assert "exit:1" in done.stdout  # refused by the namespace's own loopback
    assert "interfaces: ['lo']" in done.stdout
    assert listener.accepted == 0


def test_without_the_launcher_the_same_command_reaches_the_listener(listener: Listener) -> None:
    """The control for the test above."""
    done = subprocess.run([BASH, "-c", connect(listener.port)], timeout=30, check=False)
    assert done.returncode == 0
    assert listener.accepted == 1


def test_only_our_own_commands_run_outside_word_for_word(
    listener: Listener, tmp_path: Path
) -> None:
    jail = Jail("unshare", sys.executable, netns_inode())
    ours = shlex.split(connect(listener.port))
    config = write_config(tmp_path, jail, allow=[ours])
    assert launch(config, "--prefix", shlex.join(ours)).returncode == 0
    assert launch(config, "--shim", "-c", shlex.join(ours)).returncode == 0
    assert listener.accepted == 2  # ours: outside, with network
    for code in (f"{shlex.join(ours)}; true", f"true; {shlex.join(ours)}", f"{ours[0]} -c pass"):
        assert launch(config, "--prefix", code).returncode != REFUSED  # run, but inside
    assert launch(config, "--shim", "-c", shlex.join(ours), "name").returncode != 0
    assert launch(config, "--shim", "-x", "-c", shlex.join(ours)).returncode != 0
    assert listener.accepted == 2  # anything else: inside


def test_our_guard_hooks_shell_command_runs_outside_only_character_for_character(
    listener: Listener, tmp_path: Path
) -> None:
    """A guard hook's command is a shell command (wrapped to fail closed when killed): it runs
    outside with the shell when it is exactly ours, inside when anything in it differs."""
    jail = Jail("unshare", sys.executable, netns_inode())
    ours = f"{connect(listener.port)} || {{ s=$?; exit 2; }}"
    config = write_config(tmp_path, jail, allow_code=[ours])
    assert launch(config, "--prefix", ours).returncode == 0
    assert launch(config, "--shim", "-c", ours).returncode == 0
    assert listener.accepted == 2  # ours: outside, with network
    for code in (f"{ours}; true", f"true; {ours}", ours.replace("exit 2", "exit  2"), f" {ours}"):
        assert launch(config, "--prefix", code).returncode != REFUSED  # run, but inside
    assert listener.accepted == 2  # anything else: inside


def test_a_command_in_the_namespace_cannot_join_the_clis_network_namespace_again(
    jail: Jail, tmp_path: Path
) -> None:
    """Even as root: the namespace comes with a user namespace of its own, so the command has
    no capability over the namespaces it came from."""
    join = (
        "import ctypes, os, sys\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "try:\n"
        f"    fd = os.open('/proc/{os.getpid()}/ns/net', os.O_RDONLY)\n"
        "except OSError as exc:\n"
        "    sys.exit(f'cannot open: {exc.strerror}')\n"
        "sys.exit('joined' if libc.setns(fd, 0x40000000) == 0 else 'setns refused')\n"
    )
    done = launch(
        write_config(tmp_path, jail), "--prefix", shlex.join([sys.executable, "-c", join])
    )
    assert done.returncode == 1
    assert "joined" not in done.stderr
    assert "cannot open" in done.stderr or "setns refused" in done.stderr


def test_the_bash_shim_runs_bashs_arguments_inside_and_takes_itself_off_path(
    listener: Listener, tmp_path: Path
) -> None:
    jail = Jail("unshare", sys.executable, netns_inode())
    shim_dir = tmp_path / "no-network-bin"
    config = write_config(tmp_path, jail, strip=shim_dir)
    script = tmp_path / "script.sh"
    script.write_text(f'{connect(listener.port)}; echo "exit:$? path:$PATH"\n', encoding="utf-8")
    env = {**os.environ, "PATH": f"{shim_dir}{os.pathsep}/usr/bin:/bin"}
    done = launch(config, "--shim", str(script), env=env)
    assert done.returncode == 0, done.stderr
    assert "exit:1" in done.stdout
    assert str(shim_dir) not in done.stdout.split("path:")[1]
    assert listener.accepted == 0


def test_a_command_already_in_a_namespace_of_its_own_runs_as_it_is(tmp_path: Path) -> None:
    """A bash the agent starts from a namespaced command goes through the shim again: it stays
    in the same namespace rather than making one more."""
    jail = Jail("unshare", sys.executable, netns_inode())
    config = write_config(tmp_path, jail)
    again = shlex.join(
        [sys.executable, "-I", "-S", str(LAUNCHER), "--config", str(config), "--prefix",
         "readlink /proc/self/ns/net"]
    )  # fmt: skip
    done = launch(config, "--prefix", f"readlink /proc/self/ns/net; {again}")
    assert done.returncode == 0, done.stderr
    outer, inner = done.stdout.split()
    assert outer == inner
    assert outer != os.readlink("/proc/self/ns/net")


def test_what_cannot_be_read_is_refused_and_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    code = f"touch {shlex.quote(str(marker))}"
    broken = tmp_path / "broken.json"
    broken.write_text("{", encoding="utf-8")
    unknown = tmp_path / "unknown.json"
    unknown.write_text(json.dumps({"version": 99}), encoding="utf-8")
    good = write_config(tmp_path, Jail("unshare", sys.executable, netns_inode()))
    refusals = [
        launch(broken, "--prefix", code),
        launch(unknown, "--prefix", code),
        launch(tmp_path / "missing.json", "--prefix", code),
        launch(good, "--prefix", code, "two"),  # the prefix gets its code as one argument
        launch(good, "--elsewhere", code),
    ]
    for done in refusals:
        assert done.returncode == REFUSED
        assert "this run has no network" in done.stderr
        assert "the command was not run" in done.stderr
    assert not marker.exists()


def test_a_bubblewrap_that_gives_no_namespace_is_refused(
    listener: Listener, tmp_path: Path
) -> None:
    """Fail closed: the launcher checks the namespace bubblewrap gave before it runs anything."""
    fake = tmp_path / "bwrap"
    fake.write_text(
        '#!/bin/sh\nwhile [ "$1" != "--" ]; do shift; done; shift; exec "$@"\n', encoding="utf-8"
    )
    fake.chmod(0o755)
    config = write_config(tmp_path, Jail("bwrap", sys.executable, netns_inode(), str(fake)))
    done = launch(config, "--prefix", connect(listener.port))
    assert done.returncode == REFUSED
    assert "did not give it a network namespace" in done.stderr
    assert listener.accepted == 0
    argv = [sys.executable, "-I", "-S", str(LAUNCHER), "--try", "bwrap", "--outer"]
    tried = subprocess.run(
        [*argv, str(netns_inode()), "--bwrap", str(fake)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=False,
    )
    assert tried.returncode == REFUSED
    assert "bubblewrap could not make a network namespace" in tried.stderr


def test_a_command_counts_as_offline_only_in_another_namespace_with_loopback_alone() -> None:
    """Neither half is enough: the CLI's own namespace never counts (even where it has
    loopback alone), nor does another namespace that still has a network interface."""

    def check(outer: int) -> int:
        argv = [sys.executable, "-I", "-S", str(LAUNCHER), "--check", str(outer)]
        return subprocess.run(argv, capture_output=True, check=False).returncode

    here = netns_inode()
    assert check(here) == 1
    if {name for _, name in socket.if_nameindex()} - {"lo"}:
        assert check(here + 1) == 1  # a namespace other than the one named, with eth0 in it


def test_an_unprivileged_user_gets_a_namespace_too(tmp_path: Path) -> None:
    """The path that maps an unprivileged uid into the new user namespace (as root the test
    above runs it as root; CI without root runs every test here unprivileged)."""
    if os.geteuid() != 0:
        pytest.skip("not root: every other test here already runs unprivileged")
    setpriv = require_program("setpriv", "to run the launcher as nobody")
    python = shutil.which("python3", path="/usr/bin:/bin")
    if python is None:
        missing("no python3 in /usr/bin or /bin for the user nobody")
    directory = Path(tempfile.mkdtemp(prefix="netns-"))
    try:
        directory.chmod(0o755)
        launcher = directory / "netns.py"
        shutil.copy(LAUNCHER, launcher)
        launcher.chmod(0o644)
        config = directory / "no-network.json"
        config.write_text(
            config_text(Jail("unshare", python, netns_inode()), BASH, [], None), encoding="utf-8"
        )
        config.chmod(0o644)
        as_nobody = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]
        code = f"id -u; {shlex.join([python, '-c', INTERFACES])}"
        done = subprocess.run(
            [*as_nobody, python, "-I", "-S", str(launcher), "--config", str(config), "--prefix",
             code],
            capture_output=True, text=True, encoding="utf-8", timeout=30, check=False,
            cwd=directory,
        )  # fmt: skip
    finally:
        shutil.rmtree(directory)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[0] == "65534"  # the same uid inside, not root
    assert "interfaces: ['lo']" in done.stdout


# --------------------------------------------------------------------------------------------
# The probe


def test_the_probe_names_the_first_way_that_works_here() -> None:
    found = probe(sys.executable, run_blocking)
    assert found.mechanism == "unshare"
    assert found.outer_netns == netns_inode()


def test_where_no_namespace_can_be_made_the_probe_refuses_with_the_reasons() -> None:
    tried: list[list[str]] = []

    def refused(argv: list[str], within: float) -> tuple[int | None, str]:
        tried.append(argv)
        return REFUSED, "discord-mcp: ... (unshare(...) failed: Operation not permitted): ..."

    with pytest.raises(RunError) as no_bwrap:
        probe(sys.executable, refused, bwrap="")
    assert no_bwrap.value.code == "E_NETWORK_NOT_ENFORCEABLE"
    assert "Operation not permitted" in no_bwrap.value.message
    assert "bubblewrap (bwrap) is not installed" in no_bwrap.value.message
    assert len(tried) == 1
    with pytest.raises(RunError) as both:
        probe(sys.executable, refused, bwrap="/usr/bin/bwrap")
    assert both.value.message.count("Operation not permitted") == 2
    assert [argv[argv.index("--try") + 1] for argv in tried[1:]] == ["unshare", "bwrap"]


def test_the_probe_is_remembered_once_it_worked_and_tried_again_after_a_failure() -> None:
    answers = [(1, "(no)"), (0, ""), (1, "(no)")]
    calls: list[list[str]] = []

    def runner(argv: list[str], within: float) -> tuple[int | None, str]:
        calls.append(argv)
        return answers.pop(0) if answers else (1, "(no)")

    probe_once = Probe(sys.executable, runner, bwrap="")  # unshare only
    with pytest.raises(RunError):
        probe_once()
    found = probe_once()
    assert found.mechanism == "unshare"
    assert probe_once() is found
    assert len(calls) == 2


# --------------------------------------------------------------------------------------------
# The CLIs' invocations


def request(tmp_path: Path, executable: str, **kw: object) -> InvocationRequest:
    fields: dict[str, object] = {
        "executable": executable,
        "prompt": "p",
        "resume_key": None,
        "default_args": (),
        "job_dir": tmp_path / "job",
        "shared_dir": tmp_path / "shared",
        "thread_id": "t",
        "env": {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home")},
        "mcp": McpRegistration(argv=["/venv/bin/python", "-m", "discord_mcp"]),
        "allow_network": False,
        "jail": Jail("unshare", sys.executable, 4026531840),
    }
    fields.update(kw)
    return InvocationRequest(**fields)  # type: ignore[arg-type]


def test_claude_routes_every_command_through_our_shell_prefix(tmp_path: Path) -> None:
    invocation = ClaudeAdapter().invocation(request(tmp_path, "claude", approvals="ask-all"))
    job = tmp_path / "job"
    prefix = job / "no-network-shell"
    assert invocation.env["CLAUDE_CODE_SHELL_PREFIX"] == str(prefix)
    settings = json.loads(invocation.files[job / "claude-settings.json"])
    # In the settings file too: it outranks a project's settings that the agent could write.
    assert settings["env"]["CLAUDE_CODE_SHELL_PREFIX"] == str(prefix)
    assert settings["env"]["CLAUDE_CODE_SHELL"] == invocation.env["CLAUDE_CODE_SHELL"]
    script = invocation.programs[prefix]
    assert script.startswith("#!/bin/sh\n")
    assert f"{LAUNCHER} --config {job / 'no-network.json'} --prefix" in script
    config = json.loads(invocation.files[job / "no-network.json"])
    hook = [c for c in settings["hooks"]["PreToolUse"] if "pre-tool-use" in str(c)]
    hook_command = hook[0]["hooks"][0]["command"]
    # Our MCP server, which needs Discord, by its words; our approval hook, likewise, by its
    # exact shell command (wrapped to fail closed when killed).
    assert config["allow"] == [["/venv/bin/python", "-m", "discord_mcp"]]
    assert config["allow_code"] == [hook_command]
    assert "|| {" in hook_command
    assert config["mechanism"] == "unshare"
    denied = invocation.argv[invocation.argv.index("--disallowedTools") + 1 :][:6]
    assert {"WebFetch", "WebSearch", "Monitor", "EnterWorktree", "Workflow"} <= set(denied)


def test_gemini_routes_every_command_through_a_bash_of_ours(tmp_path: Path) -> None:
    invocation = GeminiAdapter().invocation(request(tmp_path, "gemini", approvals="ask"))
    job = tmp_path / "job"
    shim = job / "no-network-bin" / "bash"
    assert invocation.env["PATH"] == f"{shim.parent}{os.pathsep}/usr/bin:/bin"
    assert invocation.env["GEMINI_SANDBOX"] == "false"
    assert f"{LAUNCHER} --config {job / 'no-network.json'} --shim" in invocation.programs[shim]
    argv = list(invocation.argv)
    assert argv[argv.index("--allowed-mcp-server-names") + 1] == "discord"
    config = json.loads(invocation.files[job / "no-network.json"])
    assert config["strip_path"] == str(shim.parent)
    home = tmp_path / "shared" / "gemini-offline" / ".gemini"
    settings = json.loads(invocation.files[home / "settings.json"])
    approval = [
        h["command"]
        for group in settings["hooks"]["BeforeTool"]
        for h in group["hooks"]
        if h.get("name") == "discord-mcp approvals"
    ]
    assert config["allow"] == []
    assert config["allow_code"] == [approval[0]]
    assert "invoke_agent" in settings["tools"]["exclude"]


@pytest.mark.parametrize("adapter", [ClaudeAdapter(), GeminiAdapter()])
def test_without_a_namespace_a_run_without_network_is_not_started(
    adapter: ClaudeAdapter | GeminiAdapter, tmp_path: Path
) -> None:
    with pytest.raises(RunError) as refused:
        adapter.invocation(request(tmp_path, adapter.tool, jail=None))
    assert refused.value.code == "E_NETWORK_NOT_ENFORCEABLE"


# --------------------------------------------------------------------------------------------
# The engine


class NoNamespace(FakeSpawner):
    def network_jail(self) -> Jail:
        raise RunError("E_NETWORK_NOT_ENFORCEABLE", "no user namespaces here (test)")


async def test_a_run_without_network_does_not_start_where_no_namespace_can_be_made(
    make_engine: EngineFactory, notifier: RecordingNotifier, tmp_path: Path
) -> None:
    spawner = NoNamespace(tmp_path / "fake")
    async with make_engine(spawner=spawner) as engine:
        await engine.start_session("t1", "app", "claude", constraints=Constraints(False))
        job = await engine.submit("t1", "m1", "hello", "owner")
        done = await notifier.wait_finished(job.job_id)
        await engine.start_session("t2", "app", "codex", constraints=Constraints(False))
        sandboxed = await engine.submit("t2", "m2", "hello", "owner")
        codex = await notifier.wait_finished(sandboxed.job_id)
    assert done.state == "failed"
    assert done.error_code == "E_NETWORK_NOT_ENFORCEABLE"
    assert "no user namespaces here" in (done.error_message or "")
    assert codex.state == "success"  # Codex keeps its own sandbox: no namespace needed
    assert [spec.tool for spec in spawner.specs] == ["codex"]


async def test_an_acp_agent_is_not_run_without_network(
    make_engine: EngineFactory,
    notifier: RecordingNotifier,
    state_dir: Path,
    registry: ProjectRegistry,
    workdir: Path,
    tmp_path: Path,
) -> None:
    fake = Path(__file__).resolve().parents[1] / "support" / "fake_acp_agent.py"
    sessions = tmp_path / "sessions"
    sessions.mkdir()

    def register() -> None:
        AgentRegistry(state_dir).add("fake", [sys.executable, str(fake)])
        registry.add("acp", workdir, ["fake"], "fake")

    await asyncio.to_thread(register)
    env = {"PATH": "/usr/bin:/bin", "FAKE_ACP_SESSIONS": str(sessions)}
    async with make_engine(env=env) as engine:
        await engine.start_session("t1", "acp", constraints=Constraints(False))
        job = await engine.submit("t1", "m1", "hello", "owner")
        done = await notifier.wait_finished(job.job_id)
    assert done.state == "failed"
    assert done.error_code == "E_NETWORK_NOT_ENFORCEABLE"
    assert "ACP agent" in (done.error_message or "")
    assert list(sessions.iterdir()) == []  # the agent never started a session
