"""The owner's page shows how long a question has waited, Discord's timestamps, the bot's direct
messages, and opens Discord's links (reminder digests, thread URLs) where they point.
"""

from __future__ import annotations

import time

import httpx
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webelement import WebElement

from discord_mcp.emulator import RunningEmulator
from tests.page.conftest import Agent
from tests.page.test_owners_page import QUESTION, click, open_question, result_of
from tests.support.browser import Page, wait_for
from tests.support.people import People

MARCH_2_2026 = 1772452800  # 12:00 UTC: the same date in every time zone within ±11 h


def test_timestamps_show_as_discord_shows_them_relative_ones_as_time_ago(
    page: Page, discord: RunningEmulator, people: People
) -> None:
    page.open()
    now = int(time.time())
    past = now - (3 * 86400 + 3600)
    future = now + (2 * 3600 + 600)
    people.say(
        discord.channel_id,
        f"asked <t:{past}:R>, due <t:{future}:R>, on <t:{MARCH_2_2026}:D>; "
        f"<t:99999999999999:R> <t:{now}:X> <t:{now}><b>x</b>",
    )

    def stamps(m: WebElement) -> list[tuple[str, str]]:
        found = m.find_elements(By.CSS_SELECTOR, ".md-time")
        return [(t.text, t.get_attribute("title") or "") for t in found]

    shown, times, bold = page.read(
        "asked", lambda m: (m.text, stamps(m), m.find_elements(By.CSS_SELECTOR, "b"))
    )
    texts = [text for text, _ in times]
    assert texts[0] == "3 days ago"
    assert texts[1] == "in 2 hours"
    assert "2026" in texts[2]
    assert f"<t:{MARCH_2_2026}" not in shown
    assert len(times) == 4  # the 14-digit and the unknown style stay text, as in Discord
    assert "<t:99999999999999:R>" in shown
    assert f"<t:{now}:X>" in shown
    assert "2026" in times[2][1]  # the full date on hover
    assert "<b>x</b>" in shown  # never HTML
    assert bold == []
    page.shot("timestamps")


def test_the_card_says_how_long_the_question_has_waited(page: Page, agent: Agent) -> None:
    page.open()
    call = agent.start_call("ask_decision", QUESTION)
    card = open_question(page, QUESTION["question"])
    assert "asked" in card
    assert "<t:" not in card
    stamp = page.read(
        QUESTION["question"], lambda m: m.find_element(By.CSS_SELECTOR, ".md-time").text
    )
    assert stamp == "now" or stamp.endswith("ago"), stamp
    page.shot("card-waiting")
    click(page, QUESTION["question"], "A. Delete them")
    assert result_of(call)["status"] == "answered"


def test_the_bots_direct_messages_are_under_direct_messages_and_the_owner_answers_there(
    page: Page, discord: RunningEmulator, people: People
) -> None:
    stranger = people.new_user("mallory")
    page.open()
    bot = httpx.Client(
        base_url=discord.api_base, headers={"Authorization": f"Bot {discord.token}"}, timeout=10
    )
    with bot:
        dm = bot.post("/users/@me/channels", json={"recipient_id": discord.owner_user_id}).json()
        bot.post(f"/channels/{dm['id']}/messages", json={"content": "⏰ 1 question is waiting"})

    wait_for(
        lambda: page.text("#channels .nav-heading").lower() == "direct messages",
        what="the DM section",
    )
    page.click("#channels button.nav-dm")
    page.message("1 question is waiting")
    assert "direct messages" in page.text("#channel-title")
    page.shot("direct-message")
    page.driver.find_element(By.CSS_SELECTOR, "#text").send_keys("on it\n")
    wait_for(
        lambda: [m["content"] for m in people.messages(dm["id"])][-1:] == ["on it"],
        what="the owner's reply in the DM",
    )
    assert people.messages(dm["id"])[-1]["author"]["id"] == discord.owner_user_id

    page.as_user(stranger)
    wait_for(lambda: not page.find("#channels .nav-heading"), what="the DMs to hide")
    assert page.find("#channels button.nav-dm") == []


def test_discords_links_open_the_page_at_their_channel_and_message(
    page: Page, discord: RunningEmulator, people: People
) -> None:
    posted = people.say(discord.channel_id, "the message a digest links to")
    link = f"{discord.base_url}/channels/{discord.guild_id}/{discord.channel_id}/{posted['id']}"
    answer = httpx.get(link, follow_redirects=False)
    assert answer.status_code == 302
    assert answer.headers["location"] == f"/#{discord.channel_id}/{posted['id']}"
    assert httpx.get(f"{discord.base_url}/channels/@me/x/1").status_code == 404

    page.driver.get(link)
    wait_for(page.live, what="the live feed to connect")
    page.message("the message a digest links to")


def test_a_notice_takes_its_own_room_and_covers_no_message_header(
    page: Page, discord: RunningEmulator, people: People
) -> None:
    for number in range(3):
        people.say(discord.channel_id, f"note {number} for the agents")
    page.open(discord.channel_id)
    page.message("note 2 for the agents")
    made = httpx.post(
        f"{discord.api_base}/channels/{discord.channel_id}/threads",
        headers={"Authorization": f"Bot {discord.token}"},
        json={"name": "a thread the bot opened", "type": 11},
        timeout=10,
    )
    made.raise_for_status()
    notice = wait_for(
        lambda: next((t for t in page.find("#toasts .toast") if "New thread" in t.text), None),
        what="the notice of the new thread",
    )
    page.shot("notice")
    box = notice.rect
    covered = [
        element.text
        for element in page.find(".msg-head") + page.find("#channel-header")
        if _overlap(box, element.rect) and element.is_displayed()
    ]
    assert covered == []


def _overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return (
        a["x"] < b["x"] + b["width"]
        and b["x"] < a["x"] + a["width"]
        and a["y"] < b["y"] + b["height"]
        and b["y"] < a["y"] + a["height"]
    )
