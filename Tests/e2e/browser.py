"""Headless Chromium (Debian's `chromium` and `chromium-driver`) driven through Selenium, at the
app's reference viewport (390×844), with the waits the browser tests use: every wait is on a
condition, bounded, and says what it waited for when it gives up."""
import os
import shutil
import tempfile
import time

from selenium import webdriver
from selenium.common.exceptions import (ElementClickInterceptedException, ElementNotInteractableException, NoSuchElementException,
                                        StaleElementReferenceException, TimeoutException)
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

PHONE = (390, 844)
WAIT_SECONDS = 15


def _find(*names):
    for name in names:
        path = shutil.which(name)
        if path:
            return path
    return None


def chromium_paths():
    """(browser, driver) from the system, or (None, None) when they are not installed."""
    return (os.environ.get("BANGBANG_CHROMIUM") or _find("chromium", "chromium-browser"),
            os.environ.get("BANGBANG_CHROMEDRIVER") or _find("chromedriver"))


class Browser:
    """One browser session: its own profile (so its own localStorage, like another phone)."""

    def __init__(self, base_url, name="browser", size=PHONE, scale=1):
        browser, driver = chromium_paths()
        self.name = name
        self.base_url = base_url.rstrip("/")
        self.profile = tempfile.mkdtemp(prefix=f"bangbang-chromium-{name}-")
        options = webdriver.ChromeOptions()
        options.binary_location = browser
        for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         "--disable-extensions", "--no-first-run", "--disable-background-networking",
                         "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
                         "--disable-backgrounding-occluded-windows", "--lang=zh-CN",
                         f"--user-data-dir={self.profile}", f"--window-size={size[0]},{size[1]}"):
            options.add_argument(argument)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.driver = webdriver.Chrome(options=options, service=Service(executable_path=driver))
        self.driver.set_page_load_timeout(30)
        self.resize(size, scale)

    def resize(self, size=PHONE, scale=1):
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": size[0], "height": size[1], "deviceScaleFactor": scale, "mobile": size[0] < 600})

    def quit(self):
        try:
            self.driver.quit()
        finally:
            shutil.rmtree(self.profile, ignore_errors=True)

    # Navigation and finding

    def open(self, path="/"):
        self.driver.get(self.base_url + path)

    def go(self, fragment):
        """Follows an in-page link by its hash, as tapping a link would."""
        self.driver.execute_script("location.hash = arguments[0]", fragment)

    def find(self, selector):
        return self.driver.find_element(By.CSS_SELECTOR, selector)

    def find_all(self, selector):
        return self.driver.find_elements(By.CSS_SELECTOR, selector)

    def wait(self, condition, what, timeout=WAIT_SECONDS):
        """Waits until `condition(driver)` is truthy and returns it."""
        def check(driver):
            try:
                return condition(driver)
            except (NoSuchElementException, StaleElementReferenceException):
                return False
        try:
            return WebDriverWait(self.driver, timeout, poll_frequency=0.05).until(check)
        except TimeoutException:
            raise AssertionError(f"{self.name}: waited {timeout} s for {what}; page shows:\n{self.text()[:2000]}") from None

    def element(self, selector, timeout=WAIT_SECONDS):
        """Waits for a visible element."""
        return self.wait(lambda d: next((e for e in d.find_elements(By.CSS_SELECTOR, selector) if e.is_displayed()), None),
                         f"{selector} to show", timeout)

    def gone(self, selector, timeout=WAIT_SECONDS):
        self.wait(lambda d: not any(e.is_displayed() for e in d.find_elements(By.CSS_SELECTOR, selector)),
                  f"{selector} to go away", timeout)

    def text_of(self, selector, contains, timeout=WAIT_SECONDS):
        """Waits until the element's text contains `contains`, and returns the text."""
        return self.wait(lambda d: (lambda t: t if contains in t else False)(d.find_element(By.CSS_SELECTOR, selector).text),
                         f"{selector} to say {contains!r}", timeout)

    def attribute(self, selector, name, value, timeout=WAIT_SECONDS):
        self.wait(lambda d: d.find_element(By.CSS_SELECTOR, selector).get_attribute(name) == value,
                  f"{selector} [{name}={value!r}]", timeout)

    def text(self):
        try:
            return self.driver.find_element(By.TAG_NAME, "body").text
        except Exception:  # the page is between documents
            return ""

    # Acting as a person would

    def click(self, selector, timeout=WAIT_SECONDS):
        """Clicks the element once it shows and is enabled; a passing message (a toast) over it
        is waited out, as a person would."""
        def clicked(driver):
            element = next((e for e in driver.find_elements(By.CSS_SELECTOR, selector)
                            if e.is_displayed() and e.is_enabled()), None)
            if element is None:
                return None
            driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
            try:
                element.click()
            except ElementClickInterceptedException:
                return None
            return element
        return self.wait(clicked, f"{selector} to be clickable", timeout)

    def type(self, selector, text, clear=True):
        """Types into a field once it shows and takes input (a row just added may still be
        settling), first selecting and deleting what it holds, as a person would."""
        def typed(driver):
            element = next((e for e in driver.find_elements(By.CSS_SELECTOR, selector)
                            if e.is_displayed() and e.is_enabled()), None)
            if element is None:
                return None
            try:
                if clear and element.get_attribute("value"):
                    element.send_keys(Keys.CONTROL, "a")
                    element.send_keys(Keys.BACKSPACE)
                element.send_keys(text)
            except ElementNotInteractableException:
                return None
            return element
        return self.wait(typed, f"{selector} to take input", WAIT_SECONDS)

    def choose(self, selector, value):
        from selenium.webdriver.support.ui import Select
        Select(self.element(selector)).select_by_value(value)

    def screenshot(self, path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        self.driver.save_screenshot(path)

    def full_screenshot(self, path):
        """The whole page, however long, at the phone's width."""
        height = self.driver.execute_script("return Math.max(document.documentElement.scrollHeight, innerHeight)")
        self.resize((PHONE[0], min(int(height), 4000)))
        try:
            self.screenshot(path)
        finally:
            self.resize()

    def console_errors(self):
        """Script errors the page logged (failed connections while a server restarts are expected)."""
        return [entry for entry in self.driver.get_log("browser")
                if entry["level"] == "SEVERE" and entry.get("source") != "network"]

    def offline(self, on):
        """Takes the browser off the network (new connections fail) or back on."""
        self.driver.execute_cdp_cmd("Network.enable", {})
        self.driver.execute_cdp_cmd("Network.emulateNetworkConditions", {
            "offline": on, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})


def deadline(seconds):
    return time.monotonic() + seconds
