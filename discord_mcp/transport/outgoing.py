"""Every string a request carries passes one filter on its way out.

Theory. A request's strings come from everywhere: an agent's message, a file's name, a card
built from a question, a thread named after it, a button's label. Checking each where it is
built misses the next one added. So :meth:`~discord_mcp.transport.rest.RestClient.request`
passes each string of the JSON body (at any depth) and each file name through an
:data:`OutboundFilter` with where it sits (``content``, ``embeds[0].fields[1].value``,
``files[0].filename``). The outbound layer injects its redaction there; the transport never
imports the domain. Without one, :func:`without_token` still replaces the client's own token.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

OutboundFilter = Callable[[str, str], str]
"""``(where, text) -> the text to send``."""
REDACTED_TOKEN = "[redacted: bot token]"  # noqa: S105 (the mark, not a token)


def without_token(token: str) -> OutboundFilter:
    """The filter of last resort: the token itself replaced wherever it appears."""

    def replace(where: str, text: str) -> str:
        return text.replace(token, REDACTED_TOKEN)

    return replace


def filtered(value: Any, outbound: OutboundFilter, where: str = "") -> Any:
    """``value`` (a JSON body) with every string passed through ``outbound``."""
    if isinstance(value, str):
        return outbound(where, value)
    if isinstance(value, Mapping):
        return {
            key: filtered(item, outbound, f"{where}.{key}" if where else str(key))
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [filtered(item, outbound, f"{where}[{n}]") for n, item in enumerate(value)]
    return value
