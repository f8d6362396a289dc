"""Operating the server: `--version`, `check-config`, `/healthz`, `/readyz`, `/metrics` moving
as traffic moves, graceful shutdown with clients connected, and SIGHUP reloading the log level."""
import contextlib
import os
import re
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

import pytest
from websockets.exceptions import ConnectionClosed

from bbclient import ADMIN_PHONE, ServerProcess, fresh_phone
from conftest import server_binary
from test_orders_support import connect, express, runner, user


@contextlib.contextmanager
def running(arguments, data=None):
    """A server of its own; `data` reuses a directory (for restarts)."""
    with contextlib.ExitStack() as stack:
        if data is None:
            data = stack.enter_context(tempfile.TemporaryDirectory(prefix="bangbang-e2e-"))
        else:
            # A restart: the new process's "listening" line must be the only one in the log.
            open(os.path.join(data, "server.log"), "w").close()
        process = ServerProcess.start(server_binary(), data, arguments)
        try:
            yield process
        finally:
            process.stop()


def http_get(server, path):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{server.port}{path}", timeout=10) as response:
            return response.status, response.headers.get("Content-Type", ""), response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Content-Type", ""), error.read().decode()


SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$')


def scrape(server):
    """Parses the exposition format: {(name, labels): value}; checks every sample has a TYPE."""
    status, content_type, text = http_get(server, "/metrics")
    assert status == 200 and content_type.startswith("text/plain; version=0.0.4")
    samples, types = {}, {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            types[name] = kind
        elif line and not line.startswith("#"):
            match = SAMPLE.match(line)
            assert match, f"not a sample line: {line!r}"
            name, labels, value = match.groups()
            base = re.sub(r"_(bucket|sum|count)$", "", name)
            assert name in types or base in types, f"{name} has no TYPE"
            samples[(name, labels or "")] = float(value)
    return samples


def value(samples, name, labels=""):
    return samples.get((name, labels), 0.0)


def test_version_prints_the_version_and_exits():
    result = subprocess.run([server_binary(), "--version"], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0 and re.fullmatch(r"bangbang \d+\.\d+\.\d+\n", result.stdout)


def test_check_config_accepts_a_good_file_and_names_the_bad_setting(tmp_path):
    good = tmp_path / "good.conf"
    good.write_text("port = 9000\nrequests-per-second = 20  # per connection\nadmin-phone = 13800138000\n")
    result = subprocess.run([server_binary(), "check-config", "--config", str(good)], capture_output=True, text=True,
                            timeout=30)
    assert result.returncode == 0 and "configuration ok" in result.stdout

    for text, named in [("port = 99999\n", "port"), ("requests-per-second = fast\n", "requests-per-second"),
                        ("handshakes-per-second-per-address = -1\n", "handshakes-per-second-per-address"),
                        ("no-such-setting = 1\n", "no-such-setting")]:
        bad = tmp_path / "bad.conf"
        bad.write_text(text)
        result = subprocess.run([server_binary(), "check-config", "--config", str(bad)], capture_output=True, text=True,
                                timeout=30)
        assert result.returncode == 64, (text, result)
        assert named in result.stderr and "bad.conf:1" in result.stderr, result.stderr


def test_health_and_readiness(server):
    assert http_get(server, "/healthz")[0::2] == (200, "ok\n")
    assert http_get(server, "/readyz")[0::2] == (200, "ready\n")


def test_metrics_move_as_traffic_moves(server):
    before = scrape(server)
    with user(server) as publisher, runner(server) as winner, runner(server) as loser:
        winner.ok("board.subscribe", {"types": ["express"]})
        during = scrape(server)
        assert value(during, "bangbang_connections_open") >= value(before, "bangbang_connections_open") + 3
        order = publisher.ok("order.publish", express())["order"]
        winner.ok("order.accept", {"order_id": order["id"]})
        lost = loser.error("order.accept", {"order_id": order["id"]})
        assert lost["code"] == "order_taken", lost
        assert publisher.error("order.get", {"order_id": 10 ** 12})["code"] == "not_found"
        time.sleep(0.2)
        after = scrape(server)

    def grew(name, labels="", by=1):
        assert value(after, name, labels) >= value(before, name, labels) + by, (name, labels)

    grew("bangbang_connections_opened_total", by=3)
    grew("bangbang_websockets_opened_total", by=3)
    grew("bangbang_requests_total", '{operation_result="auth.login_code:ok"}', by=3)
    grew("bangbang_requests_total", '{operation_result="order.publish:ok"}')
    grew("bangbang_requests_total", '{operation_result="order.accept:ok"}')
    grew("bangbang_requests_total", '{operation_result="order.get:not_found"}')
    grew("bangbang_messages_in_total", by=10)
    grew("bangbang_messages_out_total", by=10)
    grew("bangbang_bytes_in_total", by=1000)
    grew("bangbang_bytes_out_total", by=1000)
    grew("bangbang_accepts_total")
    grew("bangbang_races_lost_total")
    grew("bangbang_pushes_sent_total", by=2)
    grew("bangbang_request_duration_seconds_count", '{operation="order.publish"}')
    # Three logins, a publish and an accept: five records, in at least one batch of the journal.
    grew("bangbang_journal_batch_records_sum", by=5)
    grew("bangbang_journal_batch_records_count")
    grew("bangbang_journal_fsync_seconds_count")
    assert value(after, "bangbang_process_resident_bytes") > 1_000_000
    # The three connections closed: the gauge comes back down.
    deadline = time.monotonic() + 5
    while value(scrape(server), "bangbang_connections_open") > value(during, "bangbang_connections_open") - 3:
        assert time.monotonic() < deadline, "closed connections still counted as open"
        time.sleep(0.05)


def test_graceful_shutdown_tells_clients_1001_and_keeps_everything_acknowledged():
    with tempfile.TemporaryDirectory(prefix="bangbang-e2e-") as data:
        arguments = ["--dev", "--fsync", "always", "--sms-per-ip-hourly", "0"]
        with running(arguments, data) as server:
            publisher = connect(server)
            publisher.login(fresh_phone())
            idle = connect(server)
            orders = [publisher.ok("order.publish", express(tip=100 + n))["order"] for n in range(5)]
            started = time.monotonic()
            server.process.send_signal(signal.SIGTERM)
            for connection in (publisher, idle):
                with pytest.raises(ConnectionClosed) as closed:
                    while True:
                        connection.ws.recv(timeout=10)
                assert closed.value.rcvd is not None and closed.value.rcvd.code == 1001
            assert server.process.wait(timeout=15) == 0
            assert time.monotonic() - started < 10
            assert "event=stopped" in server.log()
        with running(arguments, data) as restarted:
            with connect(restarted) as again:
                again.ok("auth.resume", {"token": publisher.token})
                for order in orders:
                    assert again.ok("order.get", {"order_id": order["id"]})["order"]["tip"] == order["tip"]


def test_sighup_reloads_the_log_level(tmp_path):
    config = tmp_path / "bangbang.conf"
    config.write_text("log-level = info\ndev = true\nfsync = never\n")
    with running(["--config", str(config)]) as server:
        with connect(server) as client:
            client.ok("info.get")
            assert "event=request " not in server.log()
            config.write_text("log-level = debug\ndev = true\nfsync = never\n")
            server.process.send_signal(signal.SIGHUP)
            deadline = time.monotonic() + 5
            while "event=reloaded log_level=debug" not in server.log():
                assert time.monotonic() < deadline, server.log()
                time.sleep(0.05)
            client.call("info.get")
            time.sleep(0.2)
            lines = [line for line in server.log().splitlines() if "event=request " in line]
            assert lines and "level=debug" in lines[-1] and "op=info.get" in lines[-1] and "connection.id=" in lines[-1]
            assert "request.id=" in lines[-1]


def test_logs_never_carry_tokens_passwords_or_secrets():
    with running(["--fsync", "never", "--log-level", "debug", "--sms-per-ip-hourly", "0"]) as server:
        with connect(server) as client:
            # Not the development provider's mode: codes are logged by the SMS stub only.
            reply = client.ok("auth.request_code", {"phone": fresh_phone()})
            assert "dev_code" not in reply
            client.call("auth.login_password", {"phone": fresh_phone(), "password": "correct horse battery"})
            client.call("auth.resume", {"token": "v1.not-a-real-token-but-secretish"})
            client.call("auth.admin_secret", {"secret": "guess-0123456789"})
            secret = open(os.path.join(server.data_dir, "data", "admin-secret")).read().strip()
            time.sleep(0.2)
        log = server.log()
        for forbidden in ["correct horse battery", "not-a-real-token", "guess-0123456789", secret]:
            assert forbidden not in log
        assert "event=admin_secret_refused" in log and "reason=wrong_secret" in log


def test_sighup_reloads_the_request_limits_for_new_connections(tmp_path):
    config = tmp_path / "bangbang.conf"
    config.write_text("dev = true\nfsync = never\nrequests-per-second = 0\n")
    with running(["--config", str(config)]) as server:
        with connect(server) as before:
            assert all(before.call("info.get")["ok"] for _ in range(40)), "unlimited before the reload"
            config.write_text("dev = true\nfsync = never\nrequests-per-second = 2\n")
            server.process.send_signal(signal.SIGHUP)
            deadline = time.monotonic() + 5
            while "event=reloaded" not in server.log():
                assert time.monotonic() < deadline, server.log()
                time.sleep(0.05)
            assert "requests-per-second" in server.log()
            with connect(server) as after:
                codes = [after.call("info.get").get("error", {}).get("code") for _ in range(10)]
                assert "rate_limited" in codes, "a new connection gets the reloaded limit (burst 4)"
            # The connection opened before the reload keeps the limit it started with.
            assert all(before.call("info.get")["ok"] for _ in range(10))


def test_sighup_with_an_unusable_certificate_keeps_serving(tmp_path):
    config = tmp_path / "bangbang.conf"
    config.write_text("dev = true\nfsync = never\n")
    with running(["--config", str(config)]) as server:
        config.write_text("dev = true\nfsync = never\ntls-cert = /nonexistent.pem\ntls-key = /nonexistent.key\n")
        server.process.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 5
        while "event=reload_failed" not in server.log():
            assert time.monotonic() < deadline, server.log()
            time.sleep(0.05)
        with connect(server) as client:
            assert client.call("info.get")["ok"]


def test_refused_handshakes_are_logged_with_their_connection_id():
    import socket
    with running(["--fsync", "never"]) as server:
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as raw:
            raw.sendall(b"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                        b"Sec-WebSocket-Version: 8\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n")
            assert raw.recv(4096).startswith(b"HTTP/1.1 426")
        deadline = time.monotonic() + 5
        while "event=handshake_refused" not in server.log():
            assert time.monotonic() < deadline, server.log()
            time.sleep(0.05)
        line = next(line for line in server.log().splitlines() if "event=handshake_refused" in line)
        assert "connection.id=" in line and "reason=status_426" in line and "remote=127.0.0.1" in line
