"""Acting as Discord's people through the emulator's control API (what a human would do)."""

from __future__ import annotations

import base64
from typing import Any

import httpx

from discord_mcp.emulator import RunningEmulator
from discord_mcp.team.presence import THREAD_NAME as PRESENCE_THREAD


class People:
    """Post, react and look around in the emulator as a given user (sync, for tests)."""

    def __init__(self, emulator: RunningEmulator) -> None:
        self._emulator = emulator
        self._http = httpx.Client(
            base_url=emulator.base_url + "/_emulator",
            timeout=10,
            headers=control_headers(emulator),
        )

    @property
    def emulator(self) -> RunningEmulator:
        """The emulator these people act in."""
        return self._emulator

    def close(self) -> None:
        self._http.close()

    def new_user(self, username: str) -> str:
        response = self._http.post("/users", json={"username": username})
        response.raise_for_status()
        return str(response.json()["id"])

    def say(
        self,
        channel_id: str,
        content: str,
        *,
        author: str | None = None,
        reply_to: str | None = None,
    ) -> dict[str, Any]:
        """Post ``content`` in ``channel_id`` (a thread id works) as ``author`` (default: owner),
        as a Discord reply to the message ``reply_to`` when given."""
        body: dict[str, Any] = {
            "author_id": author or self._emulator.owner_user_id,
            "content": content,
        }
        if reply_to is not None:
            body["message_reference"] = {"message_id": reply_to}
        response = self._http.post(f"/channels/{channel_id}/messages", json=body)
        response.raise_for_status()
        return dict(response.json())

    def forward(
        self, channel_id: str, message_id: str, *, author: str | None = None
    ) -> dict[str, Any]:
        """Forward message ``message_id`` (from any channel) into ``channel_id``, as a person
        would with Discord's Forward: no text of its own, the original in its snapshot."""
        response = self._http.post(
            f"/channels/{channel_id}/messages",
            json={
                "author_id": author or self._emulator.owner_user_id,
                "message_reference": {"message_id": message_id, "type": 1},
            },
        )
        response.raise_for_status()
        return dict(response.json())

    def send_files(
        self,
        channel_id: str,
        files: list[tuple[str, bytes, str]],
        *,
        content: str = "",
        author: str | None = None,
        voice_message: bool = False,
    ) -> dict[str, Any]:
        """Post files (name, bytes, content type) with optional ``content``, as a person would
        from the phone; ``voice_message`` sends the one audio file as a voice message."""
        attachments: list[dict[str, Any]] = [
            {
                "filename": name,
                "data_base64": base64.b64encode(data).decode(),
                "content_type": content_type,
            }
            for name, data, content_type in files
        ]
        body: dict[str, Any] = {
            "author_id": author or self._emulator.owner_user_id,
            "attachments": attachments,
        }
        if content:
            body["content"] = content
        if voice_message:
            body["voice_message"] = True
            attachments[0]["duration_secs"] = 2.5
        response = self._http.post(f"/channels/{channel_id}/messages", json=body)
        response.raise_for_status()
        return dict(response.json())

    def react(
        self, channel_id: str, message_id: str, emoji: str, *, user: str | None = None
    ) -> None:
        response = self._http.post(
            "/reactions",
            json={
                "user_id": user or self._emulator.owner_user_id,
                "channel_id": channel_id,
                "message_id": message_id,
                "emoji": emoji,
            },
        )
        response.raise_for_status()

    def new_channel(self, kind: int, name: str) -> str:
        """A new channel of the guild: 0 text, 5 announcement, 15 forum, 16 media."""
        response = self._http.post("/channels", json={"type": kind, "name": name})
        response.raise_for_status()
        return str(response.json()["id"])

    def text_channel(self, name: str, topic: str | None = None) -> str:
        """A new text channel of the guild (``POST /_emulator/channels {"name", "topic"?}``)."""
        body = {"name": name} | ({"topic": topic} if topic is not None else {})
        response = self._http.post("/channels", json=body)
        response.raise_for_status()
        return str(response.json()["id"])

    def messages(self, channel_id: str) -> list[dict[str, Any]]:
        """Every message of a channel or thread, oldest first."""
        response = self._http.get(f"/channels/{channel_id}/messages")
        response.raise_for_status()
        return list(response.json())

    def state(self) -> dict[str, Any]:
        response = self._http.get("/state")
        response.raise_for_status()
        return dict(response.json())

    def fault(self, **fault: Any) -> dict[str, Any]:
        response = self._http.post("/faults", json=fault)
        response.raise_for_status()
        return dict(response.json())

    def advance(self, seconds: float) -> dict[str, Any]:
        """Time passes in Discord (``POST /_emulator/time``): messages and threads age."""
        response = self._http.post("/time", json={"advance": seconds})
        response.raise_for_status()
        return dict(response.json())

    def threads(self) -> list[dict[str, Any]]:
        """The threads people opened or the bot opened for them: not the machines' presence
        thread (``discord-mcp machines``), which every discord-watch keeps (issue 27)."""
        return [
            c
            for c in self.state()["channels"]
            if c.get("type") in (11, 12) and c.get("name") != PRESENCE_THREAD
        ]

    def click(
        self,
        message_id: str,
        custom_id: str,
        *,
        user: str | None = None,
        values: list[str] | None = None,
    ) -> dict[str, Any]:
        """Click a component (a select when ``values`` is given); returns the emulator's report
        once the bot answered or Discord's 3-second deadline passed."""
        body: dict[str, Any] = {
            "user_id": user or self._emulator.owner_user_id,
            "message_id": message_id,
            "custom_id": custom_id,
        }
        if values is not None:
            body["values"] = values
        response = self._http.post("/interactions", json=body)
        response.raise_for_status()
        return dict(response.json())

    def submit_modal(
        self, message_id: str, custom_id: str, values: dict[str, str], *, user: str | None = None
    ) -> dict[str, Any]:
        """Submit the modal the bot opened on ``message_id``."""
        response = self._http.post(
            "/interactions",
            json={
                "user_id": user or self._emulator.owner_user_id,
                "message_id": message_id,
                "modal": {"custom_id": custom_id, "values": values},
            },
        )
        response.raise_for_status()
        return dict(response.json())


def control_headers(emulator: RunningEmulator) -> dict[str, str]:
    """What a control request carries: the emulator's control token, when it has one."""
    token = emulator.control_token
    return {"Authorization": f"Bearer {token}"} if token else {}
