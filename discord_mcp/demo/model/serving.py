"""The scripted model's HTTP side: one handler for the three APIs and the refusing proxy."""

from __future__ import annotations

import gzip
import json
import sys
import uuid
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from discord_mcp.demo.model.apis import answer
from discord_mcp.demo.model.playback import Playback
from discord_mcp.demo.model.recorded import ModelRequest, api_for
from discord_mcp.demo.model.replies import Text


class HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    model: Playback

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A CLI that exits (or is killed) mid-response resets its connection: not our error.
        # Anything else is a bug in the server and must fail the test, not just print.
        exc = sys.exc_info()[1]
        if isinstance(exc, ConnectionError | TimeoutError):
            return
        self.model.record_crash(f"handler crashed: {type(exc).__name__}: {exc}")


class Handler(BaseHTTPRequestHandler):
    # HTTP/1.1 with Content-Length on every body, SSE included: the whole event stream is
    # built before sending, so undici (Claude, Gemini) and reqwest (Codex) keep connections
    # alive without chunked encoding.
    protocol_version = "HTTP/1.1"
    server: HTTPServer
    # Idle keep-alive connections are closed after this, so handler threads do not pile up.
    timeout = 30

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep the test output clean; every request is recorded instead

    def do_CONNECT(self) -> None:
        self.server.model.record_outbound(self.path)
        self._send(403, "text/plain", b"outbound traffic refused by the test harness\n")
        self.close_connection = True

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def _serve(self) -> None:
        model = self.server.model
        raw = self._read_body()
        target = self.path
        if target.startswith(("http://", "https://")):
            # Absolute-form request: a client sent plain HTTP through us as its proxy.
            parts = urlsplit(target)
            if parts.hostname not in ("127.0.0.1", "localhost"):
                model.record_outbound(target)
                self._send(403, "text/plain", b"outbound traffic refused by the test harness\n")
                return
            target = parts.path + (f"?{parts.query}" if parts.query else "")
        parts = urlsplit(target)
        headers = {k.lower(): v for k, v in self.headers.items()}
        try:
            body: Any = (
                json.loads(_decode(raw, headers.get("content-encoding", ""))) if raw else None
            )
        except (ValueError, OSError) as exc:
            body = {"_undecodable": f"{type(exc).__name__}: {exc}"}
        api = api_for(parts.path) if self.command == "POST" else None
        request = ModelRequest(
            seq=0,  # numbered when recorded
            api=api,
            method=self.command,
            path=parts.path,
            query=parse_qs(parts.query),
            headers=headers,
            body=body,
        )
        model.record(request)
        status, content_type, payload = answer(model, request)
        reply = request.reply
        if isinstance(reply, Text) and reply.hold is not None and status == 200:
            self._send(status, content_type, payload, hold=reply)
            return
        self._send(status, content_type, payload)

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            return b"".join(self._chunks())
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _chunks(self) -> Iterator[bytes]:
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while self.rfile.readline().strip():  # trailers, then the blank line
                    pass
                return
            yield self.rfile.read(size)
            self.rfile.readline()

    def _send(
        self, status: int, content_type: str, payload: bytes, hold: Text | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("Cache-Control", "no-cache")
        self.send_header("request-id", f"req_stub_{uuid.uuid4().hex[:12]}")
        self.end_headers()
        if self.command != "HEAD":
            cut = _after_first_piece(payload, hold) if hold is not None else 0
            if hold is not None and hold.hold is not None and cut:
                self.wfile.write(payload[:cut])
                self.wfile.flush()
                hold.hold.wait(60)
                payload = payload[cut:]
            self.wfile.write(payload)
        self.wfile.flush()


def _after_first_piece(payload: bytes, text: Text) -> int:
    """Where the SSE frame carrying the text's first piece ends (0: not found). A frame ends
    with a blank line: LF LF (Anthropic, OpenAI) or CRLF CRLF (Gemini)."""
    first = json.dumps(text.split()[0])[1:-1].encode()
    at = payload.find(first)
    if at < 0:
        return 0
    ends = [
        end + len(blank)
        for blank in (b"\n\n", b"\r\n\r\n")
        if (end := payload.find(blank, at)) >= 0
    ]
    return min(ends, default=0)


def _decode(raw: bytes, encoding: str) -> bytes:
    encoding = encoding.strip().lower()
    if encoding == "gzip":
        return gzip.decompress(raw)
    if encoding == "deflate":
        return zlib.decompress(raw)
    if encoding in ("", "identity"):
        return raw
    raise OSError(f"unsupported Content-Encoding {encoding!r}")
