"""`bangbang admin` in both modes: against a running server (over /ws, logged in with the admin
secret the server writes to its data directory) and on a stopped server's data directory (a
runner approved offline can accept orders once the server is back). Also `auth.admin_secret`
itself: loopback only, the right secret only, and admin operations only."""
import json
import os
import stat
import subprocess
import tempfile

import pytest

from bbclient import Client, ServerProcess, fresh_phone
from conftest import server_binary
from test_operations import running
from test_orders_support import bounty, changed, connect, express, user

ARGUMENTS = ["--dev", "--fsync", "always", "--sms-per-ip-hourly", "0"]


def data_dir(server):
    return os.path.join(server.data_dir, "data")


def cli(server_or_dir, *arguments, url=None):
    """Runs `bangbang admin …`; returns (exit status, parsed --json output or None, stderr)."""
    directory = server_or_dir if isinstance(server_or_dir, str) else data_dir(server_or_dir)
    command = [server_binary(), "admin", *arguments, "--data-dir", directory]
    if url or not isinstance(server_or_dir, str):
        command += ["--url", url or server_or_dir.url]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    output = None
    if "--json" in arguments and result.stdout.strip():
        output = json.loads(result.stdout)
    return result.returncode, output if output is not None else result.stdout, result.stderr


@pytest.fixture(scope="module")
def server():
    with running(ARGUMENTS) as process:
        yield process


def applicant(server, name="Han Meimei"):
    connection = user(server)
    connection.ok("runner.submit_verification", {"real_name": name, "student_id": f"S{connection.user['id']}",
                                                 "school": "North"})
    return connection


def test_the_server_writes_a_fresh_admin_secret_only_its_user_can_read(server):
    path = os.path.join(data_dir(server), "admin-secret")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    secret = open(path).read().strip()
    assert len(secret) == 64 and all(c in "0123456789abcdef" for c in secret)
    assert secret not in server.log()


def test_the_admin_secret_logs_in_the_built_in_administrator_for_admin_operations_only(server):
    secret = open(os.path.join(data_dir(server), "admin-secret")).read().strip()
    with connect(server) as connection:
        wrong = connection.error("auth.admin_secret", {"secret": "0" * 64})
        assert wrong["code"] == "unauthenticated"
        assert connection.error("admin.pending_verifications")["code"] == "unauthenticated"
        assert connection.error("auth.admin_secret", {"secret": secret[:-1]})["code"] == "unauthenticated"
        assert connection.ok("auth.admin_secret", {"secret": secret})["administrator"] == 0
        assert "users" in connection.ok("admin.pending_verifications")
        assert connection.error("profile.get")["code"] == "forbidden"
        assert connection.error("order.publish", express())["code"] == "forbidden"
    log = server.log()
    assert "reason=wrong_secret" in log and "event=admin_logged_in" in log


def test_online_pending_then_approve_tells_the_applicant_live(server):
    with applicant(server) as runner:
        status, pending, _ = cli(server, "pending", "--json")
        assert status == 0
        assert runner.user["id"] in [entry["id"] for entry in pending["users"]]
        status, table, _ = cli(server, "pending")
        assert status == 0 and "Han Meimei" in table and "VERIFICATION.STATUS" in table

        status, decided, _ = cli(server, "approve", str(runner.user["id"]), "--json")
        assert status == 0 and decided["user"]["verification"]["status"] == "approved"
        event = runner.wait_event(lambda e: e["event"] == "runner.verification_decided")
        assert event["data"]["status"] == "approved"
        assert "event=admin_action" in server.log() and f"subject={runner.user['id']}" in server.log()

        status, _, error = cli(server, "approve", str(runner.user["id"]))
        assert status == 1 and "verification_not_pending" in error


def test_online_reject_needs_a_reason_and_the_applicant_reads_it(server):
    with applicant(server) as runner:
        status, _, error = cli(server, "reject", str(runner.user["id"]))
        assert status == 64 and "--reason" in error
        status, decided, _ = cli(server, "reject", str(runner.user["id"]), "--reason", "student id unreadable", "--json")
        assert status == 0 and decided["user"]["verification"]["rejection_reason"] == "student id unreadable"
        assert runner.ok("runner.verification")["verification"]["status"] == "rejected"


def test_online_user_lookup_by_id_and_phone_and_feedback(server):
    phone = fresh_phone()
    with connect(server) as someone:
        someone.login(phone)
        someone.ok("feedback.submit", {"text": "the map is upside down"})
        status, by_id, _ = cli(server, "user", str(someone.user["id"]), "--json")
        assert status == 0 and by_id["user"]["phone"] == phone
        status, by_phone, _ = cli(server, "user", "--phone", phone, "--json")
        assert status == 0 and by_phone["user"]["id"] == someone.user["id"]
        status, feedback, _ = cli(server, "feedback", "--limit", "5", "--json")
        assert status == 0 and feedback["feedback"][0]["text"] == "the map is upside down"
        status, _, error = cli(server, "user", "999999")
        assert status == 1 and "not_found" in error


def test_online_grant_and_revoke_admin(server):
    with user(server) as someone:
        assert someone.error("admin.pending_verifications")["code"] == "forbidden"
        status, granted, _ = cli(server, "grant-admin", str(someone.user["id"]), "--json")
        assert status == 0 and granted["user"]["is_administrator"] is True
        assert "users" in someone.ok("admin.pending_verifications")
        status, revoked, _ = cli(server, "revoke-admin", str(someone.user["id"]), "--json")
        assert status == 0 and revoked["user"]["is_administrator"] is False
        assert someone.error("admin.pending_verifications")["code"] == "forbidden"
        status, _, error = cli(server, "revoke-admin", str(someone.user["id"]))
        assert status == 1 and "administrator_unchanged" in error


def test_online_order_lookup_shows_the_whole_order(server):
    with user(server) as publisher:
        order = publisher.ok("order.publish", express(code=True))["order"]
        status, found, _ = cli(server, "order", str(order["id"]), "--json")
        assert status == 0 and found["order"]["id"] == order["id"]
        assert found["order"]["details"]["pickup_code"] == "8-2-1043"
        assert found["order"]["delivery_code"] == order["delivery_code"]
        status, _, error = cli(server, "order", str(order["id"] + (1 << 40)))
        assert status == 1 and "not_found" in error
        assert publisher.error("admin.order", {"order_id": order["id"]})["code"] == "forbidden"
        secret = open(os.path.join(data_dir(server), "admin-secret")).read().strip()
        with connect(server) as operator:
            operator.ok("auth.admin_secret", {"secret": secret})
            # Over /ws the reply is checked against protocol/schemas/ops-accounts.json.
            assert operator.ok("admin.order", {"order_id": order["id"]})["order"]["publisher"] == publisher.user["id"]


def test_online_journal_lists_the_files_without_touching_the_lock(server):
    status, journal, _ = cli(server, "journal", "--json")
    assert status == 0 and journal["server_running"] is True
    segments = [f for f in journal["files"] if f["kind"] == "segment"]
    assert segments and segments[0]["first_sequence"] >= 1 and segments[0]["bytes"] > 16
    assert "records_after_snapshot" not in journal


def test_offline_mode_is_refused_while_the_server_runs(server):
    status, _, error = cli(data_dir(server), "pending", "--offline")
    assert status == 70 and "running" in error


def test_a_missing_data_directory_is_never_created(tmp_path):
    missing = str(tmp_path / "typo")
    status, _, error = cli(missing, "pending")
    assert status == 70 and "no data directory" in error and not os.path.exists(missing)


def test_usage_errors_exit_64():
    assert cli("/nonexistent", "frobnicate")[0] == 64
    assert cli("/nonexistent", "approve", "abc")[0] == 64
    result = subprocess.run([server_binary(), "admin", "--help"], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0 and "grant-admin USER_ID" in result.stdout and "admin-secret" in result.stdout


def test_offline_approval_on_a_stopped_server_lets_the_runner_accept_after_restart():
    with tempfile.TemporaryDirectory(prefix="bangbang-e2e-") as data:
        with running(ARGUMENTS, data) as first:
            runner = applicant(first, name="Li Lei")
            runner_id, token = runner.user["id"], runner.token
            runner.close()
            publisher = user(first)
            publisher_token = publisher.token
            publisher.close()
        directory = os.path.join(data, "data")

        status, pending, _ = cli(directory, "pending", "--json")
        assert status == 0 and [entry["id"] for entry in pending["users"]] == [runner_id]
        status, _, error = cli(directory, "pending", "--online", url="ws://127.0.0.1:1/ws")
        assert status == 69, error
        status, decided, _ = cli(directory, "approve", str(runner_id), "--json")
        assert status == 0 and decided["user"]["verification"]["status"] == "approved"
        status, journal, _ = cli(directory, "journal", "--json")
        assert status == 0 and journal["server_running"] is False
        # The graceful stop snapshotted everything before it; only the offline decision follows.
        assert journal["records_after_snapshot"] == {"account.verificationDecided": 1}
        assert journal["last_sequence"] == 4, "two registrations, a submission, the decision"

        with running(ARGUMENTS, data) as second:
            with connect(second) as courier, connect(second) as owner:
                courier.ok("auth.resume", {"token": token})
                owner.ok("auth.resume", {"token": publisher_token})
                assert courier.ok("profile.get")["user"]["is_verified_runner"] is True
                order = owner.ok("order.publish", express())["order"]
                taken = courier.ok("order.accept", {"order_id": order["id"]})["order"]
                assert taken["status"] == "accepted" and taken["runner"] == runner_id
            status, found, _ = cli(second, "user", str(runner_id), "--json")
            assert status == 0 and found["user"]["verification"]["status"] == "approved"


def non_loopback_address():
    """An address of this machine other than loopback, or None."""
    import socket
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.255.255.255", 1))
            address = probe.getsockname()[0]
        except OSError:
            return None
    return None if address.startswith("127.") else address


def test_the_admin_secret_is_refused_from_a_non_loopback_address():
    address = non_loopback_address()
    if address is None:
        pytest.skip("this machine has no non-loopback IPv4 address")
    with running(ARGUMENTS + ["--host", "0.0.0.0"]) as server:
        secret = open(os.path.join(data_dir(server), "admin-secret")).read().strip()
        with Client(f"ws://{address}:{server.port}/ws") as remote:
            refused = remote.error("auth.admin_secret", {"secret": secret})
            assert refused["code"] == "forbidden" and "loopback" in refused["message"]
            assert remote.error("admin.pending_verifications")["code"] == "unauthenticated"
        assert "reason=not_loopback" in server.log()


def test_admin_stats_counts_connections_users_boards_and_publishes():
    """Its own server, so every number is known: two publishers, one watching runner, one
    application waiting."""
    with running(ARGUMENTS) as server:
        secret = open(os.path.join(data_dir(server), "admin-secret")).read().strip()
        with connect(server) as console, user(server) as alice, user(server) as bob, applicant(server):
            assert console.ok("auth.admin_secret", {"secret": secret})["administrator"] == 0
            before = console.ok("admin.stats")
            assert before["users_online"] == 3 and before["pending_verifications"] == 1
            assert before["connections"] >= 4
            assert before["published_last_minute"] == 0
            alice.ok("order.publish", express())
            alice.ok("order.publish", express())
            bob.ok("order.publish", bounty())
            after = console.ok("admin.stats")
            assert after["published_last_minute"] == 3
            assert after["types"]["express"] == {"open": 2, "runners_online": 0, "published_last_minute": 2}
            assert after["types"]["bounty"]["open"] == 1 and after["types"]["bounty"]["published_last_minute"] == 1
            assert after["types"]["group"]["open"] == 0
            assert alice.error("admin.stats")["code"] == "forbidden"
            assert console.error("admin.stats", {"extra": 1})["code"] == "invalid_field"
