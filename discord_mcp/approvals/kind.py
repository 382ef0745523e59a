"""The approval card kind, registered with the decision machinery when this package loads.

Decisions know card kinds only through :mod:`discord_mcp.decisions.kinds`; this module is how an
approval's card, its buttons and its judging get there. An approval is answered only by its own
buttons, a reaction on its card, or a reply that references its card, or (when it is the only
open card in its thread) a plain reply with an explicit allow or deny word
(``plain_replies_when_shared`` is False: see :mod:`discord_mcp.decisions.routing`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Iterable, Set
from typing import TYPE_CHECKING, Any

from discord_mcp.approvals import acp_parts as acp
from discord_mcp.approvals import cards, judging
from discord_mcp.approvals.live import answer_approval_click
from discord_mcp.decisions.answers import Verdict
from discord_mcp.decisions.model import Decision

if TYPE_CHECKING:
    from discord_mcp.decisions.clicks import ClickHost


class ApprovalKind:
    name = "approval"
    plain_replies_when_shared = False

    def render_card(self, decision: Decision, owner_ids: Iterable[str], *, buttons: bool) -> str:
        return cards.render_card(decision, owner_ids, buttons=buttons)

    def render_final(self, decision: Decision) -> str:
        return cards.render_final(decision)

    def components(self, decision: Decision) -> list[dict[str, Any]]:
        if not (decision.approval or {}).get("acp"):
            return cards.components(decision.id, decision.language, machine=decision.machine)
        extra = [
            (o["part"], o.get("name") or o["part"])
            for o in acp.stored_options(decision)
            if acp.OPTION_PART.match(o["part"])
        ]
        return cards.components(
            decision.id,
            decision.language,
            shown=acp.parts(decision),
            extra=extra,
            machine=decision.machine,
        )

    def judge_message(
        self, decision: Decision, message: dict[str, Any], owner_ids: Set[str]
    ) -> Verdict:
        return judging.judge_message(decision, message, owner_ids)

    def judge_reaction(
        self, decision: Decision, user_id: str, username: str, emoji: str, owner_ids: Set[str]
    ) -> Verdict:
        return judging.judge_reaction(decision, user_id, username, emoji, owner_ids)

    def answer_click(
        self,
        host: ClickHost,
        decision: Decision,
        data: dict[str, Any],
        part: str,
        user_id: str,
        username: str,
    ) -> Awaitable[dict[str, Any]]:
        return answer_approval_click(host, decision, data, part, user_id, username)


APPROVAL = ApprovalKind()
