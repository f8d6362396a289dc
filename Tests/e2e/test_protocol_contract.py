"""The protocol as a contract (protocol/README.md, the 2026-12-01 changelog): what a client
written from protocol/ alone relies on and used to have to guess. `"data": null`; resume order
and `resync`; logout leaving the connection open; no `account.login` to the connection that
logs in; change-phone codes belonging to the account; the SMS spacing shared by both purposes;
`retry_after_ms`; `info.get`'s order rules."""
import json
import tempfile
import time

import pytest

from bbclient import ServerProcess, fresh_phone
from conftest import server_binary
from test_orders_support import no_event

PASSWORD = "contract password"


@pytest.fixture(scope="module")
def server():
    """No per-IP SMS limit: every test logs several users in from loopback."""
    with tempfile.TemporaryDirectory(prefix="bangbang-e2e-") as data:
        process = ServerProcess.start(server_binary(), data, ["--dev", "--fsync", "never", "--sms-per-ip-hourly", "0",
                                                              "--admin-phone", "+8613000000000"])
        try:
            yield process
        finally:
            process.stop()


def raw_call(connection, text):
    """Sends `text` as it is and returns the reply (events meanwhile are kept)."""
    connection.send_raw(text)
    while True:
        message = connection.receive()
        if "event" in message:
            connection.events.append(message)
        else:
            return message


def login_with_password(server, phone, device):
    connection = server.client()
    data = connection.ok("auth.login_password", {"phone": phone, "password": PASSWORD, "device": device})
    connection.user, connection.token = data["user"], data["token"]
    return connection, data


# MARK: Messages

def test_data_null_is_the_same_as_no_data(client):
    with_null = raw_call(client, json.dumps({"id": "n1", "op": "info.get", "data": None}))
    without = raw_call(client, json.dumps({"id": "n2", "op": "info.get"}))
    assert with_null["ok"] and with_null["data"] == without["data"]
    missing = raw_call(client, json.dumps({"id": "n3", "op": "auth.request_code", "data": None}))
    assert missing["error"]["code"] == "invalid_field" and missing["error"]["field"] == "phone"
    not_an_object = raw_call(client, json.dumps({"id": "n4", "op": "info.get", "data": []}))
    assert (not_an_object["error"]["code"], not_an_object["error"]["field"]) == ("invalid_field", "data")


def test_a_field_set_to_null_is_the_same_as_an_absent_one(client):
    client.login(fresh_phone())
    reply = raw_call(client, json.dumps({"id": "f1", "op": "orders.mine", "data": {"role": None, "limit": None}}))
    assert reply["ok"] and reply["data"] == {"orders": []}
    unknown = raw_call(client, json.dumps({"id": "f2", "op": "orders.mine", "data": {"roles": None}}))
    assert (unknown["error"]["code"], unknown["error"]["field"]) == ("invalid_field", "roles")


# MARK: Sessions

def test_resume_replays_before_the_reply_and_always_says_whether_it_resynced(server):
    phone = fresh_phone()
    with server.client() as first:
        token = first.login(phone)["token"]
        first.ok("profile.update", {"nickname": "before"})
        seen = first.wait_event(lambda e: e["event"] == "account.profile_updated")["seq"]
        first.ok("profile.update", {"nickname": "missed"})
    with server.client() as back:
        reply = back.call("auth.resume", {"token": token, "last_seq": seen})
        # `call` returns at the reply: what it kept arrived before it.
        assert [(e["event"], e["seq"]) for e in back.events] == [("account.profile_updated", seen + 1)]
        assert reply["data"]["resync"] is False and reply["data"]["seq"] == seen + 1
    with server.client() as current:
        reply = current.ok("auth.resume", {"token": token, "last_seq": seen + 1})
        assert reply["resync"] is False and current.events == []


def test_logout_leaves_the_connection_open_and_logged_out(client):
    client.login(fresh_phone())
    assert client.ok("auth.logout") == {}
    assert client.error("orders.mine")["code"] == "unauthenticated"
    assert client.ok("info.get")["version"], "the connection still serves what needs no login"
    client.login(fresh_phone())
    assert client.ok("orders.mine") == {"orders": []}


def test_the_connection_that_logs_in_never_gets_its_own_account_login(server):
    phone = fresh_phone()
    with server.client() as watcher:
        watcher.login(phone, device="watcher")
        watcher.ok("auth.set_password", {"password": PASSWORD})
        watcher.wait_event(lambda e: e["event"] == "account.password_changed")
        # Several logins, so that on a server with several event loops the reply and the push
        # race each other on every one of them.
        for attempt in range(6):
            device = f"laptop {attempt}"
            laptop, data = login_with_password(server, phone, device)
            with laptop:
                seen = watcher.wait_event(lambda e: e["event"] == "account.login")
                assert seen["data"] == {"device": device, "method": "password"}
                assert data["seq"] == seen["seq"], "the reply's seq counts the login's own event"
                no_event(laptop, lambda e: e["event"] == "account.login", wait=0.2)
                assert laptop.events == []
            with server.client() as resumed:
                resumed.ok("auth.resume", {"token": data["token"], "last_seq": data["seq"]})
                assert resumed.events == [], "nothing before the login's reply is replayed either"


def test_logging_in_again_on_a_connection_of_that_user_skips_its_own_event(server):
    phone = fresh_phone()
    with server.client() as device:
        device.login(phone)
        device.ok("auth.set_password", {"password": PASSWORD})
        device.wait_event(lambda e: e["event"] == "account.password_changed")
        again = device.ok("auth.login_password", {"phone": phone, "password": PASSWORD})
        no_event(device, lambda e: e["event"] == "account.login", wait=0.3)
        device.ok("profile.update", {"bio": "next"})
        assert device.wait_event(lambda e: e["event"] == "account.profile_updated")["seq"] == again["seq"] + 1


# MARK: SMS codes

def test_a_change_phone_code_works_on_any_connection_of_the_account_that_asked(server):
    phone, new = fresh_phone(), fresh_phone()
    with server.client() as phone_app:
        phone_app.login(phone)
        phone_app.ok("auth.set_password", {"password": PASSWORD})
        code = phone_app.ok("auth.request_code", {"phone": new, "purpose": "change_phone"})["dev_code"]
        laptop, _ = login_with_password(server, phone, "laptop")
        with laptop:
            assert laptop.ok("profile.change_phone", {"phone": new, "code": code})["user"]["phone"] == new


def test_the_sixty_seconds_between_codes_are_shared_by_both_purposes(server):
    target = fresh_phone()
    with server.client() as asker, server.client() as other:
        asker.ok("auth.request_code", {"phone": target})
        other.login(fresh_phone())
        error = other.error("auth.request_code", {"phone": target, "purpose": "change_phone"})
        assert error["code"] == "rate_limited"
        assert 55_000 <= error["retry_after_ms"] <= 60_000
    with server.client() as changer, server.client() as logger:
        changer.login(fresh_phone())
        second = fresh_phone()
        changer.ok("auth.request_code", {"phone": second, "purpose": "change_phone"})
        error = logger.error("auth.request_code", {"phone": second})
        assert error["code"] == "rate_limited" and 55_000 <= error["retry_after_ms"] <= 60_000


# MARK: retry_after_ms

def test_a_locked_password_login_says_how_long_the_lock_lasts(server):
    phone = fresh_phone()
    with server.client() as owner:
        owner.login(phone)
        owner.ok("auth.set_password", {"password": PASSWORD})
    with server.client() as guesser:
        for _ in range(5):
            assert guesser.error("auth.login_password", {"phone": phone, "password": "wrong guess"})["code"] == "invalid_credentials"
        for password in ("wrong guess", PASSWORD):
            error = guesser.error("auth.login_password", {"phone": phone, "password": password})
            assert error["code"] == "rate_limited", "the lock holds whether the guess is right or not"
            assert 14 * 60_000 <= error["retry_after_ms"] <= 15 * 60_000


def test_the_request_rate_limits_say_when_the_next_request_is_allowed():
    with tempfile.TemporaryDirectory(prefix="bangbang-e2e-") as data:
        server = ServerProcess.start(server_binary(), data, ["--dev", "--fsync", "never", "--requests-per-second", "2",
                                                             "--user-requests-per-second", "0"])
        try:
            with server.client() as client:
                replies = [client.call("info.get") for _ in range(6)]
                refused = [reply["error"] for reply in replies if not reply["ok"]]
                assert refused and all(error["code"] == "rate_limited" for error in refused)
                # 2/s is a request every 500 ms: no refusal asks for longer than that.
                assert all(0 < error["retry_after_ms"] <= 500 for error in refused), refused
                time.sleep(refused[-1]["retry_after_ms"] / 1000 + 0.05)
                assert client.call("info.get")["ok"], "waiting as told is enough"
        finally:
            server.stop()


# MARK: info.get

def test_info_tells_the_order_rules(client):
    rules = client.ok("info.get")["order_rules"]
    assert rules == {"cancel_grace_ms": 120_000, "cancel_fee": 200, "auto_confirm_ms": 86_400_000}
