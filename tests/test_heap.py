"""discord_mcp.heap: a process started by its command line collects little while it loads and
does not walk its heap at exit; a long-lived one settles back to the usual collector; nothing
changes for a caller that runs an entry point in-process."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

import pytest

from discord_mcp import heap
from discord_mcp.cli import main as mcp_main
from discord_mcp.emulator import RunningEmulator
from discord_mcp.watch.cli import main as watch_main
from tests.support.settings import env_for

ROOT = Path(__file__).resolve().parents[1]

# Registered before the entry runs, so it runs after everything the entry registers (atexit
# runs last-registered first): what the collector looks like when the interpreter's last
# collection is about to run.
PROBE = """
import atexit, gc, sys
atexit.register(lambda: sys.stderr.write(
    f"PROBE frozen={{gc.get_freeze_count()}} gen0={{gc.get_threshold()[0]}}\\n"))
sys.argv = {argv!r}
from {module} import main
raise SystemExit(main())
"""


def _probe(module: str, argv: list[str], env: dict[str, str] | None = None) -> tuple[int, int]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(module=module, argv=argv)],
        cwd=ROOT,
        input=b"",
        capture_output=True,
        env=env,
        timeout=60,
    )
    lines = [line for line in done.stderr.decode().splitlines() if line.startswith("PROBE ")]
    assert lines, done.stderr.decode()[-2000:]
    fields = dict(part.split("=") for part in lines[-1].split()[1:])
    return int(fields["frozen"]), int(fields["gen0"])


@pytest.mark.parametrize(
    ("module", "argv"),
    [
        ("discord_mcp.cli", ["discord-mcp", "--version"]),
        ("discord_mcp.watch.cli", ["discord-watch", "--version"]),
    ],
)
def test_a_command_line_process_freezes_its_heap_before_the_last_collection(
    module: str, argv: list[str]
) -> None:
    frozen, gen0 = _probe(module, argv)
    assert frozen > 10_000  # the modules it imported, out of the last collection's walk
    assert gen0 == heap.LOADING_THRESHOLD  # a short command never settles


def test_the_stdio_server_settles_to_the_usual_collector_once_it_has_loaded(
    emulator: RunningEmulator, tmp_path: Path
) -> None:
    # stdin closed at once: the server builds itself (and settles), then ends.
    frozen, gen0 = _probe(
        "discord_mcp.cli", ["discord-mcp"], env=env_for(emulator, tmp_path / "home")
    )
    assert frozen > 100_000  # FastMCP, the MCP SDK and pydantic, frozen when it settled
    assert gen0 == 700  # CPython's usual threshold, restored


def test_an_entry_point_called_with_its_arguments_leaves_the_callers_collector_alone(
    capsys: pytest.CaptureFixture[str],
) -> None:
    before = (gc.get_threshold(), gc.get_freeze_count())
    for entry in (mcp_main, watch_main):
        with pytest.raises(SystemExit):
            entry(["--version"])
    heap.settled()  # nothing to settle where no entry started this process
    assert (gc.get_threshold(), gc.get_freeze_count()) == before
    assert "discord" in capsys.readouterr().out


def test_settling_twice_freezes_once_and_restores_what_starting_found() -> None:
    code = """
import gc
from discord_mcp import heap
gc.set_threshold(500, 7, 9)
heap.starting(); heap.starting()
assert gc.get_threshold() == (heap.LOADING_THRESHOLD, 7, 9), gc.get_threshold()
heap.settled()
first = gc.get_freeze_count()
assert first > 0 and gc.get_threshold() == (500, 7, 9), gc.get_threshold()
junk = [[] for _ in range(1000)]
heap.settled()
assert gc.get_freeze_count() == first, (gc.get_freeze_count(), first)
print("ok")
"""
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, encoding="utf-8", timeout=60
    )
    assert done.stdout.strip() == "ok", done.stderr
