"""Administration, end to end: reviewing runner verifications (the applicant hears the verdict
live and may then accept orders), reading feedback page by page, granting and revoking
administration, looking users up — and `forbidden` for everyone else."""
import tempfile
import time

import pytest

from bbclient import ADMIN_PHONE, ServerProcess, fresh_phone
from conftest import server_binary


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
    """The configured administrator, logged in once: a phone gets one code a minute."""
    with server.client() as connection:
        connection.login(ADMIN_PHONE, device="admin")
        yield connection


@pytest.fixture
def user(server):
    with server.client() as connection:
        connection.login(fresh_phone())
        yield connection


def apply_as_runner(connection, name="李雷"):
    return connection.ok("runner.submit_verification", {"real_name": name, "student_id": "S1", "school": "North"})


ADMIN_OPS = [
    ("admin.pending_verifications", {}),
    ("admin.decide_verification", {"user_id": 1, "decision": "approve"}),
    ("admin.list_feedback", {}),
    ("admin.grant_admin", {"user_id": 1}),
    ("admin.revoke_admin", {"user_id": 1}),
    ("admin.user", {"user_id": 1}),
]


@pytest.mark.parametrize("op, data", ADMIN_OPS)
def test_administration_is_forbidden_to_users(user, op, data):
    assert user.error(op, data)["code"] == "forbidden"
    assert user.ok("profile.get")["user"]["is_administrator"] is False


@pytest.mark.parametrize("op, data", ADMIN_OPS)
def test_administration_needs_a_login(client, op, data):
    assert client.error(op, data)["code"] == "unauthenticated"


def test_the_configured_administrator_knows_it(boss):
    assert boss.ok("profile.get")["user"]["is_administrator"] is True


# MARK: Verification review

def test_approval_reaches_the_runner_live_and_lets_them_accept(server, boss, user):
    applicant = user.ok("profile.get")["user"]["id"]
    apply_as_runner(user)
    pending = boss.ok("admin.pending_verifications")["users"]
    mine = [u for u in pending if u["id"] == applicant]
    assert len(mine) == 1 and mine[0]["verification"]["status"] == "pending" and mine[0]["phone"]
    with server.client() as publisher:
        publisher.login(fresh_phone())
        deadline = int(time.time() * 1000) + 3_600_000
        order = publisher.ok("order.publish", {"type": "bounty", "campus": "North", "deadline": deadline, "tip": 100,
                                               "details": {"title": "carry", "description": "a box"}})["order"]
        assert user.error("order.accept", {"order_id": order["id"]})["code"] == "runner_not_verified"
        decided = boss.ok("admin.decide_verification", {"user_id": applicant, "decision": "approve"})["user"]
        assert decided["is_verified_runner"] is True and decided["verification"]["status"] == "approved"
        event = user.wait_event(lambda e: e["event"] == "runner.verification_decided")
        assert event["data"] == {"status": "approved"}
        assert user.ok("order.accept", {"order_id": order["id"]})["order"]["status"] == "accepted"
    assert applicant not in [u["id"] for u in boss.ok("admin.pending_verifications")["users"]]
    error = boss.error("admin.decide_verification", {"user_id": applicant, "decision": "reject", "reason": "late"})
    assert error["code"] == "verification_not_pending"
    assert user.error("runner.submit_verification", {"real_name": "x", "student_id": "1", "school": "North"})["code"] \
        == "verification_in_progress"


def test_rejection_carries_the_reason_and_allows_a_new_application(boss, user):
    applicant = user.ok("profile.get")["user"]["id"]
    apply_as_runner(user)
    boss.ok("admin.decide_verification", {"user_id": applicant, "decision": "reject", "reason": " blurry photo "})
    event = user.wait_event(lambda e: e["event"] == "runner.verification_decided")
    assert event["data"] == {"status": "rejected", "reason": "blurry photo"}
    status = user.ok("runner.verification")["verification"]
    assert status["status"] == "rejected" and status["rejection_reason"] == "blurry photo"
    assert apply_as_runner(user, name="韩梅梅")["verification"]["status"] == "pending"


@pytest.mark.parametrize("data, code, field", [
    ({"decision": "approve"}, "invalid_field", "user_id"),
    ({"user_id": 1}, "invalid_field", "decision"),
    ({"user_id": 1, "decision": "maybe"}, "invalid_field", "decision"),
    ({"user_id": 1, "decision": "reject"}, "invalid_field", "reason"),
    ({"user_id": 1, "decision": "approve", "reason": "fine"}, "invalid_field", "reason"),
    ({"user_id": 999_999, "decision": "approve"}, "not_found", "user"),
])
def test_decide_verification_refuses_bad_input(boss, data, code, field):
    error = boss.error("admin.decide_verification", data)
    assert (error["code"], error.get("field")) == (code, field)
    assert boss.ok("admin.pending_verifications")


def test_rejection_reason_limits(boss, user):
    applicant = user.ok("profile.get")["user"]["id"]
    apply_as_runner(user)
    for reason, field in (("   ", "reason"), ("r" * 201, "reason")):
        error = boss.error("admin.decide_verification", {"user_id": applicant, "decision": "reject", "reason": reason})
        assert (error["code"], error["field"]) == ("invalid_field", field)
    assert user.ok("runner.verification")["verification"]["status"] == "pending"


def test_deciding_without_an_application(boss, user):
    applicant = user.ok("profile.get")["user"]["id"]
    error = boss.error("admin.decide_verification", {"user_id": applicant, "decision": "approve"})
    assert error["code"] == "verification_not_pending"


# MARK: Feedback

def test_feedback_pages_newest_first(boss, user):
    ids = [user.ok("feedback.submit", {"text": f"note {n}", **({"contact": "me"} if n == 0 else {})})["feedback_id"]
           for n in range(3)]
    first = boss.ok("admin.list_feedback", {"limit": 2})
    assert [f["id"] for f in first["feedback"]] == [ids[2], ids[1]]
    assert first["feedback"][0]["text"] == "note 2" and first["feedback"][0]["user_id"] == user.user["id"]
    second = boss.ok("admin.list_feedback", {"limit": 2, "before": first["next_before"]})
    assert second["feedback"][0]["id"] == ids[0] and second["feedback"][0]["contact"] == "me"
    everything = boss.ok("admin.list_feedback", {"limit": 100})
    assert "next_before" not in everything and everything["feedback"][-1]["id"] == 1
    assert boss.ok("admin.list_feedback", {"before": 1}) == {"feedback": []}


@pytest.mark.parametrize("data, field", [
    ({"limit": 0}, "limit"),
    ({"limit": 101}, "limit"),
    ({"before": 0}, "before"),
    ({"page": 2}, "page"),
])
def test_list_feedback_refuses_bad_paging(boss, data, field):
    error = boss.error("admin.list_feedback", data)
    assert (error["code"], error["field"]) == ("invalid_field", field)


# MARK: Granting administration

def test_grant_and_revoke_administration(boss, user):
    target = user.ok("profile.get")["user"]["id"]
    granted = boss.ok("admin.grant_admin", {"user_id": target})["user"]
    assert granted["is_administrator"] is True
    assert user.wait_event(lambda e: e["event"] == "account.administrator_changed")["data"] == {"is_administrator": True}
    assert "feedback" in user.ok("admin.list_feedback")
    assert boss.error("admin.grant_admin", {"user_id": target})["code"] == "administrator_unchanged"
    # A granted administrator may not revoke the configured one.
    assert user.error("admin.revoke_admin", {"user_id": boss.user["id"]})["code"] == "forbidden"
    revoked = boss.ok("admin.revoke_admin", {"user_id": target})["user"]
    assert revoked["is_administrator"] is False
    assert user.wait_event(lambda e: e["event"] == "account.administrator_changed")["data"] == {"is_administrator": False}
    assert user.error("admin.list_feedback")["code"] == "forbidden"
    assert boss.error("admin.revoke_admin", {"user_id": target})["code"] == "administrator_unchanged"


def test_an_administrator_may_revoke_their_own_grant(boss, user):
    target = user.ok("profile.get")["user"]["id"]
    boss.ok("admin.grant_admin", {"user_id": target})
    mine = user.ok("admin.revoke_admin", {"user_id": target})["user"]
    assert mine["id"] == target and mine["is_administrator"] is False
    assert user.error("admin.pending_verifications")["code"] == "forbidden"


@pytest.mark.parametrize("op", ["admin.grant_admin", "admin.revoke_admin"])
@pytest.mark.parametrize("data, code, field", [
    ({}, "invalid_field", "user_id"),
    ({"user_id": -3}, "invalid_field", "user_id"),
    ({"user_id": 999_999}, "not_found", "user"),
])
def test_grant_and_revoke_refuse_bad_input(boss, op, data, code, field):
    error = boss.error(op, data)
    assert (error["code"], error.get("field")) == (code, field)


# MARK: Looking users up

def test_look_up_by_id_or_phone_shows_everything(boss, user):
    me = user.ok("profile.get")["user"]
    assert boss.ok("admin.user", {"user_id": me["id"]})["user"] == me
    assert boss.ok("admin.user", {"phone": me["phone"][3:]})["user"] == me


@pytest.mark.parametrize("data, code, field", [
    ({}, "invalid_field", "user_id"),
    ({"user_id": 1, "phone": "+8613000000000"}, "invalid_field", "phone"),
    ({"phone": "nope"}, "invalid_field", "phone"),
    ({"phone": "+8613999999999"}, "not_found", "phone"),
    ({"user_id": 999_999}, "not_found", "user"),
])
def test_look_up_refuses_bad_input(boss, data, code, field):
    error = boss.error("admin.user", data)
    assert (error["code"], error.get("field")) == (code, field)
    assert boss.ok("admin.user", {"phone": ADMIN_PHONE})["user"]["is_administrator"] is True
