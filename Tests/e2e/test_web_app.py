"""The web app and the operator console in real headless Chromium, driven by clicking and
typing as people would (the protocol is used only to check results). A publisher, two runners
and an administrator, each in their own browser (their own localStorage, like four phones),
against one server; the tests run in order and build on each other.

The run also saves a screenshot of every module at 390×844, in Chinese and English, into
.build/screenshots/; `BANGBANG_SCREENSHOTS=docs/screenshots` refreshes the copies README.md shows."""
import os
import pathlib
import re
import tempfile

import pytest

from bbclient import ServerProcess, fresh_phone
from browser import Browser, chromium_paths
from conftest import server_binary

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHOTS = pathlib.Path(os.environ.get("BANGBANG_SCREENSHOTS", ROOT / ".build" / "screenshots"))
ADMIN_PHONE = "+8613000000000"
CAMPUSES = ["东校区", "西校区"]
SERVER_FLAGS = ["--dev", "--fsync", "never", "--admin-phone", ADMIN_PHONE, "--support-phone", "+864001234567",
                "--sms-per-ip-hourly", "0", "--web-dir", str(ROOT / "web"),
                *[flag for campus in CAMPUSES for flag in ("--campus", campus)]]


def fid(form, name):
    """The id the app gives the field `name` of `form` (see fieldId in web/js/ui/components.js)."""
    return "#" + form + "--" + re.sub(r"[^\w-]", "-", name)


class Site:
    """The server under test, restartable on the same port and data directory."""

    def __init__(self, folder):
        self.folder = folder
        self.process = ServerProcess.start(server_binary(), folder, SERVER_FLAGS)
        self.port = self.process.port

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def restart(self):
        self.process.stop()
        self.process = ServerProcess.start(server_binary(), self.folder, SERVER_FLAGS, port=self.port)

    def stop(self):
        self.process.stop()

    def start(self):
        self.process = ServerProcess.start(server_binary(), self.folder, SERVER_FLAGS, port=self.port)


@pytest.fixture(scope="module")
def site():
    assert all(chromium_paths()), "chromium and chromedriver are needed: scripts/bootstrap.sh installs them"
    with tempfile.TemporaryDirectory(prefix="bangbang-web-e2e-") as folder:
        running = Site(folder)
        try:
            yield running
        finally:
            running.stop()


@pytest.fixture(scope="module")
def people(site):
    browsers = {}
    try:
        for name in ("publisher", "runner", "rival", "admin"):
            browsers[name] = Browser(site.url, name)
        yield browsers
    finally:
        for browser in browsers.values():
            browser.quit()


def shot(browser, name, full=False):
    """SHOTS/<language>-<name>.png of what the browser shows now."""
    language = browser.driver.execute_script("return document.documentElement.lang.startsWith('zh') ? 'zh' : 'en'")
    path = str(SHOTS / f"{language}-{name}.png")
    browser.wait(lambda d: d.execute_script("return document.fonts.status") == "loaded", "fonts")
    browser.gone(".toast", timeout=10)              # passing messages are not part of the screen
    if full:
        browser.full_screenshot(path)
    else:
        browser.screenshot(path)


def switch_language(browser, language):
    current = browser.driver.execute_script("return document.documentElement.lang")
    if current.startswith(language):
        return
    browser.click("#lang-switch")
    browser.wait(lambda d: d.execute_script("return document.documentElement.lang").startswith(language), f"language {language}")


def log_in(browser, phone):
    browser.open("/")
    browser.type(fid("login-code", "phone"), phone)
    browser.click("#login-send-code")
    code = browser.element("#dev-code").text          # what the page shows a newcomer in dev mode
    assert re.fullmatch(r"\d{6}", code), code
    browser.type(fid("login-code", "code"), code)
    browser.click("#login-submit")
    browser.element("#nav-discover")
    browser.attribute("#conn-state", "data-state", "online")
    # Marks this page load: a test that later finds the mark gone knows the page was reloaded.
    browser.driver.execute_script("window.pageLoadMark = 'kept'")


def still_same_page(browser):
    assert browser.driver.execute_script("return window.pageLoadMark") == "kept", f"{browser.name} reloaded"


def open_tab(browser, nav, tab=None):
    browser.click(f"#nav-{nav}")
    if tab:
        browser.click(f"#{nav}-type-{tab}" if nav in ("find", "discover") else f"#orders-tab-{tab}")


def board_card(order_id):
    return f'#board-list article[data-order-id="{order_id}"]'


def publish(browser, kind, fields, delivery_code=False, campus=CAMPUSES[0]):
    """Fills the Find form of `kind` (`fields` maps server field paths to what to type) and
    publishes; returns the new order's id from the order page it lands on."""
    open_tab(browser, "find", kind)
    form = f"find-{kind}"
    browser.choose(fid(form, "campus"), campus)
    for name, value in fields.items():
        element = browser.element(fid(form, name))
        if element.tag_name == "select":
            browser.choose(fid(form, name), value)
        else:
            browser.type(fid(form, name), value)
    if delivery_code:
        browser.click(fid(form, "delivery_code"))
    browser.click("#find-submit")
    page = browser.element("main.order[data-order-id]")
    return int(page.get_attribute("data-order-id"))


def status_is(browser, status):
    browser.attribute("#order-status", "data-status", status)


def open_order(browser, order_id):
    browser.go(f"#/order/{order_id}")
    browser.element(f'main.order[data-order-id="{order_id}"]')


# ---------------------------------------------------------------------------------------------

def test_everyone_logs_in_with_the_code_the_dev_server_shows(people):
    publisher = people["publisher"]
    publisher.open("/")
    publisher.element(fid("login-code", "phone"))
    shot(publisher, "login")
    switch_language(publisher, "en")
    publisher.type(fid("login-code", "phone"), fresh_phone())
    publisher.click("#login-send-code")
    publisher.element("#dev-code")
    shot(publisher, "login")
    switch_language(publisher, "zh")
    shot(publisher, "login-code")
    for name in ("publisher", "runner", "rival"):
        log_in(people[name], fresh_phone())
    assert "帮帮" in publisher.driver.title
    for browser in people.values():
        assert browser.console_errors() == [], browser.name


def test_a_user_who_is_not_verified_sees_the_way_to_verification(people):
    runner = people["runner"]
    open_tab(runner, "discover", "express")
    runner.element("#discover-verify-link")
    runner.click("#discover-verify-link")
    runner.attribute("#verify-status", "data-status", "none")


def test_runners_apply_and_the_console_approves_them_live(people):
    for name, real_name in (("runner", "李跑跑"), ("rival", "王快快")):
        browser = people[name]
        browser.go("#/me/verify")
        browser.type(fid("me-verify", "real_name"), real_name)
        browser.type(fid("me-verify", "student_id"), f"2026-{len(real_name)}{ord(real_name[0]) % 1000}")
        browser.choose(fid("me-verify", "school"), CAMPUSES[0])
        browser.click("#verify-submit")
        browser.attribute("#verify-status", "data-status", "pending")
    shot(people["runner"], "me-verify-pending")

    admin = people["admin"]
    admin.resize((1280, 860))
    admin.open("/admin/")
    admin.type(fid("admin-login-code", "phone"), ADMIN_PHONE)
    admin.click("#admin-send-code")
    admin.type(fid("admin-login-code", "code"), admin.element("#dev-code").text)
    admin.click("#admin-login-submit")
    admin.click("#console-tab-verifications")
    admin.text_of("#pending-list", "李跑跑")
    admin.text_of("#pending-list", "王快快")
    shot(admin, "console-verifications")

    for name, real_name in (("runner", "李跑跑"), ("rival", "王快快")):
        row = admin.wait(lambda d: next((e for e in admin.find_all("#pending-list li") if real_name in e.text), None), real_name)
        user_id = row.get_attribute("data-user-id")
        admin.click(f"#approve-{user_id}")
        admin.gone(f'#pending-list li[data-user-id="{user_id}"]')
        # The applicant's page changes by itself, without a reload.
        people[name].attribute("#verify-status", "data-status", "approved")
        still_same_page(people[name])
    shot(people["runner"], "me-verify-approved")


def test_an_express_errand_end_to_end_live_on_both_pages(people, site):
    publisher, runner, rival = people["publisher"], people["runner"], people["rival"]
    open_tab(runner, "discover", "express")
    open_tab(rival, "discover", "express")
    runner.element("#board-empty")
    order_id = publish(publisher, "express", {
        "details.pickup_station": "菜鸟驿站 3 号柜", "details.pickup_code": "8-2-1043", "details.parcel_size": "medium",
        "details.drop_off_place": "7 号宿舍楼", "details.drop_off_room": "512", "details.contact_phone": "13812345678",
        "tip": "3.5"})
    status_is(publisher, "open")
    # Both runners' boards show it without a reload, without the private fields.
    for browser in (runner, rival):
        card = browser.element(board_card(order_id))
        assert "菜鸟驿站 3 号柜" in card.text and "¥3.50" in card.text
        assert "8-2-1043" not in browser.text()

    runner.click(f'{board_card(order_id)} button.accept')
    runner.element(f'main.order[data-order-id="{order_id}"]')
    status_is(runner, "accepted")
    runner.text_of("main.order", "8-2-1043")            # the runner now sees the pickup code
    status_is(publisher, "accepted")                    # the publisher's page moves by itself
    rival.gone(board_card(order_id))                    # and it leaves the other runner's board

    runner.click("#action-pick-up")
    status_is(publisher, "picked_up")
    runner.click("#action-deliver")
    status_is(publisher, "delivered")
    publisher.text_of("#order-note", "确认收货")
    publisher.click("#action-confirm")
    status_is(runner, "completed")
    status_is(publisher, "completed")

    publisher.click("#rate-star-5")
    publisher.type(fid(f"order-{order_id}-ui", "comment"), "很快，谢谢！")
    publisher.click("#rate-submit")
    runner.text_of("#order-ratings", "很快，谢谢！")
    runner.click("#rate-star-4")
    runner.click("#rate-submit")
    publisher.element("#order-ratings")
    publisher.text_of("#order-ratings", "★★★★☆")
    for browser in (publisher, runner, rival):
        still_same_page(browser)


def test_a_purchase_completes_with_the_delivery_code(people):
    publisher, runner = people["publisher"], people["runner"]
    open_tab(runner, "discover", "purchase")
    open_tab(publisher, "find", "purchase")
    publisher.click("#add-item")
    order_id = publish(publisher, "purchase", {
        "details.items[0].name": "矿泉水", "details.items[0].qty": "2",
        "details.items[1].name": "面包", "details.items[1].qty": "1", "details.items[1].note": "全麦",
        "details.store": "校园超市", "details.goods_budget": "20", "details.drop_off_place": "图书馆",
        "tip": "4"}, delivery_code=True)
    code = publisher.element("#delivery-code").text
    assert re.fullmatch(r"\d{4}", code), code
    runner.click(f'{board_card(order_id)} button.accept')
    status_is(publisher, "accepted")
    runner.click("#action-pick-up")
    status_is(publisher, "picked_up")
    wrong = "0000" if code != "0000" else "1111"
    runner.type(fid(f"order-{order_id}-ui", "code"), wrong)
    runner.click("#action-deliver")
    runner.text_of("#deliver-panel", "收货码不对")     # the server's error, at the field
    status_is(publisher, "picked_up")
    runner.type(fid(f"order-{order_id}-ui", "code"), code)
    runner.click("#action-deliver")
    status_is(runner, "completed")
    status_is(publisher, "completed")


def test_a_bounty_runs_accept_start_deliver_confirm(people):
    publisher, runner = people["publisher"], people["runner"]
    open_tab(runner, "discover", "bounty")
    order_id = publish(publisher, "bounty", {
        "details.title": "帮忙搬一个箱子", "details.description": "从东门搬到 3 号楼，大约 10 公斤", "details.place": "东门", "tip": "10"})
    runner.click(f'{board_card(order_id)} button.accept')
    status_is(publisher, "accepted")
    runner.click("#action-start")
    status_is(publisher, "in_progress")
    runner.click("#action-deliver")
    status_is(publisher, "delivered")
    publisher.click("#action-confirm")
    status_is(runner, "completed")


def test_a_group_fills_with_two_joiners_and_the_publisher_completes_it(people):
    publisher, runner, rival = people["publisher"], people["runner"], people["rival"]
    open_tab(runner, "discover", "group")
    open_tab(rival, "discover", "group")
    open_tab(publisher, "find", "group")                # the server's field error shows at its field
    publisher.type(fid("find-group", "details.subject"), "东门 → 高铁站")
    publisher.type(fid("find-group", "details.capacity"), "1")
    publisher.type(fid("find-group", "details.price_per_share"), "15")
    publisher.click("#find-submit")
    publisher.element(f'{fid("find-group", "details.capacity")}[aria-invalid="true"]')
    publisher.element(f'{fid("find-group", "details.capacity")}-error')
    order_id = publish(publisher, "group", {
        "details.kind": "carpool", "details.subject": "东门 → 高铁站", "details.capacity": "2", "details.price_per_share": "15"})
    runner.click(f'{board_card(order_id)} button.join')
    runner.element(f'main.order[data-order-id="{order_id}"]')
    publisher.text_of("#order-participants", "")
    rival.text_of(board_card(order_id), "1/2")          # the join reached the other board live
    rival.click(f'{board_card(order_id)} button.join')
    status_is(publisher, "full")
    status_is(runner, "full")
    publisher.click("#action-complete")
    status_is(runner, "completed")
    status_is(rival, "completed")


def test_a_third_runner_loses_the_race_and_is_told(people):
    publisher, runner, rival = people["publisher"], people["runner"], people["rival"]
    open_tab(runner, "discover", "express")
    open_tab(rival, "discover", "express")
    order_id = publish(publisher, "express", {
        "details.pickup_station": "南门快递点", "details.drop_off_place": "5 号楼", "tip": "2"})
    rival.click(f"{board_card(order_id)} a.card-main")   # reads the details first …
    rival.element("#action-accept")
    runner.click(f'{board_card(order_id)} button.accept')  # … while the runner takes it
    status_is(publisher, "accepted")
    rival.click("#action-accept")
    rival.text_of("#order-actions", "")
    # The order's page re-renders when the accept's push arrives, so the error line is read by a
    # wait that finds it again, not through an element found before.
    rival.text_of(f"#order-{order_id}--error", "手慢了")
    rival.attribute("main.order", "data-status", "accepted")   # and the page shows it is taken
    runner.click("#action-abandon")                     # gives it back: open again, on every board
    status_is(publisher, "open")
    rival.go("#/discover/express")
    rival.element(board_card(order_id))

    publisher.click("#action-raise-tip")                # 加小费: the boards show the new tip live
    publisher.type(fid(f"order-{order_id}-ui", "tip"), "1")
    publisher.click("#raise-tip-confirm")
    publisher.element(f'{fid(f"order-{order_id}-ui", "tip")}[aria-invalid="true"]')   # not above ¥2
    publisher.type(fid(f"order-{order_id}-ui", "tip"), "6")
    publisher.click("#raise-tip-confirm")
    rival.text_of(board_card(order_id), "¥6")
    publisher.click("#action-cancel")                   # open: free, no reason needed
    publisher.text_of("#cancel-wording", "免费")
    publisher.click("#cancel-confirm")
    status_is(publisher, "cancelled")
    rival.gone(board_card(order_id))


def test_the_server_restarts_mid_errand_and_both_pages_catch_up(people, site):
    publisher, runner = people["publisher"], people["runner"]
    order_id = publish(publisher, "bounty", {
        "details.title": "取一份打印的资料", "details.description": "打印店取 20 页资料送到实验楼", "tip": "5"})
    open_tab(runner, "discover", "bounty")
    runner.click(f'{board_card(order_id)} button.accept')
    status_is(publisher, "accepted")

    site.stop()
    publisher.attribute("#conn-state", "data-state", "offline")
    runner.attribute("#conn-state", "data-state", "offline")
    shot(publisher, "order-offline")
    publisher.offline(True)                             # the publisher's phone is out of coverage
    site.start()
    runner.attribute("#conn-state", "data-state", "online", timeout=30)
    runner.click("#action-start")                       # happens while the publisher is away
    status_is(runner, "in_progress")
    status_is(publisher, "accepted")
    publisher.offline(False)
    publisher.attribute("#conn-state", "data-state", "online", timeout=30)
    status_is(publisher, "in_progress")                 # caught up from the replay, no reload
    runner.click("#action-deliver")
    status_is(publisher, "delivered")
    publisher.click("#action-confirm")
    status_is(runner, "completed")
    for browser in (publisher, runner):
        still_same_page(browser)


def test_screenshots_of_every_module_in_both_languages(people):
    publisher, runner, admin = people["publisher"], people["runner"], people["admin"]
    # Some open orders for the boards and an active one with a delivery code for the order page.
    publish(publisher, "express", {"details.pickup_station": "菜鸟驿站 1 号柜", "details.drop_off_place": "9 号楼",
                                   "details.parcel_size": "large", "tip": "5"})
    publish(publisher, "express", {"details.pickup_station": "京东快递点", "details.drop_off_place": "图书馆北门", "tip": "3"},
            campus=CAMPUSES[1])
    active = publish(publisher, "express", {"details.pickup_station": "顺丰站", "details.pickup_code": "6-1-2208",
                                            "details.drop_off_place": "11 号宿舍楼", "details.drop_off_room": "304",
                                            "tip": "4"}, delivery_code=True)
    open_tab(runner, "discover", "express")
    runner.click(f'{board_card(active)} button.accept')
    status_is(publisher, "accepted")
    # Filters: a keyword, then a campus, each narrowing the live list.
    open_tab(runner, "discover", "express")
    cards = lambda: len(runner.find_all("#board-list article"))
    runner.wait(lambda d: cards() >= 2, "two open express orders")
    runner.type("#filter-keyword", "京东\n")
    runner.wait(lambda d: cards() == 1 and "京东快递点" in runner.find("#board-list").text, "the keyword filter")
    runner.type("#filter-keyword", "\n")                 # emptied: no keyword
    runner.wait(lambda d: cards() >= 2, "the keyword cleared")
    runner.choose("#filter-campus", CAMPUSES[1])
    runner.wait(lambda d: cards() == 1 and "京东快递点" in runner.find("#board-list").text, "the campus filter")
    runner.choose("#filter-campus", "")
    runner.wait(lambda d: cards() >= 2, "all campuses again")
    for language in ("zh", "en"):
        for browser in (publisher, runner, admin):
            switch_language(browser, language) if browser is not admin else None
        open_tab(publisher, "find", "express")
        shot(publisher, "find-express", full=True)
        open_tab(publisher, "find", "group")
        shot(publisher, "find-group", full=True)
        open_tab(runner, "discover", "express")
        runner.element("#board-list")
        shot(runner, "discover")
        open_tab(publisher, "orders", "published")
        publisher.element("#orders-list")
        shot(publisher, "orders")
        open_order(publisher, active)
        publisher.element("#delivery-code")
        publisher.click("#action-cancel")
        publisher.element("#cancel-wording")
        shot(publisher, "order-publisher", full=True)
        publisher.click("#action-cancel")
        open_order(runner, active)
        shot(runner, "order-runner", full=True)
        open_tab(publisher, "me")
        shot(publisher, "me")
    switch_language(admin, "zh")
    admin.click("#console-tab-overview")
    admin.text_of("#figure-publishes", "")
    admin.wait(lambda d: admin.find("#figure-publishes .figure-value").text not in ("", "0", "…"), "publishes counted")
    shot(admin, "console-overview")
    switch_language(admin, "en")
    shot(admin, "console-overview")
    for browser in people.values():
        switch_language(browser, "zh")
        assert browser.console_errors() == [], browser.name

    # Cancelling an order a runner holds needs a reason, which the runner's page shows at once.
    open_order(publisher, active)
    publisher.click("#action-cancel")
    publisher.text_of("#cancel-wording", "宽限期")
    publisher.click("#cancel-confirm")
    publisher.element(f'{fid(f"order-{active}-ui", "reason")}')
    publisher.text_of("#cancel-panel", "")
    publisher.element("#cancel-panel .field-error")
    publisher.type(fid(f"order-{active}-ui", "reason"), "临时有事，不需要了")
    publisher.click("#cancel-confirm")
    status_is(runner, "cancelled")
    runner.text_of("#order-note", "临时有事，不需要了")


def test_the_personal_centre_profile_phone_password_feedback(people):
    publisher, admin = people["publisher"], people["admin"]
    open_tab(publisher, "me")
    publisher.click("#me-edit-profile")
    publisher.type(fid("me-profile", "nickname"), "小王同学")
    publisher.choose(fid("me-profile", "campus"), CAMPUSES[1])
    publisher.type(fid("me-profile", "dorm"), "11 号楼")
    shot(publisher, "me-profile")
    publisher.click("#profile-save")
    publisher.text_of("#me-nickname", "小王同学")

    new_phone = fresh_phone()
    publisher.click("#me-change-phone")
    publisher.type(fid("me-phone", "phone"), new_phone)
    publisher.click("#phone-send-code")
    publisher.type(fid("me-phone", "code"), publisher.element("#dev-code").text)
    publisher.click("#phone-submit")
    digits = new_phone[3:]
    publisher.text_of("#me-phone", f"{digits[:3]} {digits[3:7]} {digits[7:]}")

    publisher.click("#me-password")
    publisher.type(fid("me-password", "new_password"), "short")
    publisher.type(fid("me-password", "repeat"), "short")
    publisher.click("#password-save")
    publisher.element(f'{fid("me-password", "new_password")}[aria-invalid="true"]')   # the server's field error
    publisher.type(fid("me-password", "new_password"), "bangbang-2026")
    publisher.type(fid("me-password", "repeat"), "bangbang-2026")
    publisher.click("#password-save")
    publisher.text_of("#me-password", "修改密码")

    publisher.click("#me-feedback")
    publisher.type(fid("me-feedback", "text"), "希望增加夜间配送的时段")
    publisher.type(fid("me-feedback", "contact"), "wx: xiaowang")
    publisher.click("#feedback-submit")
    publisher.text_of("#me-feedback--notice", "感谢反馈")
    admin.click("#console-tab-feedback")
    admin.text_of("#feedback-list", "希望增加夜间配送的时段")
    shot(admin, "console-feedback")
    admin.click("#console-tab-lookup")
    admin.type(fid("lookup-user", "query"), new_phone)
    admin.click("#lookup-user-submit")
    admin.text_of("#lookup-user-result", "小王同学")
    shot(admin, "console-lookup")
    publisher.driver.execute_script("window.publisherPhone = arguments[0]", new_phone)


def test_password_login_and_revoking_a_device_logs_it_out_live(people):
    publisher, rival = people["publisher"], people["rival"]
    phone = publisher.driver.execute_script("return window.publisherPhone")
    open_tab(rival, "me")
    rival.click("#logout")
    rival.click("#login-mode-password")
    rival.type(fid("login-password", "phone"), phone)
    rival.type(fid("login-password", "password"), "wrong-password")
    rival.click("#login-password-submit")
    rival.text_of("#login-password--error", "手机号或密码不正确")
    rival.type(fid("login-password", "password"), "bangbang-2026")
    rival.click("#login-password-submit")
    open_tab(rival, "me")
    rival.text_of("#me-nickname", "小王同学")

    open_tab(publisher, "me")
    publisher.click("#me-devices")
    publisher.wait(lambda d: len(publisher.find_all("#devices-list li")) == 2, "two devices")
    shot(publisher, "me-devices")
    other = publisher.wait(lambda d: next((row.get_attribute("data-session-id") for row in publisher.find_all("#devices-list li")
                                           if "本机" not in row.text), None), "the other device")
    publisher.click(f"#revoke-{other}")
    rival.text_of("#login-notice", "退出登录")          # logged out by the other device, live
    rival.element("#login-mode-code")
    publisher.wait(lambda d: len(publisher.find_all("#devices-list li")) == 1, "one device left")


def test_the_operator_secret_logs_the_console_in_from_loopback(people, site):
    admin = people["admin"]
    admin.click("#admin-logout")
    admin.click("#admin-mode-secret")
    secret = pathlib.Path(site.folder, "data", "admin-secret").read_text().strip()
    admin.type(fid("admin-login-secret", "secret"), "0" * 64)
    admin.click("#admin-secret-submit")
    admin.text_of(fid("admin-login-secret", "secret") + "-error", "运维密钥不对")
    shot(admin, "console-wrong-secret")
    admin.type(fid("admin-login-secret", "secret"), secret)
    admin.click("#admin-secret-submit")
    admin.text_of("#admin-who", "运维")
    admin.click("#console-tab-overview")
    admin.wait(lambda d: admin.find("#figure-connections .figure-value").text not in ("", "…"), "connections shown")
    assert int(admin.find("#figure-users .figure-value").text) >= 1
    admin.click("#console-tab-verifications")
    admin.element("#pending-empty")
    for browser in people.values():
        assert browser.console_errors() == [], browser.name
