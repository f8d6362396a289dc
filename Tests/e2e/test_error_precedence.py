"""Error precedence (protocol/README.md): requests that break two rules at once get the error of
the rule that comes first — bad_request, unknown_operation, rate_limited (request rates),
unauthenticated, invalid_field (in table order), forbidden, not_found, the operation's own
state errors, and the SMS and password limits last."""
import json
import os
import tempfile

import pytest

from bbclient import ADMIN_PHONE, ServerProcess, admin, fresh_phone
from conftest import server_binary
from test_orders_support import connect, express, now_ms, user

NO_SHARD_ORDER = 99 << 8 | 255   # names a shard no server has: no such order
NO_SUCH_ORDER = 99_999 << 8      # a shard that exists, an order it never had


@pytest.fixture(scope="module")
def server():
    with tempfile.TemporaryDirectory(prefix="bangbang-e2e-") as data:
        process = ServerProcess.start(server_binary(), data, ["--dev", "--fsync", "never", "--sms-per-ip-hourly", "0",
                                                              "--admin-phone", ADMIN_PHONE])
        try:
            yield process
        finally:
            process.stop()


@pytest.fixture(scope="module")
def boss(server):
    with admin(server) as connection:
        yield connection


def code_and_field(error):
    return error["code"], error.get("field")


# MARK: Before the operation

def test_bad_request_comes_before_everything(client):
    client.send_raw(json.dumps({"id": 1, "op": "no.such", "data": {"x": 1}, "extra": True}))
    assert client.receive()["error"]["code"] == "bad_request"


def test_unknown_operation_and_rate_limited_come_before_login_and_fields():
    with tempfile.TemporaryDirectory(prefix="bangbang-e2e-") as data:
        limited = ServerProcess.start(server_binary(), data, ["--dev", "--fsync", "never", "--requests-per-second", "1"])
        try:
            with limited.client() as client:
                while client.call("info.get")["ok"]:
                    pass                                              # the burst (2) is used up
                assert client.error("no.such", {"x": 1})["code"] == "unknown_operation", "even over the rate"
                refused = client.error("order.publish", {"type": "taxi"})
                assert refused["code"] == "rate_limited", "before unauthenticated and invalid_field"
                assert refused["retry_after_ms"] > 0
        finally:
            limited.stop()


@pytest.mark.parametrize("op, data", [
    ("order.publish", {"type": "taxi", "tips": 1}),
    ("profile.update", {"nickname": 5}),
    ("order.raise_tip", {"order_id": -3, "tip": "lots"}),
    ("admin.user", {"phone": "not a phone"}),
    ("auth.request_code", {"phone": "not a phone", "purpose": "change_phone"}),
    ("auth.request_code", {"purpose": "change_phone", "phones": ["+8613800138000"]}),
    ("auth.logout", {"everywhere": True}),
])
def test_unauthenticated_comes_before_bad_fields(client, op, data):
    assert client.error(op, data)["code"] == "unauthenticated"


def test_the_built_in_administrator_is_forbidden_user_operations_whatever_their_fields(server):
    secret = open(os.path.join(server.data_dir, "data", "admin-secret")).read().strip()
    with server.client() as operator:
        operator.ok("auth.admin_secret", {"secret": secret})
        assert operator.error("order.publish", {"type": "taxi"})["code"] == "forbidden"
        assert code_and_field(operator.error("admin.user", {"phone": "no"})) == ("invalid_field", "phone")


# MARK: Fields

def test_an_unknown_field_is_named_before_the_fields_of_the_table(server):
    with user(server) as someone:
        assert code_and_field(someone.error("order.publish", {"type": "taxi", "tips": 1})) == ("invalid_field", "tips")


@pytest.mark.parametrize("op, data, field", [
    # The first bad field in the table wins, whatever kind of mistake each one is.
    ("auth.login_code", {"phone": "12345", "code": 123456}, "phone"),
    ("auth.login_password", {"phone": "+8613800138000", "password": "x", "device": "bad\u0007name"}, "device"),
    ("profile.update", {"nickname": "", "gender": "robot"}, "nickname"),
    ("profile.update", {"avatar_url": "ftp://x", "bio": 7}, "avatar_url"),
    ("runner.submit_verification", {"real_name": "   ", "student_id": 42, "school": "North"}, "real_name"),
    ("feedback.submit", {"text": "", "contact": 5}, "text"),
    ("order.publish", {"type": "bounty", "campus": " ", "deadline": "soon", "tip": 100,
                       "details": {"title": 1, "description": "d"}}, "campus"),
    ("order.publish", {"type": "bounty", "campus": "North", "deadline": 1, "tip": "lots",
                       "details": {"title": "t", "description": "d"}}, "deadline"),
    ("order.publish", {"type": "bounty", "campus": "North", "deadline": now_ms() + 3_600_000, "tip": -1,
                       "details": {"title": 5}}, "tip"),
    ("order.rate", {"order_id": NO_SUCH_ORDER, "stars": 6, "comment": 3}, "stars"),
])
def test_fields_are_checked_in_the_order_of_the_table(server, op, data, field):
    with user(server) as someone:
        assert code_and_field(someone.error(op, data)) == ("invalid_field", field)


def test_publish_reads_details_whole_before_their_limits(server):
    with user(server) as someone:
        draft = express()
        draft["details"]["pickup_station"] = " "          # out of its limits
        draft["details"]["contact_phone"] = 13812345678    # mistyped, later in the table
        assert code_and_field(someone.error("order.publish", draft)) == ("invalid_field", "details.contact_phone")
        draft["details"]["contact_phone"] = "13812345678"
        assert code_and_field(someone.error("order.publish", draft)) == ("invalid_field", "details.pickup_station")


# MARK: Fields before who, what and the state

@pytest.mark.parametrize("op, data, field", [
    ("admin.user", {"phone": "not a phone"}, "phone"),
    ("admin.decide_verification", {"user_id": 1, "decision": "reject", "reason": "x" * 201}, "reason"),
    ("admin.grant_admin", {"user_id": 0}, "user_id"),
    ("admin.list_feedback", {"limit": 101}, "limit"),
])
def test_invalid_field_comes_before_forbidden(server, op, data, field):
    with user(server) as someone:
        assert code_and_field(someone.error(op, data)) == ("invalid_field", field)


@pytest.mark.parametrize("op, data, field", [
    ("order.raise_tip", {"order_id": NO_SHARD_ORDER, "tip": -1}, "tip"),
    ("order.raise_tip", {"order_id": NO_SUCH_ORDER, "tip": 50_001}, "tip"),
    ("order.cancel", {"order_id": NO_SHARD_ORDER, "reason": "x" * 1001}, "reason"),
    ("order.deliver", {"order_id": NO_SUCH_ORDER, "code": "x" * 17}, "code"),
    ("order.rate", {"order_id": NO_SHARD_ORDER, "stars": 5, "comment": "x" * 201}, "comment"),
])
def test_invalid_field_comes_before_not_found(server, op, data, field):
    with user(server) as someone:
        assert code_and_field(someone.error(op, data)) == ("invalid_field", field)


@pytest.mark.parametrize("op, data", [
    ("admin.order", {"order_id": NO_SHARD_ORDER}),
    ("admin.order", {"order_id": NO_SUCH_ORDER}),
    ("admin.grant_admin", {"user_id": 9_999_999}),
    ("admin.revoke_admin", {"user_id": 9_999_999}),
    ("admin.user", {"user_id": 9_999_999}),
    ("admin.decide_verification", {"user_id": 9_999_999, "decision": "approve"}),
])
def test_forbidden_comes_before_not_found(server, op, data):
    with user(server) as someone:
        assert someone.error(op, data)["code"] == "forbidden"


def test_forbidden_comes_before_administrator_unchanged(server, boss):
    with user(server) as someone:
        # Not an administrator, granting to one who already is: forbidden, not unchanged.
        assert someone.error("admin.grant_admin", {"user_id": boss.user["id"]})["code"] == "forbidden"
        # An administrator revoking the configured one, who holds no grant: forbidden (only the
        # configuration can), not administrator_unchanged.
        boss.ok("admin.grant_admin", {"user_id": someone.user["id"]})
        assert someone.error("admin.revoke_admin", {"user_id": boss.user["id"]})["code"] == "forbidden"
        assert someone.error("admin.grant_admin", {"user_id": boss.user["id"]})["code"] == "administrator_unchanged"
        boss.ok("admin.revoke_admin", {"user_id": someone.user["id"]})


def test_a_verification_with_bad_fields_is_invalid_field_while_one_is_pending(server):
    with user(server) as applicant:
        applicant.ok("runner.submit_verification", {"real_name": "Li Lei", "student_id": "S1", "school": "North"})
        error = applicant.error("runner.submit_verification", {"real_name": "Li Lei", "student_id": "S 1", "school": "North"})
        assert code_and_field(error) == ("invalid_field", "student_id")
        again = applicant.error("runner.submit_verification", {"real_name": "Li Lei", "student_id": "S1", "school": "North"})
        assert again["code"] == "verification_in_progress"


# MARK: The state before the SMS and password limits

def test_phone_taken_comes_before_rate_limited_and_uses_up_no_send(server):
    with user(server) as owner, user(server) as mover:
        taken = owner.user["phone"]                     # a code went to it moments ago, at its login
        assert mover.error("auth.request_code", {"phone": taken, "purpose": "change_phone"})["code"] == "phone_taken"
        free = fresh_phone()
        assert mover.ok("auth.request_code", {"phone": free, "purpose": "change_phone"})["phone"] == free
        error = mover.error("auth.request_code", {"phone": free, "purpose": "change_phone"})
        assert error["code"] == "rate_limited" and 0 < error["retry_after_ms"] <= 60_000


def test_field_errors_come_before_a_password_lock_and_the_lock_before_the_password(server):
    phone = fresh_phone()
    with connect(server) as owner:
        owner.login(phone)
        owner.ok("auth.set_password", {"password": "the real one"})
        for _ in range(5):
            owner.error("auth.change_password", {"old_password": "wrong one", "new_password": "a new password"})
        locked = owner.error("auth.change_password", {"old_password": "the real one", "new_password": "a new password"})
        assert locked["code"] == "rate_limited" and locked["retry_after_ms"] > 0
        short = owner.error("auth.change_password", {"old_password": "the real one", "new_password": "short"})
        assert code_and_field(short) == ("invalid_field", "new_password")
    with connect(server) as other:
        bad_device = other.error("auth.login_password", {"phone": phone, "password": "the real one", "device": "a\u0000b"})
        assert code_and_field(bad_device) == ("invalid_field", "device")
        assert other.error("auth.login_password", {"phone": phone, "password": "the real one"})["code"] == "rate_limited"
