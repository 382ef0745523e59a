"""A real browser for the owner's page: Debian's headless Chromium through its chromedriver.

Nothing is downloaded: Selenium is pointed at ``/usr/bin/chromium`` and
``/usr/bin/chromedriver`` (``scripts/test`` installs both from Debian when missing), so its
own driver manager never runs.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
PHONE = (390, 844)
DESKTOP = (1280, 860)

T = TypeVar("T")


def browser_missing() -> str | None:
    """Why a browser cannot start here, or None."""
    for path in (CHROMIUM, CHROMEDRIVER):
        if shutil.which(path) is None:
            return f"{path} is missing (apt-get install chromium chromium-driver)"
    return None


def start_chromium(profile: Path, size: tuple[int, int] = DESKTOP) -> WebDriver:
    """Headless Chromium with a fresh profile, no network chatter of its own."""
    options = Options()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        f"--user-data-dir={profile}",
        f"--window-size={size[0]},{size[1]}",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))
    driver.set_page_load_timeout(30)
    driver.set_script_timeout(30)
    return driver


def wait_for(
    condition: Callable[[], T | bool | None], *, timeout: float = 15.0, what: str = "it"
) -> T:
    """Poll ``condition`` until it is truthy (at most ``timeout`` seconds); return its value."""
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while True:
        try:
            value = condition()
            if value:
                return value  # type: ignore[return-value]
        except Exception as exc:  # a node replaced under us: look again
            last = exc
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}") from last
        time.sleep(0.05)


class Page:
    """The owner's page in a browser: find things, act, and keep a screenshot of each step."""

    def __init__(self, driver: WebDriver, base_url: str, shots: Path) -> None:
        self.driver = driver
        self.base_url = base_url
        self.shots = shots
        self.steps = 0
        shots.mkdir(parents=True, exist_ok=True)

    def open(self, channel_id: str | None = None) -> None:
        self.driver.get(self.base_url + "/" + (f"#{channel_id}" if channel_id else ""))
        wait_for(lambda: self.live(), what="the live feed to connect")

    def live(self) -> bool:
        return self.text("#live") == "live"

    def shot(self, name: str) -> Path:
        self.steps += 1
        path = self.shots / f"{self.steps:02d}-{name}.png"
        self.driver.save_screenshot(str(path))
        return path

    def find(self, css: str) -> list[WebElement]:
        return list(self.driver.find_elements(By.CSS_SELECTOR, css))

    def text(self, css: str) -> str:
        found = self.find(css)
        return found[0].text if found else ""

    def message(self, contains: str) -> WebElement:
        """The message whose text contains ``contains`` (waits for it)."""

        def look() -> WebElement | None:
            for item in self.find("#messages .msg"):
                if contains in item.text:
                    return item
            return None

        return wait_for(look, what=f"a message with {contains!r}")

    def read(self, contains: str, what: Callable[[WebElement], T]) -> T:
        """``what`` of the message containing ``contains``, read in one go from a fresh look:
        the live page may redraw a message between two reads (a stale element), and then
        this looks again."""
        return wait_for(lambda: (what(self.message(contains)),), what=f"{contains!r} read")[0]

    def click(self, css: str, label: str = "", *, within: str = "") -> None:
        """Click the element matching ``css`` whose text has ``label`` (inside a message
        containing ``within``, if given: any of them, since a run's live text may quote a
        card's question without its buttons), looking again when the live page replaced it."""

        def attempt() -> bool:
            scopes: list[Any] = (
                [m for m in self.find("#messages .msg") if within in m.text]
                if within
                else [self.driver]
            )
            for scope in scopes:
                for element in scope.find_elements(By.CSS_SELECTOR, css):
                    if label in element.text:
                        element.click()
                        return True
            return False

        wait_for(attempt, what=f"{css} {label!r} to click")

    def as_user(self, user_id: str) -> None:
        self.driver.execute_script(
            "const s = document.querySelector('#who');"
            "s.value = arguments[0]; s.dispatchEvent(new Event('change'));",
            user_id,
        )
        wait_for(lambda: self.driver.execute_script("return document.body.dataset.me") == user_id)

    def console_errors(self) -> list[dict[str, Any]]:
        """Script errors the page logged (answers with an error status are not: the page
        shows those itself, and probes the control API with one)."""
        return [
            e
            for e in self.driver.get_log("browser")
            if e.get("level") == "SEVERE" and "Failed to load resource" not in e.get("message", "")
        ]
