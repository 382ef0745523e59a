"""Card kinds: what a decision's card says, how it judges what people do, what its outcome is.

Posting, reading, live clicks and final edits are the same for every decision (one store, one
thread reader, one poster); only the card and its judging differ between kinds. Each kind is a
:class:`CardKind` registered here under its name: the ``question`` kind below (``ask_decision``)
and, registered by :mod:`discord_mcp.approvals` when that package is imported, the ``approval``
kind. The decision machinery never imports a higher room: it asks the registry.

A decision whose kind is not registered in this process fails closed: its card cannot be
rendered (:class:`~discord_mcp.errors.StateError`), and nothing anyone does resolves it here
(every judgement is "ignore"); a process that knows the kind does it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Iterable, Set
from typing import Any, Protocol

from discord_mcp.decisions import answers, cards
from discord_mcp.decisions.clicks import ClickHost, answer_question_click
from discord_mcp.decisions.interactive import card_components
from discord_mcp.decisions.model import Decision
from discord_mcp.errors import StateError


class CardKind(Protocol):
    """One kind of card.

    Attributes:
        name: the decision file's ``kind``.
        plain_replies_when_shared: whether a reply that references no card may answer this
            kind while another card is open in the same thread (questions: yes, when the reply
            can belong to no other card; approvals: never, see
            :mod:`discord_mcp.decisions.routing`).
    """

    name: str
    plain_replies_when_shared: bool

    def render_card(self, decision: Decision, owner_ids: Iterable[str], *, buttons: bool) -> str:
        """The card while the decision is pending."""
        ...

    def render_final(self, decision: Decision) -> str:
        """The card once the decision is final."""
        ...

    def components(self, decision: Decision) -> list[dict[str, Any]]:
        """The card's buttons (when a gateway is live)."""
        ...

    def judge_message(
        self, decision: Decision, message: dict[str, Any], owner_ids: Set[str]
    ) -> answers.Verdict:
        """A message in the card's thread, as if this card were the only one open there."""
        ...

    def judge_reaction(
        self, decision: Decision, user_id: str, username: str, emoji: str, owner_ids: Set[str]
    ) -> answers.Verdict:
        """A reaction on the card."""
        ...

    def answer_click(
        self,
        host: ClickHost,
        decision: Decision,
        data: dict[str, Any],
        part: str,
        user_id: str,
        username: str,
    ) -> Awaitable[dict[str, Any]]:
        """The interaction callback for a click on (or modal from) the card."""
        ...


class QuestionKind:
    """``ask_decision``'s card: options as buttons, letters, numbers, reactions or words."""

    name = "question"
    plain_replies_when_shared = True

    def render_card(self, decision: Decision, owner_ids: Iterable[str], *, buttons: bool) -> str:
        return cards.render_card(decision, owner_ids, buttons=buttons)

    def render_final(self, decision: Decision) -> str:
        return cards.render_final(decision)

    def components(self, decision: Decision) -> list[dict[str, Any]]:
        return card_components(decision.id, decision.options, decision.language, decision.machine)

    def judge_message(
        self, decision: Decision, message: dict[str, Any], owner_ids: Set[str]
    ) -> answers.Verdict:
        return answers.judge_message(decision, message, owner_ids, None)

    def judge_reaction(
        self, decision: Decision, user_id: str, username: str, emoji: str, owner_ids: Set[str]
    ) -> answers.Verdict:
        return answers.judge_reaction(decision, user_id, username, emoji, owner_ids)

    def answer_click(
        self,
        host: ClickHost,
        decision: Decision,
        data: dict[str, Any],
        part: str,
        user_id: str,
        username: str,
    ) -> Awaitable[dict[str, Any]]:
        return answer_question_click(host, decision, data, part, user_id, username)


_KINDS: dict[str, CardKind] = {}


def register(kind: CardKind) -> None:
    """Make ``kind`` known to this process (idempotent for the same kind)."""
    known = _KINDS.get(kind.name)
    if known is not None and type(known) is not type(kind):
        raise ValueError(f"card kind {kind.name!r} is registered twice")
    _KINDS[kind.name] = kind


def known(name: str) -> bool:
    return name in _KINDS


def of(decision: Decision) -> CardKind:
    """The kind of ``decision``.

    Raises:
        StateError: the kind is not registered in this process (the card cannot be shown).
    """
    kind = _KINDS.get(decision.kind)
    if kind is None:
        raise StateError(
            f"decision {decision.id} is of kind {decision.kind!r}, which this process does not "
            "know; it is left to a process that does"
        )
    return kind


register(QuestionKind())


# ---- what the rest of the decision machinery calls --------------------------------------------


def render_card(decision: Decision, owner_ids: Iterable[str], *, buttons: bool) -> str:
    return of(decision).render_card(decision, owner_ids, buttons=buttons)


def render_final(decision: Decision) -> str:
    return of(decision).render_final(decision)


def components(decision: Decision) -> list[dict[str, Any]]:
    return of(decision).components(decision)


def judge_message(
    decision: Decision, message: dict[str, Any], owner_ids: Set[str]
) -> answers.Verdict:
    """A message in the thread, judged by the card alone (an unknown kind ignores it)."""
    kind = _KINDS.get(decision.kind)
    return answers.IGNORE if kind is None else kind.judge_message(decision, message, owner_ids)


def judged_alone_when_shared(decision: Decision) -> bool:
    """Whether a plain reply may answer ``decision`` while another card is open in its thread."""
    kind = _KINDS.get(decision.kind)
    return kind is not None and kind.plain_replies_when_shared


def judge_reaction(
    decision: Decision, user_id: str, username: str, emoji: str, owner_ids: Set[str]
) -> answers.Verdict:
    kind = _KINDS.get(decision.kind)
    if kind is None:
        return answers.IGNORE
    return kind.judge_reaction(decision, user_id, username, emoji, owner_ids)
