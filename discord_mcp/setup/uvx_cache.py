"""Whether the ``uvx`` form of discord-mcp starts from uv's cache alone.

``uvx --from <source> discord-mcp`` asks the package index at every start to resolve its
dependencies again. Where the index cannot be reached from the client's process (Gemini CLI
drops variables such as ``SSL_CERT_FILE`` from what it gives a server, so a TLS proxy refuses
it; a laptop offline), the server then fails to start, every time. Once the release and its
dependencies are in the cache, ``uvx --offline`` starts it from there without asking; so
``install`` writes ``--offline`` when it has seen that form start (after one start online, to
fill the cache, if needed), and the form without it, with what to do, when it has not.
"""

from __future__ import annotations

import functools
import subprocess
from collections.abc import Callable, Sequence

NAME = "discord-mcp"
CHECK_TIMEOUT_S = 180.0
"""A first start online may download the dependencies: a few minutes at most."""

Runner = Callable[[Sequence[str]], bool]


def uvx_form(uvx: str, source: str, *, offline: bool) -> list[str]:
    """The argv that starts discord-mcp with ``uvx`` (before discord-mcp's own arguments)."""
    return [uvx, *(["--offline"] if offline else []), "--from", source, NAME]


def starts(argv: Sequence[str]) -> bool:
    """Whether ``argv --version`` runs and exits 0 (its output goes nowhere: never stdout)."""
    try:
        done = subprocess.run(
            [*argv, "--version"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=CHECK_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


@functools.cache
def _offline_ready(uvx: str, source: str) -> bool:
    return offline_ready(uvx, source, starts)


def offline_ready(uvx: str, source: str, run: Runner | None = None) -> bool:
    """Whether ``uvx --offline`` starts this release from the cache; when it does not at first,
    it is started once online (which fills the cache) and tried offline again. ``run``: how a
    form is tried (default: started, once per process and source)."""
    if run is None:
        return _offline_ready(uvx, source)
    if run(uvx_form(uvx, source, offline=True)):
        return True
    return run(uvx_form(uvx, source, offline=False)) and run(uvx_form(uvx, source, offline=True))


def is_uvx_form(argv: Sequence[str]) -> bool:
    """Whether ``argv`` starts discord-mcp through uvx (``uvx [--offline] --from S ...``)."""
    return bool(argv) and str(argv[0]).rsplit("/", 1)[-1] == "uvx" and NAME in argv


def offline_advice(argv: Sequence[str]) -> str | None:
    """What to tell the user about an uvx form: None when it starts from the cache."""
    if not is_uvx_form(argv) or "--offline" in argv:
        return None
    source = argv[list(argv).index("--from") + 1] if "--from" in argv else NAME
    return (
        "uvx could not start discord-mcp from its cache (uv's cache cleaned, or the package "
        "index unreachable from here), so the entry asks the package index at every start: "
        "where your client cannot reach it (a TLS proxy, no network) the server will not "
        f"start. Run `uvx --from {source} discord-mcp --version` once where the index is "
        "reachable, then run this install again: it then writes `uvx --offline`."
    )
