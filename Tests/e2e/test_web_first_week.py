"""What a first week on campus finds wrong with the app and the console, each checked in real
headless Chromium at 390×844: who is told of a rating, one notice at a time and out of the way,
thumb-sized controls and axe-core on every page, the app's own words for every validation error
the forms can produce (no English in the Chinese page), phone numbers as people write them, and
the smaller slips (the stars' error, a user id shown before a name, the fourth type tab, the
console's header offline).

One server and three browsers for the module; the tests run in order and build on each other.
What a page showed between two looks is recorded by a script the browser runs before every
document (`Page.addScriptToEvaluateOnNewDocument`), so a notice that came and went, or a text
that flashed, is seen without sleeping."""
import json
import pathlib
import re
import tempfile
import time

import pytest
from axe_selenium_python import Axe

from bbclient import Client, fresh_phone
from browser import Browser, chromium_paths
from test_web_app import (ADMIN_PHONE, CAMPUSES, SHOTS, Site, board_card, fid, log_in, open_order, open_tab, publish, shot,
                          status_is, switch_language)

SUPPORT_PHONE = "+864001234567"     # Site's --support-phone

# Every notice that showed, every text #order-runner had, and the most notices shown at once.
RECORDER = """
window.__seen = {notices: [], runner: [], mostNotices: 0};
new MutationObserver(() => {
    const toasts = document.querySelectorAll('.toast');
    window.__seen.mostNotices = Math.max(window.__seen.mostNotices, toasts.length);
    for (const toast of toasts) {
        const id = toast.getAttribute('data-notice-id');
        if (!window.__seen.notices.some((n) => n.id === id)) window.__seen.notices.push({id, text: toast.textContent});
    }
    const runner = document.getElementById('order-runner');
    if (runner) {
        const text = runner.textContent;
        if (window.__seen.runner[window.__seen.runner.length - 1] !== text) window.__seen.runner.push(text);
    }
}).observe(document, {childList: true, subtree: true, characterData: true});
"""

# Every visible control that is smaller than a thumb: links, buttons, fields, tabs, radios. A
# checkbox is tapped through the label around it, so the label is what is measured.
SMALL_TARGETS = """
const selector = 'a[href], button, input:not([type=hidden]), select, textarea, summary, [role=button], [role=tab], [role=radio], [tabindex]:not([tabindex="-1"])';
const small = [];
for (const element of document.querySelectorAll(selector)) {
    const style = getComputedStyle(element);
    if (style.display === 'none' || style.visibility === 'hidden') continue;
    let box = element.getBoundingClientRect();
    if (box.width === 0 && box.height === 0) continue;
    if ((element.type === 'checkbox' || element.type === 'radio') && element.closest('label')) {
        box = element.closest('label').getBoundingClientRect();
    }
    if (box.width < 43.5 || box.height < 43.5) {
        small.push(`${element.tagName.toLowerCase()}#${element.id || ''}.${element.className || ''} "${(element.textContent || element.value || '').trim().slice(0, 30)}" ${Math.round(box.width)}×${Math.round(box.height)}`);
    }
}
return small;
"""

# An English sentence: two or more Latin words in a row ("tip may be at most ¥500.00").
ENGLISH = re.compile(r"[A-Za-z]{2,}(?:[ ,.'’:;-]+[A-Za-z]+)+")


@pytest.fixture(scope="module")
def site():
    assert all(chromium_paths()), "chromium and chromedriver are needed: scripts/bootstrap.sh installs them"
    with tempfile.TemporaryDirectory(prefix="bangbang-web-week-") as folder:
        running = Site(folder)
        try:
            yield running
        finally:
            running.stop()


@pytest.fixture(scope="module")
def people(site):
    browsers = {}
    try:
        for name in ("publisher", "runner", "admin"):
            browser = Browser(site.url, name)
            browser.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORDER})
            browsers[name] = browser
        yield browsers
    finally:
        for browser in browsers.values():
            browser.quit()


@pytest.fixture(scope="module")
def checked():
    """The pages looked at by `look`, so the last test can say every page was."""
    return set()


def seen(browser):
    return browser.driver.execute_script("return window.__seen")


def as_user(site, browser):
    """A protocol connection logged in as the browser's user (its token from localStorage)."""
    saved = json.loads(browser.driver.execute_script("return localStorage.getItem('bb.auth')"))
    client = Client(f"ws://127.0.0.1:{site.port}/ws")
    client.ok("auth.resume", {"token": saved["token"], "last_seq": 0})
    return client, saved["userId"]


def personal_seq(browser):
    user = json.loads(browser.driver.execute_script("return localStorage.getItem('bb.auth')"))["userId"]
    return int(browser.driver.execute_script("return localStorage.getItem(arguments[0])", f"bb.seq.{user}") or 0)


def set_value(browser, selector, value):
    """Sets a field as typing would (a datetime-local field does not take keys reliably)."""
    browser.element(selector)
    browser.driver.execute_script(
        "const e = document.querySelector(arguments[0]); e.value = arguments[1];"
        "e.dispatchEvent(new Event('input', {bubbles: true})); e.dispatchEvent(new Event('change', {bubbles: true}));",
        selector, value)


def local_input(browser, offset_ms):
    """A datetime-local value `offset_ms` from now, in the browser's time zone."""
    return browser.driver.execute_script(
        "const d = new Date(Date.now() + arguments[0]); const p = (n) => String(n).padStart(2, '0');"
        "return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;",
        offset_ms)


def no_english(browser):
    text = browser.driver.execute_script("return document.body.innerText")
    found = ENGLISH.findall(text)
    assert not found, f"{browser.name}: English in the Chinese page: {found}"


def look(browser, name, checked, axe=True):
    """Every visible control is thumb-sized and axe-core finds nothing serious or critical."""
    browser.wait(lambda d: d.execute_script("return document.fonts.status") == "loaded", "fonts")
    small = browser.driver.execute_script(SMALL_TARGETS)
    assert small == [], f"{name}: controls smaller than 44×44: {small}"
    if axe:
        checker = Axe(browser.driver)
        checker.inject()
        # The axe-core that axe-selenium-python ships (3.1) predates HTML's `one-time-code`
        # autocomplete token (the SMS code field's); it is taught the token, nothing is turned off.
        browser.driver.execute_script(
            "axe.configure({checks: [{id: 'autocomplete-valid', options: {standaloneTerms: ['one-time-code']}}]})")
        results = checker.run(options='{"resultTypes": ["violations"]}')
        serious = [(v["id"], v["impact"], [n["target"] for n in v["nodes"]][:5]) for v in results["violations"]
                   if v["impact"] in ("serious", "critical")]
        assert serious == [], f"{name}: axe-core: {serious}"
    checked.add(name)


def wait_notice(browser, contains):
    return browser.wait(lambda d: next((n for n in seen(browser)["notices"] if contains in n["text"]), None),
                        f"a notice saying {contains!r}")


# ---------------------------------------------------------------------------------------------

def test_login_pages_and_a_verified_runner(people, site, checked):
    publisher, runner, admin = people["publisher"], people["runner"], people["admin"]
    admin.open("/")
    admin.element(fid("login-code", "phone"))
    look(admin, "login", checked)
    admin.type(fid("login-code", "phone"), "12345")
    admin.click("#login-send-code")
    admin.text_of(fid("login-code", "phone") + "-error", "手机号格式不对")
    no_english(admin)
    switch_language(admin, "en")
    admin.click("#login-send-code")
    admin.text_of(fid("login-code", "phone") + "-error", "Enter an 11-digit mobile number")
    look(admin, "login (en)", checked)
    switch_language(admin, "zh")
    phone = fresh_phone()                                  # +86139…: read back as 139 xxxx xxxx
    admin.type(fid("login-code", "phone"), phone)
    admin.click("#login-send-code")
    written = f"{phone[3:6]} {phone[6:10]} {phone[10:]}"
    admin.text_of("#login-code--notice", written)
    admin.text_of("#dev-code-notice", written)
    assert phone not in admin.text(), "a phone number shown in its E.164 form"
    look(admin, "login with a code sent", checked)
    admin.click("#login-mode-password")
    look(admin, "login by password", checked)

    log_in(publisher, fresh_phone())
    log_in(runner, fresh_phone())
    client, _ = as_user(site, runner)
    with client:
        client.ok("runner.submit_verification", {"real_name": "周跑跑", "student_id": "2026-0042", "school": CAMPUSES[0]})
    admin.open("/admin/")
    admin.type(fid("admin-login-code", "phone"), ADMIN_PHONE)
    admin.click("#admin-send-code")
    admin.type(fid("admin-login-code", "code"), admin.element("#dev-code").text)
    admin.click("#admin-login-submit")
    admin.click("#console-tab-verifications")
    row = admin.wait(lambda d: next((e for e in admin.find_all("#pending-list li") if "周跑跑" in e.text), None), "the application")
    look(admin, "console verifications", checked)
    admin.click(f"#approve-{row.get_attribute('data-user-id')}")
    runner.go("#/me")
    runner.element("#me-runner-badge")


def test_phone_numbers_read_as_people_write_them(people, checked):
    publisher = people["publisher"]
    open_tab(publisher, "me")
    support = publisher.element("#support-phone")
    assert support.get_attribute("href") == f"tel:{SUPPORT_PHONE}"
    publisher.text_of("#support-phone", "打电话咨询")
    publisher.text_of("#support-phone", "400-123-4567")
    assert re.fullmatch(r"139 \d{4} \d{4}", publisher.find("#me-phone").text), publisher.find("#me-phone").text
    look(publisher, "me", checked)
    for page in ("profile", "phone", "password", "verify", "feedback", "devices"):
        publisher.go(f"#/me/{page}")
        publisher.element(f"main.me-{page}")
        if page == "devices":
            publisher.element("#devices-list li")
        if page == "feedback":
            assert publisher.element("#feedback-support").text == "400-123-4567"
        look(publisher, f"me/{page}", checked)


def test_the_four_type_tabs_fit_the_phone_in_both_languages(people, checked):
    runner = people["runner"]
    for language in ("zh", "en"):
        switch_language(runner, language)
        for nav in ("discover", "find"):
            open_tab(runner, nav, "group")
            fits = runner.driver.execute_script("""
                const tabs = [...document.querySelectorAll(`[id^="${arguments[0]}-type-"]`)];
                const list = tabs[0].parentElement;
                return tabs.length === 4 && list.scrollWidth <= list.clientWidth
                    && tabs.every((tab) => { const r = tab.getBoundingClientRect(); return r.left >= 0 && r.right <= innerWidth; });
            """, nav)
            assert fits, f"{nav} in {language}: a type tab is cut off"
    switch_language(runner, "zh")


def test_every_form_error_is_in_the_apps_own_words(people, site, checked):
    publisher = people["publisher"]
    hour = 3600 * 1000

    def refused(kind, fields, field, words, *, setup=None):
        open_tab(publisher, "find", kind)
        form = f"find-{kind}"
        if setup:
            setup(form)
        for name, value in fields.items():
            if name in ("deadline", "details.closes_at"):
                set_value(publisher, fid(form, name), local_input(publisher, value))
            else:
                publisher.type(fid(form, name), value)
        publisher.click("#find-submit")
        publisher.text_of(fid(form, field) + "-error", words)
        no_english(publisher)

    express = {"details.pickup_station": "南门驿站", "details.drop_off_place": "3 号楼"}
    refused("express", {**express, "tip": "600"}, "tip", "小费最多 ¥500")
    look(publisher, "find/express with an error", checked)
    refused("express", {"tip": "3", "deadline": -hour}, "deadline", "截止时间必须晚于现在")
    refused("express", {"deadline": 40 * 24 * hour}, "deadline", "截止时间最晚")
    refused("express", {"deadline": 2 * hour, "details.contact_phone": "12345"}, "details.contact_phone", "联系电话格式不对")
    publisher.type(fid("find-express", "details.contact_phone"), "13912345678")
    purchase = {"details.items[0].name": "矿泉水", "details.drop_off_place": "图书馆", "tip": "2"}
    refused("purchase", {**purchase, "details.items[0].qty": "100"}, "details.items[0].qty", "数量须在 1 到 99 之间")
    refused("purchase", {"details.items[0].qty": "2", "details.goods_budget": "3000"}, "details.goods_budget", "商品预算最多 ¥2000")
    look(publisher, "find/purchase with an error", checked)
    group = {"details.subject": "东门 → 高铁站", "details.price_per_share": "15"}
    refused("group", {**group, "details.capacity": "1"}, "details.capacity", "名额须在 2 到 50 之间")
    refused("group", {"details.capacity": "4", "details.minimum_fill": "5"}, "details.minimum_fill", "最少成团人数须在 1 到 4 之间")
    refused("group", {"details.minimum_fill": "2", "details.price_per_share": "600"}, "details.price_per_share", "每份价格最多 ¥500")
    refused("group", {"details.price_per_share": "15", "details.closes_at": 5 * hour, "deadline": 4 * hour},
            "details.closes_at", "截止加入时间不能晚于截止时间")
    look(publisher, "find/group with an error", checked)
    refused("bounty", {"details.title": "帮忙取外卖", "details.description": "送到 5 号楼", "tip": "500.01"}, "tip", "小费最多 ¥500")

    # The order page: a tip not above the current one, above the cap; cancelling a held order
    # without a reason; delivering without the code.
    runner = people["runner"]
    order_id = publish(publisher, "express", {**express, "tip": "3"}, delivery_code=True)
    publisher.click("#action-raise-tip")
    for tip, words in (("3", "新的小费要比现在的 ¥3 高"), ("600", "小费最多 ¥500")):
        publisher.type(fid(f"order-{order_id}-ui", "tip"), tip)
        publisher.click("#raise-tip-confirm")
        publisher.text_of("#tip-panel", words)
        no_english(publisher)
    look(publisher, "order (publisher, open, tip panel)", checked)
    open_tab(runner, "discover", "express")
    runner.click(f'{board_card(order_id)} button.accept')
    status_is(publisher, "accepted")
    publisher.click("#action-cancel")
    publisher.click("#cancel-confirm")
    publisher.text_of("#cancel-panel", "跑腿已经接单，取消时请写明原因")
    no_english(publisher)
    look(publisher, "order (publisher, cancel panel)", checked)
    runner.click("#action-pick-up")
    runner.click("#action-deliver")
    runner.text_of("#deliver-panel", "请填写发布者给你的收货码")
    no_english(runner)
    look(runner, "order (runner, deliver panel)", checked)
    publisher.driver.execute_script("window.heldOrder = arguments[0]", order_id)

    # The personal centre's forms.
    publisher.go("#/me/profile")
    publisher.type(fid("me-profile", "nickname"), " ")
    publisher.click("#profile-save")
    publisher.text_of(fid("me-profile", "nickname") + "-error", "昵称必填")
    no_english(publisher)
    publisher.go("#/me/password")
    publisher.type(fid("me-password", "new_password"), "short")
    publisher.type(fid("me-password", "repeat"), "short")
    publisher.click("#password-save")
    publisher.text_of(fid("me-password", "new_password") + "-error", "密码需要 8–")
    no_english(publisher)
    publisher.go("#/me/verify")
    publisher.type(fid("me-verify", "real_name"), "王同学")
    publisher.type(fid("me-verify", "student_id"), "学号 42")
    publisher.click("#verify-submit")
    publisher.text_of(fid("me-verify", "student_id") + "-error", "学号只能包含字母、数字和短横线")
    no_english(publisher)
    publisher.go("#/me/feedback")
    publisher.click("#feedback-submit")
    publisher.text_of(fid("me-feedback", "text") + "-error", "反馈内容必填")
    no_english(publisher)
    publisher.go("#/me/phone")
    publisher.type(fid("me-phone", "phone"), "12345")
    publisher.click("#phone-send-code")
    publisher.text_of(fid("me-phone", "phone") + "-error", "手机号格式不对")
    no_english(publisher)

    # The console: a look-up by a phone that is not one.
    admin = people["admin"]
    admin.click("#console-tab-lookup")
    admin.type(fid("lookup-user", "query"), "abc")
    admin.click("#lookup-user-submit")
    admin.text_of("#lookup-user--error", "手机号格式不对")
    no_english(admin)
    look(admin, "console lookup with an error", checked)

    # The same refusals in English are English words of the app, with the limit in them.
    switch_language(publisher, "en")
    open_tab(publisher, "find", "express")
    for name, value in {**express, "tip": "600"}.items():
        publisher.type(fid("find-express", name), value)
    publisher.click("#find-submit")
    publisher.text_of(fid("find-express", "tip") + "-error", "Tip: at most ¥500")
    switch_language(publisher, "zh")


def test_the_wire_says_the_limit_the_app_words(site, people):
    """The bound the words above are made from is on the wire, as the schema says (the client
    validates every reply against protocol/schemas)."""
    client, _ = as_user(site, people["publisher"])
    with client:
        error = client.error("order.publish", {"type": "bounty", "campus": CAMPUSES[0], "tip": 50001,
                                               "deadline": int(time.time() * 1000) + 3600_000,
                                               "details": {"title": "x", "description": "y"}})
        assert (error["code"], error["field"], error.get("max"), error.get("min")) == ("invalid_field", "tip", 50000, None)
        error = client.error("profile.update", {"nickname": "字" * 21})
        assert (error["field"], error.get("max")) == ("nickname", 20)


def test_a_rating_is_announced_to_whoever_was_rated_and_never_to_the_rater(people, site, checked):
    publisher, runner = people["publisher"], people["runner"]
    order_id = publish(publisher, "bounty", {"details.title": "帮忙拿快递", "details.description": "放到 3 号楼门口", "tip": "4"})
    open_tab(runner, "discover", "bounty")
    runner.click(f'{board_card(order_id)} button.accept')
    runner.click("#action-start")
    runner.click("#action-deliver")
    publisher.click("#action-confirm")
    status_is(runner, "completed")

    publisher.click("#rate-submit")                       # no stars yet: the page asks for them …
    publisher.text_of("#rate-stars-error", "请选择星级")
    look(publisher, "order (publisher, rate panel)", checked)
    publisher.click("#rate-star-4")                       # … and stops asking once they are picked
    publisher.gone("#rate-stars-error")

    before = personal_seq(publisher)
    publisher.click("#rate-submit")
    wait_notice(runner, f"订单 {order_id} 收到了评价")
    publisher.wait(lambda d: personal_seq(publisher) > before, "the rating's event on the rater's own page")
    assert not any("收到了评价" in n["text"] for n in seen(publisher)["notices"]), seen(publisher)["notices"]

    before = personal_seq(runner)
    runner.click("#rate-star-5")
    runner.click("#rate-submit")
    wait_notice(publisher, f"订单 {order_id} 收到了评价")
    runner.wait(lambda d: personal_seq(runner) > before, "the rating's event on the runner's page")
    assert sum("收到了评价" in n["text"] for n in seen(runner)["notices"]) == 1, seen(runner)["notices"]
    publisher.text_of("#order-ratings", "★★★★★")


def test_one_notice_at_a_time_out_of_the_way_of_the_controls(people, site, checked):
    publisher, runner = people["publisher"], people["runner"]
    order_id = publish(publisher, "express", {"details.pickup_station": "西门驿站", "details.drop_off_place": "8 号楼", "tip": "2"})
    publisher.driver.execute_script("window.__seen.mostNotices = 0")
    client, _ = as_user(site, runner)
    with client:                                          # three changes in a row, from the runner's phone
        client.ok("order.accept", {"order_id": order_id})
        client.ok("order.pick_up", {"order_id": order_id})
        client.ok("order.deliver", {"order_id": order_id})
    status_is(publisher, "delivered")
    notice = publisher.element(".toast")
    publisher.text_of(".toast", f"订单 {order_id} 已送达")   # the newest one is the one showing
    assert seen(publisher)["mostNotices"] == 1, seen(publisher)
    overlaps = publisher.driver.execute_script("""
        const notice = arguments[0].getBoundingClientRect();
        const controls = document.querySelectorAll('main a[href], main button, main input, main select, main textarea, .tabbar a');
        return [...controls].filter((c) => {
            const r = c.getBoundingClientRect();
            return r.width > 0 && r.left < notice.right && r.right > notice.left && r.top < notice.bottom && r.bottom > notice.top;
        }).map((c) => c.id || c.textContent.trim());
    """, notice)
    assert overlaps == [], f"the notice covers {overlaps}"
    look(publisher, "order with a notice", checked)
    publisher.screenshot(str(SHOTS / "zh-order-notice.png"))   # with the notice, unlike `shot`
    publisher.click("#action-confirm")


def test_a_reloaded_order_page_never_shows_a_user_id_for_a_name(people, checked):
    publisher = people["publisher"]
    order_id = publisher.driver.execute_script("return window.heldOrder")
    open_order(publisher, order_id)
    publisher.driver.refresh()
    publisher.element(f'main.order[data-order-id="{order_id}"]')
    publisher.wait(lambda d: (lambda text: text.strip() and "加载中" not in text)(publisher.find("#order-runner").text),
                   "the runner's name")
    texts = seen(publisher)["runner"]
    assert texts and not any(re.search(r"#\d", text) for text in texts), texts


def test_the_remaining_pages_are_thumb_sized_and_pass_axe(people, site, checked):
    publisher, runner, admin = people["publisher"], people["runner"], people["admin"]
    for tab in ("published", "accepted", "history"):
        publisher.go(f"#/orders/{tab}")
        publisher.element(f"#orders-tab-{tab}[aria-selected='true']")
        look(publisher, f"orders/{tab}", checked)
    for kind in ("express", "purchase", "bounty", "group"):
        open_tab(runner, "discover", kind)
        look(runner, f"discover/{kind}", checked)
        open_tab(publisher, "find", kind)
        look(publisher, f"find/{kind}", checked)
    client, _ = as_user(site, publisher)
    with client:
        client.ok("order.publish", {"type": "express", "campus": CAMPUSES[0], "tip": 300,
                                    "deadline": int(time.time() * 1000) + 3600_000,
                                    "details": {"pickup_station": "北门驿站", "drop_off_place": "6 号楼"}})
    open_tab(runner, "discover", "express")
    runner.element("#board-list button.accept")
    look(runner, "discover with cards", checked)
    switch_language(runner, "en")
    look(runner, "discover (en)", checked)
    switch_language(runner, "zh")
    for tab in ("overview", "feedback"):
        admin.click(f"#console-tab-{tab}")
        admin.element(f"#console-tab-{tab}[aria-selected='true']")
        look(admin, f"console {tab}", checked)


def test_the_keyboard_sees_where_it_is_on_every_control(people):
    """Tab through the Discover page and the console: each control the focus lands on shows a
    ring of at least 2 px, from the first control to the last."""
    from selenium.webdriver.common.keys import Keys
    for browser, fragment in ((people["runner"], "#/discover/express"), (people["admin"], "#/lookup")):
        browser.go(fragment)
        browser.element("main")
        # From the first control of the page (the brand link in the header) the keyboard moves on;
        # a focus a script gives shows no ring by design, so the check starts at the next one.
        browser.driver.execute_script("document.querySelector('header a[href]').focus()")
        browser.driver.switch_to.active_element.send_keys(Keys.TAB)
        seen_controls = []
        for _ in range(30):
            ring = browser.driver.execute_script("""
                const e = document.activeElement;
                if (!e || e === document.body) return null;
                const style = getComputedStyle(e);
                return [e.id || e.tagName + ':' + e.textContent.trim().slice(0, 20), style.outlineStyle, parseFloat(style.outlineWidth)];
            """)
            if ring is None:                               # past the last control, to the browser's own
                break
            name, style, width = ring
            assert style != "none" and width >= 2, f"{browser.name}: {name} shows no focus ring ({style} {width}px)"
            if name in seen_controls:
                break
            seen_controls.append(name)
            browser.driver.switch_to.active_element.send_keys(Keys.TAB)
        assert len(seen_controls) >= 8, seen_controls


def test_offline_pages_and_the_console_header_keep_one_line(people, site, checked):
    runner, admin = people["runner"], people["admin"]
    row_height = "return document.querySelector('.console-bar .topbar-row').getBoundingClientRect().height"
    online = admin.driver.execute_script(row_height)
    site.stop()
    try:
        runner.attribute("#conn-state", "data-state", "offline")
        admin.attribute("#conn-state", "data-state", "offline")
        runner.element("#conn-retry")
        look(runner, "offline (app)", checked)
        assert admin.driver.execute_script(row_height) == online, "the console's header grew a line offline"
        look(admin, "offline (console)", checked)
        shot(admin, "console-offline")
        admin.click("#admin-logout")                      # logged out, still offline: one line too
        admin.element(fid("admin-login-code", "phone"))
        assert admin.driver.execute_script(row_height) == online
        look(admin, "console login offline", checked)
    finally:
        site.start()
    runner.attribute("#conn-state", "data-state", "online", timeout=30)
    expected = {"login", "login (en)", "login by password", "me", "find/express", "discover/express", "orders/history",
                "order with a notice", "order (publisher, rate panel)", "console verifications", "console lookup with an error",
                "console overview", "offline (app)", "offline (console)"}
    assert expected <= checked, expected - checked
