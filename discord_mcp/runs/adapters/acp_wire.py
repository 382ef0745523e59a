"""The ACP engine's wire side: one agent process, its connection and its session.

The ``agent-client-protocol`` SDK speaks the JSON-RPC (see :mod:`.acp` for the protocol and the
transcript). Only this module imports it, and only where an ACP agent starts (``AgentHosts``):
a ``discord-watch`` without ACP agents never pays for its import.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import acp
from acp import schema
from acp.utils import serialize_params

from discord_mcp.errors import RunError
from discord_mcp.runs.adapters.acp import AgentGone, McpServerSpec
from discord_mcp.runs.adapters.acp_models import ModelMenu, menu_of, switch_request

log = logging.getLogger(__name__)

_EXIT_SETTLE_S = 2.0
"""After a request failed with a closed pipe, how long to wait for the process's exit."""

UpdateSink = Callable[[dict[str, Any]], None]
PermissionSink = Callable[[schema.RequestPermissionRequest], Awaitable[dict[str, Any]]]


# --------------------------------------------------------------------------------------------
# The client side of the connection


class AcpClient:
    """Our side of the protocol: updates go to the running turn, permissions to the owner.

    Nothing here touches the file system or terminals: we do not offer those capabilities, so
    an agent does its own reading, writing and running (and asks permission for it).
    """

    def __init__(self) -> None:
        self.on_update: UpdateSink | None = None
        self.on_permission: PermissionSink | None = None

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        sink = self.on_update
        if sink is None:
            return  # a replay during session/load, or between turns: not this job's text
        try:
            data = update.model_dump(mode="json", by_alias=True, exclude_none=True)
        except AttributeError:
            return
        sink(data)

    async def request_permission(
        self, options: list[schema.PermissionOption], session_id: str, tool_call: Any, **kw: Any
    ) -> schema.RequestPermissionResponse:
        sink = self.on_permission
        request = schema.RequestPermissionRequest(
            options=options, session_id=session_id, tool_call=tool_call
        )
        outcome: dict[str, Any] = {"outcome": "cancelled"}
        if sink is not None:
            try:
                outcome = await sink(request)
            except Exception:  # fail closed: any error is a cancelled request, never an allow
                log.exception("answering an ACP permission request failed; cancelling it")
                outcome = {"outcome": "cancelled"}
        return schema.RequestPermissionResponse.model_validate({"outcome": outcome})

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise acp.RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    def on_connect(self, conn: Any) -> None:
        return None


# --------------------------------------------------------------------------------------------
# One agent process


class AgentProcess:
    """One running agent, its connection and (once opened) its session.

    ``process``: an asyncio subprocess with stdin and stdout pipes (started by the spawner).
    """

    def __init__(self, process: asyncio.subprocess.Process, *, request_timeout: float) -> None:
        self.process = process
        self.client = AcpClient()
        assert process.stdin is not None
        assert process.stdout is not None
        client: Any = self.client  # the Protocol's decorated signatures do not type-check
        self.conn = acp.connect_to_agent(client, process.stdin, process.stdout)
        self.session_id: str | None = None
        self.models: ModelMenu | None = None  # what the session offers (acp_models)
        self.can_load = False
        self.steering = False
        self.agent_name = ""
        self._timeout = request_timeout
        self._exited: asyncio.Task[int] = asyncio.ensure_future(process.wait())

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def alive(self) -> bool:
        return not self._exited.done()

    @property
    def exit_code(self) -> int | None:
        return self._exited.result() if self._exited.done() else None

    async def call(self, request: Awaitable[Any], *, within: float | None = None) -> Any:
        """Await one request, unless the process ends first (AgentGone) or time runs out."""
        task = asyncio.ensure_future(request)
        try:
            async with asyncio.timeout(self._timeout if within is None else within):
                done, _ = await asyncio.wait(
                    {task, self._exited}, return_when=asyncio.FIRST_COMPLETED
                )
        except TimeoutError:
            task.cancel()
            raise
        if task in done:
            if task.exception() is not None and not isinstance(task.exception(), acp.RequestError):
                # The pipe closed under the request: was it the process ending?
                await asyncio.wait({self._exited}, timeout=_EXIT_SETTLE_S)
                if self._exited.done():
                    raise AgentGone(f"the agent process ended (exit code {self.exit_code})")
            return task.result()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
        raise AgentGone(f"the agent process ended (exit code {self.exit_code})")

    async def initialize(self) -> None:
        response = await self.call(
            self.conn.initialize(
                protocol_version=acp.PROTOCOL_VERSION,
                client_capabilities=schema.ClientCapabilities(),
                client_info=schema.Implementation(name="discord-mcp", version="0.1.0"),
            )
        )
        capabilities = response.agent_capabilities
        self.can_load = bool(capabilities and capabilities.load_session)
        meta = response.field_meta or {}
        steering = meta.get("steering") if isinstance(meta, dict) else None
        self.steering = isinstance(steering, dict) and steering.get("supported") is True
        self.agent_name = response.agent_info.name if response.agent_info else ""

    async def open(
        self, cwd: str, mcp: Sequence[McpServerSpec], resume: str | None, mode: str | None
    ) -> tuple[str, bool]:
        """Load ``resume`` (when the agent can) or start a new session; (session id, loaded).

        The answers are read raw: the models a session offers are in parts the SDK drops
        (:mod:`.acp_models`)."""
        servers: list[Any] = [_stdio_server(server) for server in mcp]
        loaded = False
        if resume and self.can_load:
            try:
                load = schema.LoadSessionRequest(cwd=cwd, session_id=resume, mcp_servers=servers)
                answer = await self.request("session/load", serialize_params(load))
                self.session_id, loaded = resume, True
                self.models = menu_of(answer)
            except acp.RequestError as exc:
                log.info("the agent could not load session %s (%s); starting anew", resume, exc)
        if not loaded:
            new = schema.NewSessionRequest(cwd=cwd, mcp_servers=servers)
            answer = await self.request("session/new", serialize_params(new))
            self.session_id = schema.NewSessionResponse.model_validate(answer).session_id
            self.models = menu_of(answer)
        session_id = self.session_id
        assert session_id is not None
        if mode:
            try:
                await self.call(self.conn.set_session_mode(session_id=session_id, mode_id=mode))
            except acp.RequestError as exc:
                log.warning("the agent refused session mode %r: %s", mode, exc)
        return session_id, loaded

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        """One request, its answer as the agent sent it (JSON), bounded like every call.

        The SDK's typed calls drop what its schema does not know (the unstable ``models``,
        ``session/set_model``): these go through its connection's own ``send_request``."""
        wire = self.conn._conn  # the SDK's JSON-RPC connection (agent-client-protocol 0.12)
        return await self.call(wire.send_request(method, params))

    async def switch_model(self, model_id: str) -> None:
        """Switch the open session to ``model_id``, one the session offers.

        Raises:
            RunError: E_INVALID_MODEL (the agent offers no models, or not that one, or
                refused the switch).
        """
        menu, session_id = self.models, self.session_id
        if menu is None or session_id is None:
            raise RunError(
                "E_INVALID_MODEL",
                f"{self.agent_name or 'the agent'} offers no model choice in its session, so "
                f"model {model_id!r} cannot be chosen: set the model back to default",
            )
        if not menu.offers(model_id):
            raise RunError(
                "E_INVALID_MODEL",
                f"{self.agent_name or 'the agent'} does not offer model {model_id!r}; it offers "
                + ", ".join(menu.ids()),
            )
        method, params = switch_request(menu, session_id, model_id)
        try:
            answer = await self.request(method, params)
        except acp.RequestError as exc:
            raise RunError(
                "E_INVALID_MODEL", f"the agent refused to switch to model {model_id!r}: {exc}"
            ) from None
        self.models = menu_of(answer) or ModelMenu(menu.models, model_id, menu.how, menu.config_id)

    def prompt(self, text: str) -> Awaitable[schema.PromptResponse]:
        assert self.session_id is not None
        return self.conn.prompt(
            session_id=self.session_id, prompt=[schema.TextContentBlock(type="text", text=text)]
        )

    async def cancel(self) -> None:
        if self.session_id is not None and self.alive:
            with contextlib.suppress(Exception):
                await self.conn.cancel(session_id=self.session_id)

    async def close(self, grace: float) -> None:
        """End the agent: close its stdin, then SIGTERM, then SIGKILL; bounded."""
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.conn.close(), grace)
        stdin = self.process.stdin
        if stdin is not None:
            with contextlib.suppress(Exception):
                stdin.close()
        for stop in (self._terminate, self._kill):
            if not self.alive:
                break
            stop()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._exited), grace)
        if self.alive:
            log.warning("agent process %d did not end", self.pid)

    def _terminate(self) -> None:
        _signal_group(self.process, 15)

    def _kill(self) -> None:
        _signal_group(self.process, 9)


def _signal_group(process: asyncio.subprocess.Process, signum: int) -> None:
    import os

    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signum)  # the agent leads its own group (see the spawner)


def _stdio_server(server: McpServerSpec) -> schema.McpServerStdio:
    return schema.McpServerStdio(
        name=server.name,
        command=server.command,
        args=list(server.args),
        env=[schema.EnvVariable(name=k, value=v) for k, v in server.env.items()],
    )
