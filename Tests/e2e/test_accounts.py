"""Accounts, end to end: SMS codes, code and password login, resuming with missed events,
logging out one device of several, the device list. Every error case checks the exact code
and that the connection still answers afterwards."""
import tempfile

import pytest

from bbclient import ServerProcess, fresh_phone
from conftest import server_binary


@pytest.fixture(scope="module")
def server():
    """Many logins come from loopback here, so the per-IP SMS limit is off; one test makes a
    thousand requests as fast as it can, so the request rate limits are off too."""
    with tempfile.TemporaryDirectory(prefix="bangbang-e2e-") as data:
        process = ServerProcess.start(server_binary(), data, ["--dev", "--fsync", "never", "--sms-per-ip-hourly", "0",
                                                              "--requests-per-second", "0", "--user-requests-per-second", "0",
                                                              "--admin-phone", "+8613000000000"])
        try:
            yield process
        finally:
            process.stop()


def code_for(client, phone, purpose=None):
    data = {"phone": phone} if purpose is None else {"phone": phone, "purpose": purpose}
    return client.ok("auth.request_code", data)["dev_code"]


PASSWORD = "second device"


def second_device(server, phone, first, device):
    """Another device of `first`'s user. A code login would wait out the 60 s between two codes
    to one phone, so the second device logs in with a password (set here if need be)."""
    if first is not None:
        reply = first.call("auth.set_password", {"password": PASSWORD})
        assert reply["ok"] or reply["error"]["code"] == "password_already_set"
    connection = server.client()
    data = connection.ok("auth.login_password", {"phone": phone, "password": PASSWORD, "device": device})
    connection.token = data["token"]
    return connection


def still_usable(client):
    assert client.ok("info.get")["version"]


# MARK: SMS codes

def test_request_code_normalizes_the_phone_and_reveals_the_code_in_dev_mode(client):
    number = fresh_phone()
    reply = client.ok("auth.request_code", {"phone": number[3:]})
    assert reply["phone"] == number
    assert len(reply["dev_code"]) == 6 and reply["dev_code"].isdigit()
    assert reply["retry_after"] == 60 and reply["expires_at"] > 0


@pytest.mark.parametrize("data, field", [
    ({}, "phone"),
    ({"phone": "12345"}, "phone"),
    ({"phone": 13800138000}, "phone"),
    ({"phone": "+8613800138000", "purpose": "spam"}, "purpose"),
    ({"phone": "+8613800138000", "extra": 1}, "extra"),
])
def test_request_code_refuses_bad_input_naming_the_field(client, data, field):
    error = client.error("auth.request_code", data)
    assert (error["code"], error["field"]) == ("invalid_field", field)
    still_usable(client)


def test_a_second_code_within_a_minute_is_rate_limited(client):
    phone = fresh_phone()
    code_for(client, phone)
    assert client.error("auth.request_code", {"phone": phone})["code"] == "rate_limited"
    still_usable(client)


def test_a_change_phone_code_needs_a_login(client):
    assert client.error("auth.request_code", {"phone": fresh_phone(), "purpose": "change_phone"})["code"] == "unauthenticated"


# MARK: Code login

def test_code_login_registers_an_unknown_phone(server):
    phone = fresh_phone()
    with server.client() as first, server.client() as second:
        registered = first.login(phone)
        assert registered["is_new"] is True and registered["seq"] == 0
        assert registered["user"]["phone"] == phone and registered["user"]["has_password"] is False
        assert registered["user"]["nickname"] == f"用户{registered['user']['id']}"
        other = second.login(fresh_phone())
        assert other["is_new"] is True and other["user"]["id"] != registered["user"]["id"]


def test_a_wrong_code_counts_down_then_kills_the_code(client):
    phone = fresh_phone()
    code = code_for(client, phone)
    wrong = "000000" if code != "000000" else "111111"
    for _ in range(4):
        error = client.error("auth.login_code", {"phone": phone, "code": wrong})
        assert (error["code"], error["field"]) == ("code_incorrect", "code")
    assert client.error("auth.login_code", {"phone": phone, "code": wrong})["code"] == "code_incorrect"
    # Five wrong tries: even the right code is dead now.
    assert client.error("auth.login_code", {"phone": phone, "code": code})["code"] == "code_expired"
    still_usable(client)


def test_a_code_is_single_use(server):
    phone = fresh_phone()
    with server.client() as client:
        code = code_for(client, phone)
        client.ok("auth.login_code", {"phone": phone, "code": code})
    with server.client() as other:
        assert other.error("auth.login_code", {"phone": phone, "code": code})["code"] == "code_expired"


@pytest.mark.parametrize("data, code, field", [
    ({"phone": "+8613912345678", "code": "123456"}, "code_expired", "code"),
    ({"phone": "+8613912345678"}, "invalid_field", "code"),
    ({"code": "123456"}, "invalid_field", "phone"),
    ({"phone": "nope", "code": "123456"}, "invalid_field", "phone"),
    ({"phone": "+8613912345678", "code": "123456", "device": "x" * 65}, "invalid_field", "device"),
    ({"phone": "+8613912345678", "code": "123456", "token": "t"}, "invalid_field", "token"),
])
def test_code_login_refuses_bad_input(client, data, code, field):
    error = client.error("auth.login_code", data)
    assert (error["code"], error.get("field")) == (code, field)
    still_usable(client)


# MARK: Resume

def test_resume_replays_the_personal_events_missed_while_away(server):
    phone = fresh_phone()
    with server.client() as phone_app:
        token = phone_app.login(phone)["token"]
        phone_app.ok("auth.set_password", {"password": PASSWORD})
        seen = phone_app.wait_event(lambda e: e["event"] == "account.password_changed")["seq"]
    with second_device(server, phone, None, "laptop") as laptop:
        laptop.ok("profile.update", {"nickname": "away-1"})
        laptop.ok("profile.update", {"bio": "away-2"})
    with server.client() as back:
        reply = back.ok("auth.resume", {"token": token, "last_seq": seen})
        assert reply["resync"] is False and reply["user"]["phone"] == phone
        # laptop's login, then the two edits, in order, before the reply.
        missed = [(e["event"], e["seq"]) for e in back.events]
        assert missed == [("account.login", seen + 1), ("account.profile_updated", seen + 2),
                          ("account.profile_updated", seen + 3)]
        assert reply["seq"] == seen + 3
        back.events.clear()
        # And live from there on.
        second_device(server, phone, back, "other").close()
        assert back.wait_event(lambda e: e["event"] == "account.login")["seq"] == seen + 4


def test_resume_without_last_seq_replays_the_whole_kept_stream(server):
    with server.client() as first:
        login = first.login(fresh_phone())
        first.ok("profile.update", {"nickname": "one"})
    with server.client() as back:
        reply = back.ok("auth.resume", {"token": login["token"]})
        assert reply["seq"] == 1 and [e["seq"] for e in back.events] == [1]


def test_resume_from_ahead_of_the_stream_asks_for_a_resync(server):
    """A device that saw numbers this server never gave (the server was restored from a backup)
    must refetch, not take the next events for ones it has."""
    with server.client() as first:
        login = first.login(fresh_phone())
        first.ok("profile.update", {"nickname": "one"})
    with server.client() as back:
        reply = back.ok("auth.resume", {"token": login["token"], "last_seq": 50})
        assert reply["resync"] is True and reply["seq"] == 1
        assert back.events == []
    with server.client() as current:
        reply = current.ok("auth.resume", {"token": login["token"], "last_seq": 1})
        assert reply["resync"] is False and current.events == []


def test_resume_asks_for_a_resync_when_the_missed_events_are_gone(server):
    with server.client() as busy:
        login = busy.login(fresh_phone())
        # More events than a stream keeps (32 by default), so event 1 is gone.
        for index in range(42):
            busy.ok("profile.update", {"nickname": f"n{index % 10}"})
        current = busy.ok("auth.resume", {"token": login["token"], "last_seq": 42})["seq"]
    assert current == 42
    with server.client() as back:
        reply = back.ok("auth.resume", {"token": login["token"], "last_seq": 0})
        assert reply["resync"] is True and reply["seq"] == 42
        assert back.events == []
        assert back.ok("profile.get")["user"]["nickname"] == "n1"


def tampered(token):
    middle = len(token) // 2
    return token[:middle] + ("A" if token[middle] != "A" else "B") + token[middle + 1:]


@pytest.mark.parametrize("make_token, code", [
    (lambda token: "not-a-token", "unauthenticated"),
    (lambda token: "", "unauthenticated"),
    (tampered, "unauthenticated"),
    (lambda token: token[:-2], "unauthenticated"),
    (lambda token: token + "A", "unauthenticated"),
])
def test_resume_refuses_a_bad_token(server, make_token, code):
    with server.client() as owner:
        token = owner.login(fresh_phone())["token"]
    with server.client() as client:
        assert client.error("auth.resume", {"token": make_token(token)})["code"] == code
        assert client.error("profile.get")["code"] == "unauthenticated"
        assert client.ok("auth.resume", {"token": token})["user"]


@pytest.mark.parametrize("data, field", [
    ({}, "token"),
    ({"token": 5}, "token"),
    ({"token": "x" * 257}, "token"),
    ({"token": "x", "last_seq": -1}, "last_seq"),
    ({"token": "x", "last_seq": "3"}, "last_seq"),
])
def test_resume_refuses_bad_fields(client, data, field):
    error = client.error("auth.resume", data)
    assert (error["code"], error["field"]) == ("invalid_field", field)
    still_usable(client)


# MARK: Logout and devices

def test_logout_on_one_device_leaves_the_other_logged_in(server):
    phone = fresh_phone()
    with server.client() as phone_app:
        phone_token = phone_app.login(phone, device="phone")["token"]
        laptop = second_device(server, phone, phone_app, "laptop")
        laptop_token = laptop.token
        assert phone_app.ok("auth.logout") == {}
        assert phone_app.error("profile.get")["code"] == "unauthenticated"
        assert phone_app.error("auth.logout")["code"] == "unauthenticated"
        assert laptop.wait_event(lambda e: e["event"] == "account.logged_out")["data"] == {}
        assert laptop.ok("profile.get")["user"]["phone"] == phone
        assert phone_app.error("auth.resume", {"token": phone_token})["code"] == "session_revoked"
        assert phone_app.ok("auth.resume", {"token": laptop_token})["user"]["phone"] == phone
        laptop.close()


def test_logout_needs_a_login_and_takes_no_fields(server, client):
    assert client.error("auth.logout")["code"] == "unauthenticated"
    client.login(fresh_phone())
    error = client.error("auth.logout", {"all": True})
    assert (error["code"], error["field"]) == ("invalid_field", "all")
    assert client.ok("profile.get")["user"]


def test_sessions_lists_my_devices_and_marks_this_one(server):
    phone = fresh_phone()
    with server.client() as phone_app:
        phone_app.login(phone, device="phone")
        second_device(server, phone, phone_app, "laptop").close()
        sessions = phone_app.ok("auth.sessions")["sessions"]
        assert sorted(s["device"] for s in sessions) == ["laptop", "phone"]
        assert [s["device"] for s in sessions if s["is_current"]] == ["phone"]
        assert all(s["expires_at"] - s["issued_at"] == 30 * 24 * 3600 * 1000 for s in sessions)


def test_revoking_another_device_logs_that_connection_out(server):
    phone = fresh_phone()
    with server.client() as phone_app, server.client() as laptop_again:
        phone_app.login(phone, device="phone")
        laptop = second_device(server, phone, phone_app, "laptop")
        laptop_token = laptop.token
        laptop_again.ok("auth.resume", {"token": laptop_token})
        target = next(s["id"] for s in phone_app.ok("auth.sessions")["sessions"] if s["device"] == "laptop")
        assert phone_app.ok("auth.revoke_session", {"session_id": target.upper()}) == {}
        # Both connections on that session hear it, then are logged out.
        for connection in (laptop, laptop_again):
            connection.wait_event(lambda e: e["event"] == "account.logged_out")
            assert connection.error("profile.get")["code"] == "unauthenticated"
        assert laptop.error("auth.resume", {"token": laptop_token})["code"] == "session_revoked"
        assert [s["device"] for s in phone_app.ok("auth.sessions")["sessions"]] == ["phone"]
        error = phone_app.error("auth.revoke_session", {"session_id": target})
        assert (error["code"], error["field"]) == ("session_revoked", "session")
        assert phone_app.ok("profile.get")["user"]["phone"] == phone
        laptop.close()


def test_revoking_my_current_session_logs_me_out(client):
    client.login(fresh_phone())
    current = client.ok("auth.sessions")["sessions"][0]["id"]
    assert client.ok("auth.revoke_session", {"session_id": current}) == {}
    assert client.error("auth.sessions")["code"] == "unauthenticated"


def test_another_users_session_is_not_found(server):
    with server.client() as mallory, server.client() as victim:
        mallory.login(fresh_phone())
        victim.login(fresh_phone())
        target = victim.ok("auth.sessions")["sessions"][0]["id"]
        error = mallory.error("auth.revoke_session", {"session_id": target})
        assert (error["code"], error["field"]) == ("not_found", "session")
        assert victim.ok("profile.get")["user"]


@pytest.mark.parametrize("data, code, field", [
    ({}, "invalid_field", "session_id"),
    ({"session_id": "abc"}, "invalid_field", "session_id"),
    ({"session_id": "g" * 32}, "invalid_field", "session_id"),
    ({"session_id": "0" * 32}, "not_found", "session"),
])
def test_revoke_session_refuses_bad_ids(client, data, code, field):
    client.login(fresh_phone())
    error = client.error("auth.revoke_session", data)
    assert (error["code"], error["field"]) == (code, field)
    assert client.ok("auth.sessions")["sessions"]


def test_device_operations_need_a_login(client):
    for op in ("auth.sessions", "auth.set_password"):
        assert client.error(op)["code"] == "unauthenticated"
    assert client.error("auth.revoke_session", {"session_id": "0" * 32})["code"] == "unauthenticated"


# MARK: Passwords

def test_password_set_login_and_change(server):
    phone = fresh_phone()
    with server.client() as app, server.client() as other:
        app.login(phone)
        assert app.ok("auth.set_password", {"password": "correct horse"}) == {}
        assert app.wait_event(lambda e: e["event"] == "account.password_changed")["data"] == {}
        assert app.ok("profile.get")["user"]["has_password"] is True
        error = app.error("auth.set_password", {"password": "another one"})
        assert error["code"] == "password_already_set"

        login = other.ok("auth.login_password", {"phone": phone, "password": "correct horse", "device": "pc"})
        assert login["is_new"] is False and login["user"]["phone"] == phone and login["token"]
        assert app.wait_event(lambda e: e["event"] == "account.login")["data"] == {"device": "pc", "method": "password"}

        error = app.error("auth.change_password", {"old_password": "wrong horse", "new_password": "battery staple"})
        assert (error["code"], error["field"]) == ("invalid_credentials", "old_password")
        assert app.ok("auth.change_password", {"old_password": "correct horse", "new_password": "battery staple"}) == {}
        assert other.wait_event(lambda e: e["event"] == "account.password_changed")
    with server.client() as fresh:
        assert fresh.error("auth.login_password", {"phone": phone, "password": "correct horse"})["code"] == "invalid_credentials"
        assert fresh.ok("auth.login_password", {"phone": phone, "password": "battery staple"})["user"]["phone"] == phone


def test_password_login_does_not_tell_whether_an_account_exists(server):
    with_account = fresh_phone()
    with server.client() as owner:
        owner.login(with_account)
    with server.client() as client:
        unknown = client.error("auth.login_password", {"phone": fresh_phone(), "password": "whatever1"})
        no_password = client.error("auth.login_password", {"phone": with_account, "password": "whatever1"})
        assert unknown == no_password
        assert unknown["code"] == "invalid_credentials"
        still_usable(client)


def test_five_wrong_passwords_lock_password_login(server):
    phone = fresh_phone()
    with server.client() as owner, server.client() as guesser:
        owner.login(phone)
        owner.ok("auth.set_password", {"password": "right password"})
        for attempt in range(5):
            assert guesser.error("auth.login_password", {"phone": phone, "password": f"guess {attempt}"})["code"] \
                == "invalid_credentials"
        assert guesser.error("auth.login_password", {"phone": phone, "password": "right password"})["code"] == "rate_limited"
        # The lock covers changing the password too; sessions already open still work.
        error = owner.error("auth.change_password", {"old_password": "right password", "new_password": "new password"})
        assert error["code"] == "rate_limited"
        assert owner.ok("profile.get")["user"]["phone"] == phone


@pytest.mark.parametrize("op, data, field", [
    ("auth.set_password", {"password": "short"}, "password"),
    ("auth.set_password", {"password": "x" * 129}, "password"),
    ("auth.set_password", {}, "password"),
    ("auth.set_password", {"password": "long enough", "old": "x"}, "old"),
    ("auth.change_password", {"old_password": "whatever1", "new_password": "short"}, "new_password"),
    ("auth.change_password", {"new_password": "long enough"}, "old_password"),
    ("auth.change_password", {"old_password": 12345678, "new_password": "long enough"}, "old_password"),
])
def test_password_operations_refuse_bad_fields(client, op, data, field):
    client.login(fresh_phone())
    error = client.error(op, data)
    assert (error["code"], error["field"]) == ("invalid_field", field)
    assert client.ok("profile.get")["user"]["has_password"] is False


@pytest.mark.parametrize("data, field", [
    ({"phone": "+8613800138000"}, "password"),
    ({"password": "whatever1"}, "phone"),
    ({"phone": "bad", "password": "whatever1"}, "phone"),
    ({"phone": "+8613800138000", "password": "x" * 129}, "password"),
    ({"phone": "+8613800138000", "password": "whatever1", "device": "d" * 65}, "device"),
])
def test_password_login_refuses_bad_fields(client, data, field):
    error = client.error("auth.login_password", data)
    assert (error["code"], error["field"]) == ("invalid_field", field)
    still_usable(client)


def test_changing_a_password_that_was_never_set(client):
    client.login(fresh_phone())
    error = client.error("auth.change_password", {"old_password": "anything1", "new_password": "long enough"})
    assert error["code"] == "password_not_set"
    assert client.ok("auth.set_password", {"password": "long enough"}) == {}
