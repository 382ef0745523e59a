"""``doctor``'s checks of the application's settings in Discord's developer portal that are not
intents: where Discord sends interactions.

An application with an *Interactions Endpoint URL* gets its interactions (button clicks,
selects, modals, slash commands) as HTTP requests to that URL, and no longer over the gateway
(Discord's interactions/receiving-and-responding). discord-mcp reads them from the gateway
only: with a URL set, every click and command would be lost, and Discord would show the owner
"This interaction failed".
"""

from __future__ import annotations

from discord_mcp.errors import DiscordError, Forbidden, NotFound
from discord_mcp.setup.checks import Check
from discord_mcp.transport.rest import RestClient

NAME = "interactions endpoint"
FIX = (
    "Developer Portal (https://discord.com/developers/applications) > your application > "
    "General Information > Interactions Endpoint URL: clear it and Save (discord-mcp reads "
    "interactions from the gateway)"
)


async def endpoint_check(rest: RestClient) -> Check:
    """WARN when the application sends its interactions to a URL instead of the gateway."""
    try:
        application = await rest.get_current_application()
    except (NotFound, Forbidden):
        return Check("OK", NAME, "not readable here; interactions are expected on the gateway")
    except DiscordError as exc:
        return Check("WARN", NAME, f"could not read the application ({exc})")
    url = application.get("interactions_endpoint_url")
    if isinstance(url, str) and url.strip():
        return Check(
            "WARN",
            NAME,
            f"set to {url.strip()[:200]}: Discord sends every click and slash command there "
            "over HTTP, not over the gateway, so discord-mcp never sees them",
            FIX,
        )
    return Check("OK", NAME, "none: interactions come over the gateway")
