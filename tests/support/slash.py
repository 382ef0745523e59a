"""Using slash commands as a person would, through the emulator's control API (async: the bot
answering may run on the caller's own event loop)."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from discord_mcp.emulator import RunningEmulator
from tests.support.people import control_headers


class Slash:
    """Run ``/command`` as a user of the emulator and read what the bot answered."""

    def __init__(self, emulator: RunningEmulator) -> None:
        self.emulator = emulator

    def _client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            base_url=self.emulator.base_url + "/_emulator",
            timeout=20,
            headers=control_headers(self.emulator),
        )

    def body(
        self,
        path: str,
        /,
        *,
        user: str | None = None,
        channel: str | None = None,
        focused: str | None = None,
        **options: Any,
    ) -> dict[str, Any]:
        head, _, sub = path.partition(" ")
        given = [{"name": k, "value": v} for k, v in options.items() if v is not None]
        body: dict[str, Any] = {
            "user_id": user or self.emulator.owner_user_id,
            "channel_id": channel or self.emulator.channel_id,
            "command": head,
            "options": [{"name": sub, "options": given}] if sub else given,
        }
        if focused:
            body["focused"] = focused
        return body

    async def post(self, body: dict[str, Any]) -> httpx.Response:
        async with self._client() as client:
            return await client.post("/interactions", json=body)

    async def run(self, path: str, /, **kwargs: Any) -> dict[str, Any]:
        """The interaction's report once the bot gave its first answer (or the deadline passed)."""
        response = await self.post(self.body(path, **kwargs))
        assert response.status_code == 200, response.text
        return dict(response.json())

    async def text(self, path: str, /, **kwargs: Any) -> str:
        """The bot's answer to ``/path``: the reply, or the deferred reply once it is there."""
        return await self.answer(await self.run(path, **kwargs))

    async def answer(self, report: dict[str, Any], within: float = 20.0) -> str:
        assert report["acknowledged"], report
        assert not report["expired"], report
        async with asyncio.timeout(within), self._client() as client:
            while True:
                message = report.get("message") or {}
                if message.get("content"):
                    return str(message["content"])
                await asyncio.sleep(0.05)
                current = await client.get(f"/interactions/{report['interaction_id']}")
                report = dict(current.json())

    async def choices(self, path: str, focused: str, /, **kwargs: Any) -> list[dict[str, Any]]:
        report = await self.run(path, focused=focused, **kwargs)
        return list(report["choices"] or [])

    async def commands(self) -> list[dict[str, Any]]:
        async with self._client() as client:
            return list((await client.get("/commands")).json())

    async def ready(self, commands: int, within: float = 60.0) -> None:
        """Wait until a bot session is connected (it will hear the interactions) and
        ``commands`` commands are registered."""
        async with asyncio.timeout(within), self._client() as client:
            while True:
                state = (await client.get("/state")).json()
                connected = any(s.get("connected") for s in state.get("gateway_sessions") or [])
                if connected and len((await client.get("/commands")).json()) >= commands:
                    return
                await asyncio.sleep(0.05)

    async def make_admin_everyone(self) -> None:
        """Give @everyone ADMINISTRATOR: then every member may use the hidden commands."""
        async with self._client() as client:
            response = await client.post(
                f"/roles/{self.emulator.guild_id}", json={"allow": ["ADMINISTRATOR"]}
            )
            response.raise_for_status()
