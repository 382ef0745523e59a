"""What a test needs from the machine (an agent CLI, Node.js, tmux, systemd-analyze), and what
happens when it is missing.

In CI (``CI`` set to anything but ``""``, ``0``, ``false`` or ``no``) and under ``scripts/test``
(which exports ``DISCORD_MCP_REQUIRE_ALL=1``) a missing requirement FAILS the test with a
sentence naming what is missing: a suite that skipped its real-CLI tests would still exit 0 and
claim more than it proved. A developer running pytest by hand gets a skip instead, whose reason
pytest prints in its summary (``-ra``).
"""

from __future__ import annotations

import os
import shutil
from typing import NoReturn

import pytest

STRICT_VARIABLE = "DISCORD_MCP_REQUIRE_ALL"
"""Set to ``1`` (``scripts/test`` does) to fail, not skip, when something is missing."""


def strict() -> bool:
    """True in CI and under ``scripts/test``: a missing requirement fails the run."""
    ci = os.environ.get("CI", "").strip().lower()
    return ci not in ("", "0", "false", "no") or os.environ.get(STRICT_VARIABLE) == "1"


def missing(sentence: str) -> NoReturn:
    """Fail (in CI or under scripts/test) or skip (by hand) because of ``sentence``."""
    if strict():
        pytest.fail(
            f"{sentence}. CI and scripts/test need everything (skips are allowed only when "
            f"pytest runs by hand without CI or {STRICT_VARIABLE}=1).",
            pytrace=False,
        )
    pytest.skip(sentence)


def require_program(name: str, why: str) -> str:
    """The path of program ``name`` on PATH; see :func:`missing` when there is none."""
    path = shutil.which(name)
    if path is None:
        missing(f"{name} is not on PATH ({why}; scripts/test installs it)")
    return path
