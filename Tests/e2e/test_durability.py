"""Durability over real connections: a full disk (a tiny tmpfs when the test may mount one, and
the server's test switch that makes journal writes fail with ENOSPC) gives `storage_unavailable`,
keeps queries working, corrupts nothing and recovers when space returns; a graceful shutdown
leaves a snapshot and nothing to replay; a data directory that is locked by another server, is
read-only, or is not a directory is refused with a clear message."""
import os
import pathlib
import subprocess
import time

import pytest

from bbclient import ServerProcess, fresh_phone
from conftest import server_binary

BASE = ["--dev", "--fsync", "always"]
FULL_DISK_VARIABLE = "BANGBANG_TEST_FULL_DISK_FILE"


def publish(client, title):
    deadline = int(time.time() * 1000) + 3_600_000
    return client.call("order.publish", {"type": "bounty", "campus": "North", "deadline": deadline, "tip": 100,
                                         "details": {"title": title, "description": "durability test"}})


def publish_once_space_returns(client, title, attempts=100):
    """The first change after space returns may still meet the rebuild in progress."""
    for _ in range(attempts):
        reply = publish(client, title)
        if reply["ok"]:
            return reply["data"]["order"]
        assert reply["error"]["code"] == "storage_unavailable", reply
        time.sleep(0.05)
    raise AssertionError("changes are still refused after space returned")


def restart(server, arguments, environment=None):
    server.process.kill()
    server.process.wait()
    with open(server.log_path, "rb") as log, open(server.log_path + ".previous", "ab") as kept:
        kept.write(log.read())
    open(server.log_path, "wb").close()
    return start(server.data_dir, arguments, environment)


def start(data_dir, arguments, environment=None):
    saved = dict(os.environ)
    os.environ.update(environment or {})
    try:
        return ServerProcess.start(server_binary(), data_dir, BASE + arguments)
    finally:
        os.environ.clear()
        os.environ.update(saved)


def expect_refused(data_dir, arguments=()):
    """Starts a server that must refuse to run; returns its log."""
    with pytest.raises(RuntimeError) as refused:
        start(data_dir, list(arguments)).stop()
    return str(refused.value)


def test_injected_full_disk_refuses_changes_keeps_queries_and_recovers(tmp_path):
    flag = tmp_path / "disk-is-full"
    server = start(str(tmp_path), [], {FULL_DISK_VARIABLE: str(flag)})
    try:
        with server.client() as client:
            client.login(fresh_phone())
            kept = publish(client, "before the disk filled")["data"]["order"]

            flag.touch()
            for attempt in range(3):
                reply = publish(client, f"refused {attempt}")
                assert not reply["ok"] and reply["error"]["code"] == "storage_unavailable", reply
            with server.client() as newcomer:
                code = newcomer.ok("auth.request_code", {"phone": fresh_phone()})
                assert code["dev_code"]
            # Queries keep working and show nothing of the refused changes.
            assert client.ok("order.get", {"order_id": kept["id"]})["order"]["details"]["title"] == "before the disk filled"
            listed = client.ok("board.subscribe", {"types": ["bounty"]})
            assert [order["details"]["title"] for order in listed["orders"]] == ["before the disk filled"]

            flag.unlink()
            later = publish_once_space_returns(client, "after space returned")
        assert "event=state_rebuilt" in server.log()

        server = restart(server, [])
        assert "journal_recovery" not in server.log(), "a refused write must leave nothing to repair"
        with server.client() as client:
            client.login(fresh_phone())
            titles = [order["details"]["title"] for order in client.ok("board.subscribe", {"types": ["bounty"]})["orders"]]
            assert sorted(titles) == ["after space returned", "before the disk filled"]
            assert client.ok("order.get", {"order_id": later["id"]})["order"]["status"] == "open"
    finally:
        server.stop()


@pytest.fixture
def tiny_tmpfs(tmp_path):
    mount_point = tmp_path / "tiny"
    mount_point.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount_point)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a 2 MiB tmpfs here ({mounted.stderr.strip() or 'mount failed'}); "
                    "the injected full-disk test covers the same path")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


def test_real_full_disk_on_a_tiny_tmpfs(tmp_path, tiny_tmpfs):
    server = start(str(tiny_tmpfs), [])
    acknowledged = []
    try:
        with server.client() as client:
            client.login(fresh_phone())
            acknowledged.append(publish(client, "first")["data"]["order"]["id"])
            # Fill the file system, leaving no room for the next journal batch.
            filler = tiny_tmpfs / "filler"
            descriptor = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o644)
            try:
                while True:
                    os.write(descriptor, b"\0" * 4096)
            except OSError:
                pass
            finally:
                os.close(descriptor)
            refused = 0
            for attempt in range(20):
                reply = publish(client, f"on a full disk {attempt}")
                if reply["ok"]:
                    acknowledged.append(reply["data"]["order"]["id"])   # a partly filled page may still fit one
                else:
                    assert reply["error"]["code"] == "storage_unavailable", reply
                    refused += 1
            assert refused > 0, "a full file system must refuse changes"
            assert server.process.poll() is None, "the server must keep running on a full disk"
            assert client.ok("order.get", {"order_id": acknowledged[0]})["order"]["status"] == "open"

            filler.unlink()
            acknowledged.append(publish_once_space_returns(client, "after space returned")["id"])

        server = restart(server, [])
        with server.client() as client:
            client.login(fresh_phone())
            for order_id in acknowledged:
                assert client.ok("order.get", {"order_id": order_id})["order"]["status"] == "open"
    finally:
        server.stop()


def test_graceful_shutdown_writes_a_final_snapshot(tmp_path):
    server = start(str(tmp_path), ["--snapshot-interval", "3600"])
    with server.client() as client:
        client.login(fresh_phone())
        order = publish(client, "kept by the snapshot")["data"]["order"]
    assert server.stop() == 0
    assert "event=snapshot_written" in server.log() and "reason=shutdown" in server.log()
    data = pathlib.Path(tmp_path) / "data"
    assert any(name.startswith("snapshot") for name in os.listdir(data))
    server = restart(server, [])
    try:
        assert " records=0 " in server.log() + " ", "a graceful shutdown should leave no journal to replay"
        with server.client() as client:
            client.login(fresh_phone())
            assert client.ok("order.get", {"order_id": order["id"]})["order"]["details"]["title"] == "kept by the snapshot"
    finally:
        server.stop()


def test_a_second_server_on_the_same_directory_is_refused(tmp_path):
    server = start(str(tmp_path), [])
    try:
        other = tmp_path / "other-log"
        other.mkdir()
        os.symlink(tmp_path / "data", other / "data")
        message = expect_refused(str(other))
        assert "locked by another running server" in message
        assert server.process.poll() is None
    finally:
        server.stop()


def test_a_data_directory_that_is_a_file_is_refused(tmp_path):
    (tmp_path / "data").write_text("not a directory")
    message = expect_refused(str(tmp_path))
    assert "is not a directory" in message


def test_a_read_only_data_directory_is_refused(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    if os.geteuid() == 0:
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(data)], capture_output=True, text=True)
        if mounted.returncode != 0:
            pytest.skip(f"running as root, where permissions do not stop writes, and a read-only mount failed: {mounted.stderr.strip()}")
    else:
        data.chmod(0o500)
    try:
        message = expect_refused(str(tmp_path))
        assert "permission denied" in message
    finally:
        if os.geteuid() == 0:
            subprocess.run(["umount", "-l", str(data)], check=False)
        else:
            data.chmod(0o700)
