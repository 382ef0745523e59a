"""A question as an agent asks it, checked before anything reaches Discord."""

from __future__ import annotations

from dataclasses import dataclass

from discord_mcp.decisions import cards
from discord_mcp.decisions.model import Decision
from discord_mcp.errors import DecisionError


@dataclass(frozen=True, slots=True)
class Question:
    """What an agent asks (validated by :meth:`DecisionService.ask`)."""

    question: str
    context: str | None = None
    options: tuple[str, ...] = ()
    thread_id: str | None = None
    timeout_seconds: float | None = None
    on_timeout: str | None = None
    mention: bool = False
    session: str = "agent"
    urgent: bool = False
    project: str | None = None
    """The project shown on the card (default: the settings'); a label only, never who owns it."""


def validated(q: Question) -> Question:
    question = q.question.strip()
    if not question:
        raise DecisionError("question is empty: say what you need the owner to decide")
    if len(question) > 1500:
        raise DecisionError("question is longer than 1500 characters: put details in context")
    options = tuple(" ".join(o.split()) for o in q.options)
    if len(options) > cards.MAX_OPTIONS:
        raise DecisionError(
            f"{len(options)} options given; at most {cards.MAX_OPTIONS} fit. Group them, or ask "
            "without options for a free-text answer"
        )
    if any(not o for o in options):
        raise DecisionError("an option is empty; give every option a short label")
    if any(len(o) > cards.MAX_OPTION_LENGTH for o in options):
        raise DecisionError(
            f"an option is longer than {cards.MAX_OPTION_LENGTH} characters; keep options short "
            "and put explanations in context"
        )
    if len({o.casefold() for o in options}) != len(options):
        raise DecisionError("two options are the same; make every option distinct")
    if q.timeout_seconds is not None and not (0 < q.timeout_seconds <= 30 * 86400):
        raise DecisionError("timeout_seconds must be positive and at most 30 days, or null")
    context = q.context.strip() if q.context else None
    return Question(
        question=question,
        context=context or None,
        options=options,
        thread_id=q.thread_id.strip() if q.thread_id else None,
        timeout_seconds=q.timeout_seconds,
        on_timeout=q.on_timeout.strip() if q.on_timeout else None,
        mention=q.mention,
        session=q.session,
        urgent=q.urgent,
        project=q.project,
    )


def same_question(decision: Decision, q: Question) -> bool:
    return " ".join(decision.question.split()).casefold() == " ".join(
        q.question.split()
    ).casefold() and tuple(o.casefold() for o in decision.options) == tuple(
        o.casefold() for o in q.options
    )
