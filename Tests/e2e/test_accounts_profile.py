"""The personal centre, end to end: public information, profiles (mine and others'), changing
the bound phone, runner verification and feedback — with every refusal and its exact code."""
import tempfile

import pytest

from bbclient import ServerProcess, fresh_phone
from conftest import server_binary

SUPPORT = "+86 10 8888 6666"


@pytest.fixture(scope="module")
def server():
    """Two configured campuses and a support phone; no per-IP SMS limit (many logins here)."""
    with tempfile.TemporaryDirectory(prefix="bangbang-e2e-") as data:
        process = ServerProcess.start(server_binary(), data, [
            "--dev", "--fsync", "never", "--sms-per-ip-hourly", "0", "--admin-phone", "+8613000000000",
            "--support-phone", SUPPORT, "--campus", "North", "--campus", "South"])
        try:
            yield process
        finally:
            process.stop()


@pytest.fixture
def user(server):
    with server.client() as connection:
        connection.login(fresh_phone())
        yield connection


# MARK: info.get

def test_info_needs_no_login_and_shows_the_configuration(client):
    info = client.ok("info.get")
    assert info["support_phone"] == SUPPORT
    assert info["campuses"] == ["North", "South"]
    assert sorted(info["order_types"]) == ["bounty", "express", "group", "purchase"]
    assert info["limits"]["max_tip"] == 50_000 and info["limits"]["max_message_bytes"] == 65_536
    assert info["limits"]["password_min_length"] == 8 and info["limits"]["feedback_max_length"] == 1000
    assert info["version"]
    error = client.error("info.get", {"lang": "zh"})
    assert (error["code"], error["field"]) == ("invalid_field", "lang")


# MARK: profile.get

def test_my_profile_is_complete_and_others_see_the_public_view(server, user):
    mine = user.ok("profile.get")["user"]
    assert mine["phone"] and mine["has_password"] is False and mine["is_administrator"] is False
    assert mine["gender"] == "undisclosed" and mine["is_verified_runner"] is False
    with server.client() as other:
        other.login(fresh_phone())
        seen = other.ok("profile.get", {"user_id": mine["id"]})["user"]
        assert seen["id"] == mine["id"] and seen["nickname"] == mine["nickname"]
        for private in ("phone", "has_password", "is_administrator", "verification"):
            assert private not in seen


@pytest.mark.parametrize("data, code, field", [
    ({"user_id": 999_999}, "not_found", "user"),
    ({"user_id": 0}, "invalid_field", "user_id"),
    ({"user_id": "1"}, "invalid_field", "user_id"),
    ({"phone": "+8613800138000"}, "invalid_field", "phone"),
])
def test_profile_get_refuses_bad_input(user, data, code, field):
    error = user.error("profile.get", data)
    assert (error["code"], error["field"]) == (code, field)
    assert user.ok("profile.get")["user"]


def test_personal_centre_needs_a_login(client):
    for op in ("profile.get", "profile.update", "profile.change_phone", "runner.submit_verification",
               "runner.verification", "feedback.submit"):
        assert client.error(op)["code"] == "unauthenticated", op


# MARK: profile.update

def test_update_changes_only_the_fields_given_and_empty_clears(server, user):
    updated = user.ok("profile.update", {"nickname": "  小明 ", "campus": "North", "dorm": "3-201",
                                         "bio": "line one\nline two", "gender": "male",
                                         "avatar_url": "https://cdn.example.com/a.png"})["user"]
    assert updated["nickname"] == "小明" and updated["campus"] == "North" and updated["gender"] == "male"
    assert updated["bio"] == "line one\nline two" and updated["avatar_url"] == "https://cdn.example.com/a.png"
    partial = user.ok("profile.update", {"dorm": "", "bio": "new"})["user"]
    assert "dorm" not in partial and partial["bio"] == "new"
    assert partial["nickname"] == "小明" and partial["campus"] == "North" and partial["gender"] == "male"
    assert user.wait_event(lambda e: e["event"] == "account.profile_updated")["data"] == {}
    assert user.ok("profile.get")["user"] == partial


@pytest.mark.parametrize("data, field", [
    ({}, "profile"),
    ({"nickname": ""}, "nickname"),
    ({"nickname": "x" * 21}, "nickname"),
    ({"nickname": "tab\there"}, "nickname"),
    ({"gender": "other"}, "gender"),
    ({"campus": "West"}, "campus"),
    ({"avatar_url": "ftp://example.com/a.png"}, "avatar_url"),
    ({"avatar_url": "https://"}, "avatar_url"),
    ({"dorm": "d" * 41}, "dorm"),
    ({"bio": "b" * 201}, "bio"),
    ({"nickname": 5}, "nickname"),
    ({"phone": "+8613800138000"}, "phone"),
])
def test_update_refuses_bad_fields_and_changes_nothing(user, data, field):
    before = user.ok("profile.get")["user"]
    error = user.error("profile.update", data)
    assert (error["code"], error["field"]) == ("invalid_field", field)
    assert user.ok("profile.get")["user"] == before


# MARK: profile.change_phone

def test_change_phone_moves_the_account_to_the_new_number(server, user):
    new = fresh_phone()
    me = user.ok("profile.get")["user"]
    user.ok("auth.set_password", {"password": "my password"})
    code = user.ok("auth.request_code", {"phone": new, "purpose": "change_phone"})["dev_code"]
    changed = user.ok("profile.change_phone", {"phone": new, "code": code})["user"]
    assert changed["phone"] == new and changed["id"] == me["id"]
    assert user.wait_event(lambda e: e["event"] == "account.phone_changed")["data"] == {}
    with server.client() as other:
        other.login(fresh_phone())
        # The password now goes with the new number, and the old one names no account.
        moved = other.ok("auth.login_password", {"phone": new, "password": "my password"})
        assert moved["user"]["id"] == me["id"]
        old = other.error("auth.login_password", {"phone": me["phone"], "password": "my password"})
        assert old["code"] == "invalid_credentials"
        # The new number is taken now.
        error = other.error("auth.request_code", {"phone": new, "purpose": "change_phone"})
        assert (error["code"], error["field"]) == ("phone_taken", "phone")


def test_change_phone_refuses_my_own_number(user):
    mine = user.ok("profile.get")["user"]["phone"]
    error = user.error("auth.request_code", {"phone": mine, "purpose": "change_phone"})
    assert (error["code"], error["field"]) == ("phone_taken", "phone")


def test_change_phone_needs_the_code_sent_for_it(server, user):
    new = fresh_phone()
    # A login code for the new phone does not prove a phone change.
    with server.client() as other:
        login_code = other.ok("auth.request_code", {"phone": new})["dev_code"]
    error = user.error("profile.change_phone", {"phone": new, "code": login_code})
    assert (error["code"], error["field"]) == ("code_expired", "code")
    with server.client() as owner:
        owner.ok("auth.login_code", {"phone": new, "code": login_code})
    # Now that someone owns it, it cannot be moved to.
    error = user.error("profile.change_phone", {"phone": new, "code": "123456"})
    assert (error["code"], error["field"]) == ("phone_taken", "phone")


def test_change_phone_with_a_wrong_code(user):
    new = fresh_phone()
    code = user.ok("auth.request_code", {"phone": new, "purpose": "change_phone"})["dev_code"]
    wrong = "000000" if code != "000000" else "111111"
    error = user.error("profile.change_phone", {"phone": new, "code": wrong})
    assert (error["code"], error["field"]) == ("code_incorrect", "code")
    assert user.ok("profile.change_phone", {"phone": new, "code": code})["user"]["phone"] == new


def test_a_change_phone_code_is_bound_to_who_asked(server, user):
    new = fresh_phone()
    code = user.ok("auth.request_code", {"phone": new, "purpose": "change_phone"})["dev_code"]
    with server.client() as thief:
        thief.login(fresh_phone())
        assert thief.error("profile.change_phone", {"phone": new, "code": code})["code"] == "code_expired"
    assert user.ok("profile.change_phone", {"phone": new, "code": code})["user"]["phone"] == new


@pytest.mark.parametrize("data, field", [
    ({"code": "123456"}, "phone"),
    ({"phone": "+8613912340000"}, "code"),
    ({"phone": "123", "code": "123456"}, "phone"),
    ({"phone": "+8613912340000", "code": "123456", "x": 1}, "x"),
])
def test_change_phone_refuses_bad_fields(user, data, field):
    error = user.error("profile.change_phone", data)
    assert (error["code"], error["field"]) == ("invalid_field", field)
    assert user.ok("profile.get")["user"]


# MARK: Runner verification

def test_verification_submit_then_pending(user):
    assert user.ok("runner.verification") == {"verification": None}
    submitted = user.ok("runner.submit_verification", {"real_name": " 王小明 ", "student_id": "2024-001",
                                                       "school": "South"})["verification"]
    assert submitted["status"] == "pending" and submitted["real_name"] == "王小明"
    assert submitted["student_id"] == "2024-001" and submitted["school"] == "South"
    assert user.ok("runner.verification")["verification"] == submitted
    assert user.ok("profile.get")["user"]["verification"] == submitted
    error = user.error("runner.submit_verification", {"real_name": "王小明", "student_id": "2", "school": "South"})
    assert error["code"] == "verification_in_progress"
    assert user.ok("runner.verification")["verification"] == submitted


@pytest.mark.parametrize("data, field", [
    ({"student_id": "1", "school": "North"}, "real_name"),
    ({"real_name": "", "student_id": "1", "school": "North"}, "real_name"),
    ({"real_name": "n" * 41, "student_id": "1", "school": "North"}, "real_name"),
    ({"real_name": "A", "student_id": "12 34", "school": "North"}, "student_id"),
    ({"real_name": "A", "student_id": "s" * 33, "school": "North"}, "student_id"),
    ({"real_name": "A", "student_id": "1", "school": "West"}, "school"),
    ({"real_name": "A", "student_id": "1", "school": ""}, "school"),
    ({"real_name": "A", "student_id": "1", "school": "North", "photo": "x"}, "photo"),
])
def test_verification_refuses_bad_fields(user, data, field):
    error = user.error("runner.submit_verification", data)
    assert (error["code"], error["field"]) == ("invalid_field", field)
    assert user.ok("runner.verification") == {"verification": None}


# MARK: Feedback

def test_feedback_is_numbered(user):
    first = user.ok("feedback.submit", {"text": "The map is slow.\nPlease fix.", "contact": "wx: abc"})["feedback_id"]
    second = user.ok("feedback.submit", {"text": "Thanks!"})["feedback_id"]
    assert second == first + 1


@pytest.mark.parametrize("data, field", [
    ({}, "text"),
    ({"text": "   "}, "text"),
    ({"text": "t" * 1001}, "text"),
    ({"text": "ok", "contact": "c" * 101}, "contact"),
    ({"text": "ok", "contact": 5}, "contact"),
    ({"text": "ok", "rating": 5}, "rating"),
])
def test_feedback_refuses_bad_fields(user, data, field):
    error = user.error("feedback.submit", data)
    assert (error["code"], error["field"]) == ("invalid_field", field)
    assert user.ok("feedback.submit", {"text": "still works"})["feedback_id"] >= 1
