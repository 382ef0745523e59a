"""Card kinds: decisions know them only through the registry, and an unknown kind fails closed."""

from __future__ import annotations

import subprocess
import sys

import pytest

from discord_mcp.decisions import kinds
from discord_mcp.errors import StateError
from tests.decisions.test_judging import OWNER, OWNERS, make_decision, message


def test_the_decision_machinery_never_imports_approvals() -> None:
    code = (
        "import sys\n"
        "import discord_mcp.decisions.service, discord_mcp.decisions.live\n"
        "import discord_mcp.decisions.reading, discord_mcp.decisions.routing\n"
        "print(sorted(m for m in sys.modules if m.startswith('discord_mcp.approvals')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        encoding="utf-8",
        text=True,
        check=True,
        timeout=60,
    )
    assert done.stdout.strip() == "[]"


def test_approvals_register_their_kind_when_their_package_loads() -> None:
    import discord_mcp.approvals  # noqa: F401

    assert kinds.known("question")
    assert kinds.known("approval")


def test_a_decision_of_an_unknown_kind_is_never_resolved_and_its_card_not_drawn() -> None:
    odd = make_decision(options=("Yes", "No")).replace(kind="mystery")
    assert kinds.judge_message(odd, message("yes"), OWNERS).kind == "ignore"
    assert kinds.judge_reaction(odd, OWNER, "o", "✅", OWNERS).kind == "ignore"
    assert not kinds.judged_alone_when_shared(odd)
    with pytest.raises(StateError, match="mystery"):
        kinds.render_card(odd, OWNERS, buttons=True)
