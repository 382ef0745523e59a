"""A scripted stand-in for the model APIs of Claude Code, Codex and Gemini CLI.

The end-to-end tests run the real agent CLIs against this server instead of a real model. One
server speaks all three wire formats, chosen by path:

- Anthropic Messages: ``POST /v1/messages`` (SSE when ``stream`` is true, JSON otherwise), for
  Claude Code with ``ANTHROPIC_BASE_URL=<base_url>``.
- OpenAI Responses: ``POST /v1/responses`` (SSE), for Codex with a provider whose
  ``base_url`` is ``<base_url>/v1``.
- Gemini: ``POST /v1beta/models/<model>:streamGenerateContent?alt=sse`` and
  ``:generateContent``, for Gemini CLI with ``GOOGLE_GEMINI_BASE_URL=<base_url>``.

A test scripts what "the model" does with :meth:`ModelServer.script`: an ordered list of steps,
one per model request. A step is a reply (:class:`Text`, :class:`ToolCall`) or a function that
decides the reply from the request (see :func:`tool_round_trip`, :func:`quote_tool_result`)::

    model.script(tool_round_trip("echo", "ask_decision", {"question": "A or B?"}), repeat=True)
    ...  # run a CLI
    assert model.tool_results()[0].text == '{"answer":"B"}'
    assert model.requests_containing("B")

Requests that are protocol plumbing rather than a model turn do not use up a step: Gemini's
JSON side calls (router classifier, next-speaker check) get a generic schema-shaped answer, and
Codex's tool-search round trip (a :class:`ToolCall` becomes ``tool_search_call``, then the
``function_call`` once Codex returns ``tool_search_output``) counts as the one step.

Every request is recorded (:attr:`ModelServer.requests`). Anything the script could not handle
(script exhausted, tool not offered to the model, unknown path) is answered with HTTP 500, so
the CLI fails fast with retries off, and is recorded in :attr:`ModelServer.errors`.

The server also acts as a refusing HTTP(S) proxy: point a CLI's ``HTTPS_PROXY`` at
:attr:`ModelServer.proxy_url` (with ``NO_PROXY=127.0.0.1``) and every attempt to reach the
internet is refused and listed in :attr:`ModelServer.outbound_attempts`.
"""

from __future__ import annotations

import threading
from types import TracebackType
from typing import Self

from discord_mcp.demo.model.playback import Playback
from discord_mcp.demo.model.script import Step
from discord_mcp.demo.model.serving import Handler, HTTPServer


class ModelServer(Playback):
    """The scripted model server; runs in a background thread on 127.0.0.1, port chosen by the OS.

    Use as a context manager (or :meth:`start` / :meth:`stop`). Thread-safe: requests from
    several CLIs may arrive concurrently; steps are handed out in arrival order. Scripting and
    inspection (:meth:`script`, :attr:`requests`, :meth:`tool_results`, ...) are
    :class:`~discord_mcp.demo.model.playback.Playback`'s.
    """

    def __init__(self, *steps: Step, repeat: bool = False, port: int = 0) -> None:
        super().__init__(*steps, repeat=repeat)
        self._port = port
        self._httpd: HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle

    def start(self) -> Self:
        """Bind the port (0: a free one) and serve in a daemon thread. Returns self."""
        if self._httpd is not None:
            return self
        httpd = HTTPServer(("127.0.0.1", self._port), Handler)
        httpd.model = self
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"model-server-{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket; returns within about a second."""
        httpd, thread = self._httpd, self._thread
        self._httpd = self._thread = None
        if httpd is None:
            return
        httpd.shutdown()
        httpd.server_close()
        if thread is not None:
            thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the model server is not running")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>``: ANTHROPIC_BASE_URL and GOOGLE_GEMINI_BASE_URL."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """``<base_url>/v1``: the ``base_url`` of a Codex model provider."""
        return f"{self.base_url}/v1"

    @property
    def proxy_url(self) -> str:
        """Use as HTTP(S)_PROXY to refuse and record any traffic meant for the internet."""
        return self.base_url
