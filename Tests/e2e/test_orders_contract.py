"""Orders as the 2026-12-01 contract has them (protocol/README.md, "Changelog"): campuses checked
against the configured ones, group orders without tip or delivery code, contact phones as
account phones, `keyword` without the campus, `orders.mine` paged by cursor, and the order rules
as settings that `info.get` reports and that never rewrite what was recorded."""
import os
import subprocess
import tempfile

import pytest

from bbclient import ServerProcess
from conftest import server_binary
from test_orders_support import HOUR, bounty, express, group, now_ms, runner, user

CAMPUSES = ["North", "South"]


@pytest.fixture(scope="module")
def server():
    """Two configured campuses; no per-IP SMS limit (many users log in from loopback)."""
    with tempfile.TemporaryDirectory(prefix="bangbang-e2e-") as data:
        arguments = ["--dev", "--fsync", "never", "--sms-per-ip-hourly", "0", "--admin-phone", "+8613000000000"]
        for campus in CAMPUSES:
            arguments += ["--campus", campus]
        process = ServerProcess.start(server_binary(), data, arguments)
        try:
            yield process
        finally:
            process.stop()


@pytest.fixture
def publisher(server):
    with user(server) as connection:
        yield connection


def field_error(connection, op, data):
    error = connection.error(op, data)
    return error["code"], error.get("field")


# MARK: Campus

def test_an_order_names_one_of_the_configured_campuses(publisher, client):
    assert client.ok("info.get")["campuses"] == CAMPUSES
    assert publisher.ok("order.publish", express(campus="South"))["order"]["campus"] == "South"
    for typo in ("Nrth", "north", "North ", "East"):
        assert field_error(publisher, "order.publish", express(campus=typo)) == ("invalid_field", "campus")


def test_any_campus_goes_where_none_are_configured():
    with tempfile.TemporaryDirectory(prefix="bangbang-e2e-") as data:
        open_server = ServerProcess.start(server_binary(), data, ["--dev", "--fsync", "never"])
        try:
            with user(open_server) as someone:
                assert someone.ok("order.publish", express(campus="Anywhere"))["order"]["campus"] == "Anywhere"
        finally:
            open_server.stop()


# MARK: Group orders

def test_a_group_order_takes_no_tip_and_no_delivery_code(publisher):
    tipped = group()
    tipped["tip"] = 500
    assert field_error(publisher, "order.publish", tipped) == ("invalid_field", "tip")
    coded = group()
    coded["delivery_code"] = True
    assert field_error(publisher, "order.publish", coded) == ("invalid_field", "delivery_code")
    zero = group()
    zero["tip"], zero["delivery_code"] = 0, False
    order = publisher.ok("order.publish", zero)["order"]
    assert order["tip"] == 0 and "delivery_code" not in order


def test_raising_the_tip_of_a_group_order_is_an_invalid_transition(publisher):
    order = publisher.ok("order.publish", group())["order"]
    assert publisher.error("order.raise_tip", {"order_id": order["id"], "tip": 300})["code"] == "invalid_transition"
    assert publisher.ok("order.get", {"order_id": order["id"]})["order"]["tip"] == 0


# MARK: Contact phones

@pytest.mark.parametrize("typed", ["13812345678", "+8613812345678", "+86 138-1234-5678", " 138 1234 5678 "])
def test_a_contact_phone_is_any_phone_number_and_is_stored_in_e164(server, publisher, typed):
    draft = express(campus="North")
    draft["details"]["contact_phone"] = typed
    order = publisher.ok("order.publish", draft)["order"]
    assert order["details"]["contact_phone"] == "+8613812345678"
    with runner(server) as courier:
        taken = courier.ok("order.accept", {"order_id": order["id"]})["order"]
        assert taken["details"]["contact_phone"] == "+8613812345678"


@pytest.mark.parametrize("typed", ["12812345678", "1381234567", "+0123456789", "+86 138 1234 5678 901", "tel:13812345678"])
def test_a_contact_phone_that_is_no_phone_number_is_refused(publisher, typed):
    draft = express(campus="North")
    draft["details"]["contact_phone"] = typed
    assert field_error(publisher, "order.publish", draft) == ("invalid_field", "details.contact_phone")


# MARK: Keyword

def test_keyword_matches_the_text_but_not_the_campus(server, publisher):
    order = publisher.ok("order.publish", bounty(title="Find my South Park poster", campus="North"))["order"]
    other = publisher.ok("order.publish", bounty(title="Walk the dog", campus="South"))["order"]
    found = {o["id"] for o in publisher.ok("board.list", {"types": ["bounty"], "keyword": "south", "limit": 100})["orders"]}
    assert order["id"] in found, "the title says South"
    assert other["id"] not in found, "the campus South is not text to search"
    with user(server) as watcher:
        listed = watcher.ok("board.subscribe", {"types": ["bounty"], "keyword": "SOUTH", "limit": 100})["orders"]
        assert other["id"] not in {o["id"] for o in listed}


# MARK: My orders, paged

def test_my_orders_page_newest_first_and_stay_stable_while_orders_arrive(server):
    with user(server) as mine:
        published = [mine.ok("order.publish", bounty(title=f"Task {n}", campus="North"))["order"] for n in range(7)]
        newest_first = sorted(published, key=lambda o: (o["created_at"], o["id"]), reverse=True)
        pages, cursor = [], None
        while True:
            request = {"limit": 3} if cursor is None else {"limit": 3, "cursor": cursor}
            reply = mine.ok("orders.mine", request)
            pages.append([o["id"] for o in reply["orders"]])
            # An order published between pages is newer than all of them: never on a later page.
            mine.ok("order.publish", bounty(title="Late", campus="North"))
            if "next_cursor" not in reply:
                break
            cursor = reply["next_cursor"]
            assert isinstance(cursor, str) and cursor
        assert [len(page) for page in pages] == [3, 3, 1]
        assert [i for page in pages for i in page] == [o["id"] for o in newest_first]
        everything = mine.ok("orders.mine", {"limit": 200})
        assert len(everything["orders"]) == 10 and "next_cursor" not in everything


def test_my_orders_pages_follow_role_and_scope(server):
    with user(server) as mine, runner(server) as courier:
        orders = [mine.ok("order.publish", express(campus="North"))["order"] for _ in range(3)]
        for order in orders:
            courier.ok("order.accept", {"order_id": order["id"]})
        first = courier.ok("orders.mine", {"role": "accepted", "scope": "active", "limit": 2})
        second = courier.ok("orders.mine", {"role": "accepted", "scope": "active", "limit": 2,
                                            "cursor": first["next_cursor"]})
        assert "next_cursor" not in second
        assert {o["id"] for o in first["orders"] + second["orders"]} == {o["id"] for o in orders}


@pytest.mark.parametrize("cursor", ["", "nonsense", "12", "1:2:3", "abc:7", 17])
def test_a_cursor_that_is_no_next_cursor_is_refused(publisher, cursor):
    assert field_error(publisher, "orders.mine", {"cursor": cursor}) == ("invalid_field", "cursor")


# MARK: Order rules

def test_the_order_rules_are_settings_that_info_reports_and_recorded_results_keep():
    with tempfile.TemporaryDirectory(prefix="bangbang-e2e-") as data:
        tuned = ["--dev", "--fsync", "never", "--admin-phone", "+8613000000000",
                 "--cancel-grace-seconds", "0", "--cancel-fee", "150", "--auto-confirm-hours", "2"]
        server = ServerProcess.start(server_binary(), data, tuned)
        try:
            with server.client() as anyone:
                assert anyone.ok("info.get")["order_rules"] == {"cancel_grace_ms": 0, "cancel_fee": 150,
                                                                "auto_confirm_ms": 2 * HOUR}
            with user(server) as publisher, runner(server) as courier:
                cancelled = publisher.ok("order.publish", express())["order"]
                courier.ok("order.accept", {"order_id": cancelled["id"]})
                fee = publisher.ok("order.cancel", {"order_id": cancelled["id"], "reason": "plans changed"})["order"]
                assert fee["cancellation"]["fee"] == 150, "no grace window: the fee is due at once"
                delivered = publisher.ok("order.publish", bounty())["order"]
                courier.ok("order.accept", {"order_id": delivered["id"]})
                before = now_ms()
                done = courier.ok("order.deliver", {"order_id": delivered["id"]})["order"]
                assert before + 2 * HOUR <= done["auto_confirm_at"] <= now_ms() + 2 * HOUR
        finally:
            server.stop()
        # The defaults again: what was decided stays as it was recorded.
        os.replace(server.log_path, server.log_path + ".previous")
        server = ServerProcess.start(server_binary(), data, ["--dev", "--fsync", "never"])
        try:
            with server.client() as anyone:
                assert anyone.ok("info.get")["order_rules"] == {"cancel_grace_ms": 120_000, "cancel_fee": 200,
                                                                "auto_confirm_ms": 24 * HOUR}
            with user(server) as looker:
                assert looker.ok("order.get", {"order_id": cancelled["id"]})["order"]["cancellation"]["fee"] == 150
                again = looker.ok("order.get", {"order_id": delivered["id"]})["order"]
                assert again["auto_confirm_at"] == done["auto_confirm_at"]
        finally:
            server.stop()


def test_help_lists_the_order_rules_and_nonsense_values_are_refused():
    shown = subprocess.run([server_binary(), "--help"], capture_output=True, text=True, timeout=30)
    assert shown.returncode == 0
    for flag, default in (("--cancel-grace-seconds SECONDS", "120"), ("--cancel-fee FEN", "200"),
                          ("--auto-confirm-hours HOURS", "24")):
        line = next(line for line in shown.stdout.splitlines() if flag in line)
        assert f"(default: {default})" in line, line
    for flag, value in (("--cancel-fee", "-1"), ("--auto-confirm-hours", "0"), ("--cancel-grace-seconds", "2m")):
        refused = subprocess.run([server_binary(), "check-config", flag, value], capture_output=True, text=True, timeout=30)
        assert refused.returncode != 0
        assert flag in refused.stderr and "expected an integer in" in refused.stderr, refused.stderr
