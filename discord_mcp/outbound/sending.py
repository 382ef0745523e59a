"""The redaction at the REST choke point: every string the bot sends, whoever built it.

The tools scrub what an agent gives them (:mod:`.guard`), but a request also carries strings
built elsewhere: file names, embed fields, thread names, progress cards, button labels, modal
titles. :class:`SendRedaction` is injected into the ``RestClient`` (``outbound=``), which passes
it every string of every request with where it sits; whatever it replaces is reported to the
tool call that is sending (:func:`reporting_to`, a context variable, so a call made from the
tool's task reports into its result) or, sent from elsewhere, logged (never the secret).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from contextvars import ContextVar

from discord_mcp.outbound.redaction import redact, summary

log = logging.getLogger(__name__)

Report = Callable[[list[str]], None]
_current: ContextVar[Report | None] = ContextVar("discord_mcp_send_report", default=None)


def reporting_to(report: Report) -> None:
    """Report what the choke point redacts from now on, in this task (and the tasks it
    starts), to ``report`` (a tool call's list of redactions)."""
    _current.set(report)


class SendRedaction:
    """``(where, text) -> text`` for ``RestClient(outbound=...)``.

    Args:
        known: literal secrets (the bot token), redacted in all their forms.
        report: where findings go when no tool call is listening (default: the log).
    """

    def __init__(self, known: Iterable[str], *, report: Report | None = None) -> None:
        self._known = tuple(known)
        self._report = report

    def __call__(self, where: str, text: str) -> str:
        clean = redact(text, self._known)
        if clean.changed:
            found = summary([(where, clean)])
            report = _current.get() or self._report
            if report is not None:
                report(found)
            else:
                log.warning("redacted before sending: %s", "; ".join(found))
        return clean.text
