"""The crash test: publishes and accepts over real connections while the server is killed with
SIGKILL at random moments, several times, under `--fsync always` and with snapshots every second.
After every restart on the same data directory, every acknowledged publish and accept must be
there, no order may have a runner other than the one whose accept was acknowledged, and no id may
be reused (each order keeps the title it was published with)."""
import random
import threading
import time

import pytest

from bbclient import ServerProcess, fresh_phone
from conftest import server_binary

ADMIN_PHONE = "+8613000000000"
ARGUMENTS = ["--dev", "--fsync", "always", "--admin-phone", ADMIN_PHONE, "--snapshot-interval", "1",
             "--sms-per-ip-hourly", "0", "--requests-per-second", "0", "--user-requests-per-second", "0"]
ROUNDS = 5
PUBLISHERS = 4
RUNNERS = 2


class Ledger:
    """What the server acknowledged, shared by the worker threads."""

    def __init__(self):
        self.lock = threading.Lock()
        self.published = {}   # order id -> title
        self.accepted = {}    # order id -> runner id

    def record_publish(self, order_id, title):
        with self.lock:
            assert order_id not in self.published, f"order id {order_id} acknowledged twice"
            self.published[order_id] = title

    def record_accept(self, order_id, runner):
        with self.lock:
            assert order_id not in self.accepted, f"two acknowledged accepts of order {order_id}"
            self.accepted[order_id] = runner

    def open_orders(self):
        with self.lock:
            return [order_id for order_id in self.published if order_id not in self.accepted]


def start(data_dir):
    return ServerProcess.start(server_binary(), data_dir, ARGUMENTS)


def restart(server):
    """Starts a new server on the same data directory, with a fresh log (the old one is kept)."""
    with open(server.log_path, "rb") as log, open(server.log_path + ".previous", "ab") as kept:
        kept.write(log.read())
    open(server.log_path, "wb").close()
    return start(server.data_dir)


def resume(server, token):
    client = server.client()
    client.ok("auth.resume", {"token": token})
    return client


def make_runner(server, admin):
    """A verified runner's token, approved by the logged-in `admin` connection."""
    with server.client() as runner:
        runner.login(fresh_phone())
        runner.ok("runner.submit_verification", {"real_name": "Li Lei", "student_id": "2026001", "school": "North"})
        admin.ok("admin.decide_verification", {"user_id": runner.user["id"], "decision": "approve"})
        return runner.token, runner.user["id"]


def publish_until_killed(server, token, ledger, name, stop):
    try:
        with resume(server, token) as client:
            count = 0
            while not stop.is_set():
                count += 1
                title = f"{name} #{count}"
                deadline = int(time.time() * 1000) + 3_600_000
                reply = client.call("order.publish", {"type": "bounty", "campus": "North", "deadline": deadline, "tip": 100,
                                                      "details": {"title": title, "description": "crash test"}})
                if reply["ok"]:
                    ledger.record_publish(reply["data"]["order"]["id"], title)
    except Exception:
        pass   # the server was killed under us


def accept_until_killed(server, token, runner_id, ledger, stop):
    try:
        with resume(server, token) as client:
            while not stop.is_set():
                candidates = ledger.open_orders()
                if not candidates:
                    time.sleep(0.01)
                    continue
                order_id = random.choice(candidates[-20:])
                reply = client.call("order.accept", {"order_id": order_id})
                if reply["ok"]:
                    ledger.record_accept(order_id, runner_id)
    except Exception:
        pass


def check(server, token, ledger):
    """Every acknowledged change is there, with the runner whose accept was acknowledged."""
    with resume(server, token) as client:
        for order_id, title in sorted(ledger.published.items()):
            reply = client.call("order.get", {"order_id": order_id})
            assert reply["ok"], f"acknowledged order {order_id} is missing after a crash: {reply}"
            order = reply["data"]["order"]
            assert order["details"]["title"] == title, f"order id {order_id} was reused: {order['details']}"
            expected = ledger.accepted.get(order_id)
            if expected is not None:
                assert order.get("runner") == expected, f"order {order_id}: acknowledged runner {expected}, now {order.get('runner')}"
                assert order["status"] != "open"


def test_kill_nine_loses_no_acknowledged_change(tmp_path):
    rng = random.Random()
    ledger = Ledger()
    server = start(str(tmp_path))
    try:
        publishers = []
        for _ in range(PUBLISHERS):
            with server.client() as client:
                client.login(fresh_phone())
                publishers.append(client.token)
        with server.client() as admin:
            # One admin login: an SMS code may be requested once a minute per phone.
            admin.login(ADMIN_PHONE, device="admin")
            runners = [make_runner(server, admin) for _ in range(RUNNERS)]
        snapshots = 0
        for round_number in range(ROUNDS):
            stop = threading.Event()
            threads = [threading.Thread(target=publish_until_killed, args=(server, token, ledger, f"r{round_number} p{index}", stop))
                       for index, token in enumerate(publishers)]
            threads += [threading.Thread(target=accept_until_killed, args=(server, token, runner_id, ledger, stop))
                        for token, runner_id in runners]
            for thread in threads:
                thread.start()
            time.sleep(rng.uniform(0.5, 2.5))
            server.process.kill()
            server.process.wait()
            stop.set()
            for thread in threads:
                thread.join(timeout=15)
            snapshots += server.log().count("event=snapshot_written")
            server = restart(server)
            assert "event=recovered" in server.log()
            check(server, publishers[0], ledger)
        assert len(ledger.published) > ROUNDS, "the load should have published something every round"
        if runners:
            assert ledger.accepted, "the runners should have accepted something"
        # Ids are never reused: every acknowledged id is distinct (checked as recorded) and
        # keeps its title (checked after every restart); new ones continue above the old.
        with resume(server, publishers[0]) as client:
            deadline = int(time.time() * 1000) + 3_600_000
            newest = client.ok("order.publish", {"type": "bounty", "campus": "North", "deadline": deadline, "tip": 100,
                                                 "details": {"title": "after the crashes", "description": "-"}})["order"]
            assert newest["id"] not in ledger.published
        print(f"crash test: {len(ledger.published)} publishes, {len(ledger.accepted)} accepts acknowledged, "
              f"{snapshots} snapshots written, {ROUNDS} kills")
    finally:
        server.stop()
