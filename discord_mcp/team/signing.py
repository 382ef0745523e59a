"""Presence records are signed with a key only the holders of the bot token can derive.

Theory. Everything the bot posts looks alike in Discord: a record that discord-watch wrote and
a message that an agent had the bot post (``send_message`` was once able to reach the machines'
thread) carry the same author. A record is a machine's word only if it carries a signature that
needs the token to compute:

    key = HMAC-SHA256(token, LABEL)
    sig = HMAC-SHA256(key, the record's JSON without ``sig``, keys sorted, compact)

The token is the HMAC key of a fixed label, so the signing key is a one-way function of it (as
HKDF's extract step): neither the key nor any number of signatures gives the token back, and the
label keeps this key apart from anything else that might one day be derived from the token.
The key never leaves the process: it is neither logged nor sent, and ``repr`` hides it. Agents
never see the token (discord-watch keeps it out of their environment, and the bot's outbound
redaction removes it from anything sent).

A signed record also says when it was signed (``signed_at``, the writer's clock): a reader
refuses one that Discord stored more than :data:`SIGNED_SKEW_S` away from that time, so a record
copied from the thread's history and posted again later speaks for nobody.

Readers ignore a record without a signature (written by a version older than signing, format 1),
with a wrong one (not written with this bot's token, or changed on the way), or signed too long
before Discord stored it, and log each kind once per machine name.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from typing import Any, Literal

from discord_mcp.config import Secret

LABEL = b"discord-mcp presence record signing key, version 1"
FIELD = "sig"
SIGNED_AT = "signed_at"
SIGNED_SKEW_S = 600.0
"""How far the time a record was signed may lie from the time Discord stored it: more than any
machine's clock should be off (machines that disagree by more already misjudge who is live),
less than the time a copied record needs to matter."""

Verdict = Literal["signed", "unsigned", "bad", "stale"]


def canonical(body: Mapping[str, Any]) -> bytes:
    """The bytes a signature covers: ``body`` without its signature, keys sorted, compact."""
    unsigned = {k: v for k, v in body.items() if k != FIELD}
    return json.dumps(
        unsigned, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False
    ).encode("utf-8")


class RecordKey:
    """The presence records' signing key, derived from the bot token.

    Args:
        token: the bot token (without ``Bot ``).
    """

    __slots__ = ("_key",)

    def __init__(self, token: Secret) -> None:
        self._key = hmac.new(token.reveal().encode("utf-8"), LABEL, hashlib.sha256).digest()

    def __repr__(self) -> str:
        return "RecordKey(<derived from the bot token>)"

    def sign(self, body: Mapping[str, Any], *, now: float) -> dict[str, Any]:
        """``body`` with ``signed_at`` (``now``, whole seconds) and its signature."""
        signed = {k: v for k, v in body.items() if k != FIELD}
        signed[SIGNED_AT] = int(now)
        signed[FIELD] = hmac.new(self._key, canonical(signed), hashlib.sha256).hexdigest()
        return signed

    def verdict(self, body: Mapping[str, Any], *, stored_at: float | None) -> Verdict:
        """Whether ``body`` (a record's JSON) was signed with this key, near ``stored_at``
        (Discord's time of the message; None: unknown, which fails)."""
        given = body.get(FIELD)
        if given is None:
            return "unsigned"
        if not isinstance(given, str):
            return "bad"
        try:
            expected = hmac.new(self._key, canonical(body), hashlib.sha256).hexdigest()
        except (TypeError, ValueError):  # a value JSON cannot write back (NaN), or worse
            return "bad"
        if not hmac.compare_digest(given.encode("utf-8", "replace"), expected.encode()):
            return "bad"
        signed_at = body.get(SIGNED_AT)
        if (
            not isinstance(signed_at, int)
            or isinstance(signed_at, bool)
            or stored_at is None
            or abs(stored_at - signed_at) > SIGNED_SKEW_S
        ):
            return "stale"
        return "signed"
