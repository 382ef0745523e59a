"""``doctor``'s look at Discord's edge from this machine: invalid requests and Cloudflare's ban.

Read from the rate-limit ledger every process of the state directory shares
(:mod:`discord_mcp.transport.ban`): how many invalid requests (401, 403, unshared 429) went out
in the current 10 minutes, a warning from a quarter of Discord's limit, and a failure while a
ban is known (then ``doctor`` sends nothing to Discord either: a request during the ban makes it
longer).
"""

from __future__ import annotations

from discord_mcp.config import Settings
from discord_mcp.setup.checks import Check
from discord_mcp.transport.ban import WARN_AT
from discord_mcp.transport.ledger import status_of
from discord_mcp.transport.shared_ledger import FileLedger


async def edge_check(settings: Settings) -> Check:
    """Invalid requests sent lately, and Cloudflare's ban (from the shared rate-limit ledger)."""
    name = "invalid requests"
    status = await FileLedger.for_token(settings.home, settings.token).apply(status_of)
    if status.banned_for > 0:
        return Check(
            "FAIL",
            name,
            "Discord's edge (Cloudflare) banned this machine's IP after too many invalid "
            f"requests; about {max(1, round(status.banned_for / 60))} minutes to go, and nothing "
            "is sent meanwhile",
            "Wait it out without sending anything (a request during the ban makes it longer); "
            "stop other bots using this IP. Meanwhile look for a wrong token (401), a missing "
            "permission (403) or a retry loop (429) in the logs",
        )
    detail = f"{status.invalid} of the {status.limit:,} allowed in 10 minutes (401, 403, 429)"
    if status.probe_due:
        detail += "; a ban was met earlier: the next request checks that it is over"
    if status.invalid * 100 >= WARN_AT[0] * status.limit:
        return Check(
            "WARN",
            name,
            detail,
            "Find what keeps failing in the logs (a wrong token, a missing permission, a retry "
            "loop): at the limit Discord bans this IP for an hour",
        )
    return Check("OK", name, detail)
