"""Every message the emulator's world sees, created, edited or deleted, as it happens.

Reads ``GET /_emulator/feed`` (Server-Sent Events) in a thread, so a test can tell what was
shown for a while and later removed (an agent's streamed answer, replaced by its final one).
"""

from __future__ import annotations

import json
import threading
from typing import Any

import httpx

from discord_mcp.emulator import RunningEmulator
from tests.support.people import control_headers


class FeedRecorder:
    """Records ``message`` and ``message_delete`` frames until :meth:`close`."""

    def __init__(self, emulator: RunningEmulator) -> None:
        self._emulator = emulator
        self.versions: list[dict[str, Any]] = []  # every message frame, in order
        self.deleted: list[str] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True)

    def __enter__(self) -> FeedRecorder:
        self._thread.start()
        if not self._ready.wait(10):
            raise TimeoutError("the emulator's feed did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(0.5)  # a daemon thread: the feed ends with the emulator

    def contents(self, channel_id: str) -> list[str]:
        """Every content a message in ``channel_id`` had, in the order shown."""
        with self._lock:
            return [v.get("content", "") for v in self.versions if v["channel_id"] == channel_id]

    def was_deleted(self, message_id: str) -> bool:
        with self._lock:
            return message_id in self.deleted

    def messages_with(self, channel_id: str, text: str) -> list[dict[str, Any]]:
        with self._lock:
            return [
                v
                for v in self.versions
                if v["channel_id"] == channel_id and text in (v.get("content") or "")
            ]

    def _read(self) -> None:
        url = self._emulator.base_url + "/_emulator/feed"
        headers = control_headers(self._emulator)
        with httpx.Client(timeout=httpx.Timeout(5, read=30.0)) as client:
            while not self._stop.is_set():
                try:
                    with client.stream("GET", url, headers=headers) as response:
                        event = ""
                        for line in response.iter_lines():
                            if self._stop.is_set():
                                return
                            if line.startswith("event:"):
                                event = line[6:].strip()
                            elif line.startswith("data:"):
                                self._frame(event, json.loads(line[5:]))
                except (httpx.ReadTimeout, httpx.RemoteProtocolError):
                    continue
                except httpx.HTTPError:
                    if self._stop.wait(0.2):
                        return

    def _frame(self, event: str, data: dict[str, Any]) -> None:
        with self._lock:
            if event == "snapshot":
                self.versions.extend(data.get("messages") or [])
                self._ready.set()
            elif event == "message":
                self.versions.append(data)
            elif event == "message_delete":
                self.deleted.append(str(data.get("id")))
