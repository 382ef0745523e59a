"""A ``discord-mcp`` or ``discord-watch`` process's garbage collector: quiet while the process
loads, and no last walk of its heap at exit.

Every MCP server, hook and command a client or the daemon starts imports the MCP SDK, FastMCP
and pydantic: about a million objects. CPython's cyclic collector pays for them twice, and
neither pays for anything: while they load, a collection every 700 new objects (~280 of them,
0.13 s of a server's 0.9 s of import CPU); and at exit, one more collection over everything
still alive (~0.3 s of CPU in a server, for memory the operating system takes back anyway).

:func:`starting` (the command line's entry, once per process) collects young objects every
100,000 allocations instead of 700 while modules load, and registers :func:`gc.freeze` to run
at exit, so the last collection finds almost nothing to walk. :func:`settled` (a long-lived
process once it has loaded what it serves with: the stdio and HTTP servers, the daemon, the
emulator, the demo) moves what it loaded out of the collector's reach and restores the usual
thresholds, so its later collections walk only what it makes while it runs. A short command
never settles: it collects with the larger threshold until it ends, which bounds what cyclic
garbage it can hold to that many objects.

Nothing is lost at exit: the standard streams are flushed, ``atexit`` functions (logging's
flush and close among them) run, objects no cycle holds are freed as before; only garbage
caught in a reference cycle at the very end is left to the operating system, as after
``os._exit``. No write of this package waits for a collector: the log writes each line with
``os.write`` as it comes (:mod:`discord_mcp.app_log`), state files are written and closed in
one step (:mod:`discord_mcp.state.files`).

Only a process's own entry changes its collector: an entry point called in-process with its
arguments (a test) leaves it as it was, and :func:`settled` does nothing where
:func:`starting` did not run.
"""

from __future__ import annotations

import atexit
import gc

LOADING_THRESHOLD = 100_000
"""Allocations between two collections of the youngest generation while a process loads."""

_usual: tuple[int, int, int] | None = None
"""The thresholds :func:`starting` found (None: it has not run in this process)."""
_settled = False


def starting() -> None:
    """At a process's entry: fewer collections while it loads, none of its heap at exit."""
    global _usual
    if _usual is not None:
        return
    _usual = gc.get_threshold()
    gc.set_threshold(max(_usual[0], LOADING_THRESHOLD), _usual[1], _usual[2])
    atexit.register(gc.freeze)


def settled() -> None:
    """A long-lived process has loaded what it serves with: freeze it, collect as usual."""
    global _settled
    if _usual is None or _settled:
        return
    _settled = True
    gc.freeze()
    gc.set_threshold(*_usual)
