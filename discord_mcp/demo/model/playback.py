"""The scripted model without its HTTP side: it hands out the script's steps in order and
records every request, every error and every refused attempt to reach the internet.

:class:`~discord_mcp.demo.model.server.ModelServer` is a :class:`Playback` served over HTTP;
the wire formats (``apis.py``) and the handler (``serving.py``) answer through this one.
Thread-safe: requests from several CLIs may arrive concurrently.
"""

from __future__ import annotations

import itertools
import threading
import uuid

from discord_mcp.demo.model.recorded import ModelRequest, ToolResult
from discord_mcp.demo.model.replies import Api, BuiltinCall, Reply, ShellCall, Text, ToolCall
from discord_mcp.demo.model.script import ScriptError, Step


class Playback:
    """The script in play and the record of what the model received."""

    def __init__(self, *steps: Step, repeat: bool = False) -> None:
        self._lock = threading.Lock()
        self._requests: list[ModelRequest] = []
        self._errors: list[str] = []
        self._outbound: list[str] = []
        self._steps: list[Step] = []
        self._cursor = 0
        self._repeat = False
        # Codex tool search: call_id of the tool_search_call we emitted -> the call it unlocks.
        self._pending_searches: dict[str, ToolCall] = {}
        self._ids = itertools.count(1)
        self.script(*steps, repeat=repeat)

    # -- scripting

    def script(self, *steps: Step, repeat: bool = False) -> None:
        """Replace the script. Each model turn request takes the next step, in order.

        With ``repeat=True`` the last step stays in force once reached (for steps that decide
        from the request); otherwise a request after the last step is an error.
        """
        with self._lock:
            self._steps = list(steps)
            self._cursor = 0
            self._repeat = repeat

    def _next_step(self) -> Step:
        with self._lock:
            if self._cursor < len(self._steps):
                step = self._steps[self._cursor]
                self._cursor += 1
                return step
            if self._repeat and self._steps:
                return self._steps[-1]
        raise ScriptError(f"the model script is exhausted ({len(self._steps)} step(s) used)")

    @property
    def steps_used(self) -> int:
        """How many steps of the current script have been handed out."""
        with self._lock:
            return self._cursor

    # -- inspection

    @property
    def requests(self) -> list[ModelRequest]:
        """Every request received, in arrival order (a snapshot)."""
        with self._lock:
            return list(self._requests)

    def turn_requests(self, api: Api | None = None) -> list[ModelRequest]:
        """Requests for the model's next move: every API request except side calls.

        Includes Codex's tool-search continuations (the request that gets the actual call).
        """
        return [
            r
            for r in self.requests
            if r.kind in ("turn", "continuation") and (api is None or r.api == api)
        ]

    def requests_containing(self, text: str) -> list[ModelRequest]:
        """Requests whose body contains ``text`` anywhere."""
        return [r for r in self.requests if r.contains(text)]

    def tool_results(self) -> list[ToolResult]:
        """Every distinct tool result the CLIs sent back, in the order first seen."""
        seen: set[tuple[Api, str]] = set()
        results: list[ToolResult] = []
        for request in self.requests:
            for result in request.tool_results():
                key = (result.api, result.call_id + "\0" + result.text)
                if key not in seen:
                    seen.add(key)
                    results.append(result)
        return results

    def tool_calls(self) -> list[tuple[ModelRequest, ToolCall]]:
        """The tool calls the script made, with the request each one answered."""
        return [(r, r.reply) for r in self.requests if isinstance(r.reply, ToolCall)]

    @property
    def errors(self) -> list[str]:
        """Requests the server could not answer as scripted (each was answered with HTTP 500)."""
        with self._lock:
            return list(self._errors)

    @property
    def outbound_attempts(self) -> list[str]:
        """Targets of proxy requests (CONNECT host:port or absolute URLs) that were refused."""
        with self._lock:
            return list(self._outbound)

    def describe(self) -> str:
        """A compact log of the requests, for assertion messages."""
        lines = []
        for r in self.requests:
            reply = r.reply if r.reply is not None else r.error
            lines.append(f"#{r.seq} {r.api} {r.kind} {r.method} {r.path}: {reply!r}")
        return "\n".join(lines) or "(no requests)"

    # -- recording (called from handler threads)

    def record(self, request: ModelRequest) -> None:
        with self._lock:
            request.seq = len(self._requests) + 1
            self._requests.append(request)

    def record_error(self, request: ModelRequest, message: str) -> None:
        request.error = message
        with self._lock:
            self._errors.append(
                f"request #{request.seq} {request.method} {request.path}: {message}"
            )

    def record_outbound(self, target: str) -> None:
        with self._lock:
            self._outbound.append(target)

    def record_crash(self, message: str) -> None:
        with self._lock:
            self._errors.append(message)

    def remember_search(self, call_id: str, call: ToolCall) -> None:
        """Codex's tool search ``call_id`` was sent; its result unlocks ``call``."""
        with self._lock:
            self._pending_searches[call_id] = call

    def take_search(self, call_id: str) -> ToolCall | None:
        """The call that the tool search ``call_id`` unlocks (once), if it is ours."""
        with self._lock:
            return self._pending_searches.pop(call_id, None)

    def new_id(self, prefix: str) -> str:
        return f"{prefix}_stub_{next(self._ids):04d}{uuid.uuid4().hex[:12]}"

    def reply_for(self, request: ModelRequest) -> Reply:
        step = self._next_step()
        reply = step(request) if callable(step) else step
        if not isinstance(reply, Text | ToolCall | ShellCall | BuiltinCall):
            raise ScriptError(f"a step returned {reply!r}, not a Reply")
        return reply
