"""The owner's page in headless Chromium, with a real discord-mcp server asking the questions.

Each test acts as a person would: opens the page, follows the thread the agent started, clicks,
types, reacts, switches who they are. The page is never reloaded: everything it shows after
the first load came through the live feed. Screenshots of each step are kept (see conftest).
"""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any

from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from discord_mcp.emulator import RunningEmulator
from tests.page.conftest import Agent
from tests.support.browser import PHONE, Page, wait_for
from tests.support.people import People

QUESTION = {
    "question": "Delete the 14 merged branches?",
    "context": "All merged into main; nothing is pushed yet.",
    "options": ["Delete them", "Keep them"],
}


def mark_page(page: Page) -> None:
    """A value that only survives while the page is not reloaded."""
    page.driver.execute_script("window.__notReloaded = 'yes'")


def assert_not_reloaded(page: Page) -> None:
    assert page.driver.execute_script("return window.__notReloaded") == "yes"


def open_question(page: Page, question: str) -> str:
    """From #agents, follow the thread the agent started and wait for its card's buttons;
    returns the card's text. (The live page re-renders the card as its reactions arrive, so
    elements are looked up again rather than kept.)"""
    page.click("#messages .thread-link", question[:20])
    wait_for(
        lambda: page.message(question).find_elements(By.CSS_SELECTOR, "button.btn"),
        what="the card's buttons",
    )
    return wait_for(lambda: page.message(question).text, what="the card's text")


def click(page: Page, question: str, label: str) -> None:
    """Click the card's button labelled ``label``."""
    page.click("button.btn", label, within=question)


def result_of(call: Future[dict[str, Any]]) -> dict[str, Any]:
    return call.result(timeout=30)


def test_a_card_the_server_posted_is_shown_and_a_click_answers_the_agents_call(
    page: Page, agent: Agent
) -> None:
    page.open()
    mark_page(page)
    call = agent.start_call("ask_decision", QUESTION)
    card = open_question(page, QUESTION["question"])
    assert "Context: All merged into main" in card
    page.shot("card")
    assert not call.done()

    click(page, QUESTION["question"], "A. Delete them")
    answer = result_of(call)

    assert answer["status"] == "answered"
    assert answer["selected_option"] == "Delete them"
    assert answer["via"] == "button"

    def answered_card() -> tuple[str, int]:
        card = page.message("Answered:")
        return card.text, len(card.find_elements(By.CSS_SELECTOR, "button.btn"))

    text, buttons = wait_for(answered_card, what="the answered card")
    assert "Delete the 14" in text
    assert "(edited)" in text
    assert buttons == 0  # the card's buttons are gone
    page.shot("answered")
    assert_not_reloaded(page)


def test_a_strangers_click_shows_the_refusal_to_the_stranger_only(
    page: Page, agent: Agent, people: People
) -> None:
    stranger = people.new_user("stranger")
    page.open()
    mark_page(page)
    call = agent.start_call("ask_decision", QUESTION)
    open_question(page, QUESTION["question"])
    page.as_user(stranger)

    click(page, QUESTION["question"], "A. Delete them")
    refusal = page.message("can answer this question")

    assert "Only you can see this" in refusal.text
    assert "ephemeral" in (refusal.get_attribute("class") or "")
    page.shot("stranger-refused")
    assert not call.done()
    page.as_user(people_owner(people))
    wait_for(lambda: not page.find("#messages .msg.ephemeral"), what="the refusal to hide")
    page.shot("owner-does-not-see-it")
    click(page, QUESTION["question"], "B. Keep them")
    answer = result_of(call)
    assert answer["selected_option"] == "Keep them"
    assert answer["answered_by"] != "stranger"
    assert_not_reloaded(page)


def people_owner(people: People) -> str:
    return str(people.state()["owner_user_id"])


def test_a_reply_typed_in_the_thread_answers_and_a_reaction_answers_the_next(
    page: Page, agent: Agent
) -> None:
    page.open()
    mark_page(page)
    call = agent.start_call("ask_decision", QUESTION)
    open_question(page, QUESTION["question"])

    box = page.driver.find_element(By.CSS_SELECTOR, "#text")
    box.send_keys("B")
    box.send_keys(Keys.ENTER)
    answer = result_of(call)
    assert (answer["selected_option"], answer["via"]) == ("Keep them", "text")
    page.message("Answered")
    page.shot("answered-by-reply")

    # ✅ and ❌ go only on a card whose options are a yes and a no (issue 21).
    second = {"question": "Run the migration now?", "options": ["Yes, run it", "No, wait"]}
    call = agent.start_call("ask_decision", second)
    page.click("#channels .nav-channel")
    open_question(page, second["question"])
    wait_for(
        lambda: page.message(second["question"]).find_elements(
            By.CSS_SELECTOR, ".reaction[data-emoji='✅']"
        ),
        what="the bot's ✅ reaction",
    )
    page.shot("reactions")
    page.click(".reaction[data-emoji='✅']", within=second["question"])
    answer = result_of(call)

    assert (answer["selected_option"], answer["via"]) == ("Yes, run it", "reaction")

    def my_reaction_count() -> str | None:
        try:
            mine = page.find("#messages .reaction.mine[data-emoji='✅']")
            return mine[0].text.split()[-1] if mine else None
        except StaleElementReferenceException:
            return None  # the live page redrew the card between finding and reading: look again

    wait_for(lambda: my_reaction_count() == "2", what="my reaction beside the bot's (2)")
    page.shot("answered-by-reaction")
    assert_not_reloaded(page)


def test_other_opens_a_modal_and_the_text_typed_there_is_the_answer(
    page: Page, agent: Agent
) -> None:
    page.open()
    call = agent.start_call("ask_decision", QUESTION)
    open_question(page, QUESTION["question"])

    click(page, QUESTION["question"], "Other…")
    field = wait_for(lambda: page.find("#modal[open] textarea"), what="the modal")[0]
    field.send_keys("Delete all but release-*")
    page.shot("modal")
    page.driver.find_element(By.CSS_SELECTOR, "#modal button[type=submit]").click()
    answer = result_of(call)

    assert (answer["answer"], answer["via"]) == ("Delete all but release-*", "modal")
    wait_for(lambda: not page.find("#modal[open]"), what="the modal to close")
    page.message("Delete all but release-*")
    page.shot("answered-by-modal")


def test_discord_content_is_shown_as_text_never_as_html(
    page: Page, discord: RunningEmulator, people: People
) -> None:
    page.open()
    hostile = (
        '**bold** <img src=x onerror="window.__owned=1"> <script>window.__owned=2</script> '
        "[click me](javascript:window.__owned=3) https://example.com/ok `<b>code</b>`"
    )
    people.say(discord.channel_id, hostile)

    shown = page.message("bold")
    assert "<img src=x" in shown.text
    assert "<script>" in shown.text
    assert shown.find_elements(By.CSS_SELECTOR, "img, script") == []
    assert shown.find_element(By.CSS_SELECTOR, "strong").text == "bold"
    assert shown.find_element(By.CSS_SELECTOR, "code").text == "<b>code</b>"
    links = shown.find_elements(By.CSS_SELECTOR, "a")
    assert [a.get_attribute("href") for a in links] == ["https://example.com/ok"]
    assert links[0].get_attribute("rel") == "noopener noreferrer nofollow"
    assert "[click me](javascript:" in shown.text
    assert page.driver.execute_script("return window.__owned") is None
    page.shot("hostile-content")


def test_the_page_fits_a_phone_screen_and_still_answers(
    page: Page, agent: Agent, chromium: Any
) -> None:
    chromium.set_window_size(*PHONE)
    page.open()
    call = agent.start_call("ask_decision", QUESTION)
    open_question(page, QUESTION["question"])

    width = page.driver.execute_script("return document.documentElement.clientWidth")
    overflow = page.driver.execute_script("return document.documentElement.scrollWidth")
    assert overflow <= width <= PHONE[0]

    def first_button() -> dict[str, Any] | None:
        for b in page.message(QUESTION["question"]).find_elements(By.CSS_SELECTOR, "button.btn"):
            if "A." in b.text and b.is_displayed():
                return dict(b.rect)
        return None

    choice = wait_for(first_button, what="option A's button")
    assert choice["x"] + choice["width"] <= width
    page.shot("phone")
    click(page, QUESTION["question"], "A. Delete them")
    assert result_of(call)["selected_option"] == "Delete them"
    page.message("Answered")
    page.shot("phone-answered")
