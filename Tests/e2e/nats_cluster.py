"""A 3-node NATS JetStream cluster on free loopback ports, for end-to-end tests that run several
Bangbang nodes (issue 15). Each node has its own store directory in a temporary directory; the
cluster is ready once JetStream answers on every node (a meta leader is elected); nodes are
stopped, or killed with SIGKILL, by the PIDs this helper started.

    with NatsCluster.start() as cluster:
        cluster.urls          # ["nats://127.0.0.1:P1", ...]
        cluster.kill(0)       # kill -9 of node 0
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time


def nats_server_binary() -> str:
    explicit = os.environ.get("NATS_SERVER")
    if explicit:
        return explicit
    for candidate in (shutil.which("nats-server"), "/usr/sbin/nats-server", "/usr/bin/nats-server"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise RuntimeError("nats-server not found: run scripts/bootstrap.sh (it installs Debian's nats-server) or set NATS_SERVER")


def free_ports(count: int) -> list:
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def jetstream_info(port: int, timeout: float = 1.0) -> dict:
    """`$JS.API.INFO` over a raw NATS connection: the core protocol is small enough to speak here."""
    return jetstream_request(port, "$JS.API.INFO", timeout)


def jetstream_request(port: int, subject: str, timeout: float = 1.0) -> dict:
    """One JetStream API request with an empty body, and its JSON answer."""
    return json.loads(nats_request(port, subject, b"", timeout))


def nats_request(port: int, subject: str, payload: bytes, timeout: float = 1.0) -> bytes:
    """One core NATS request and the payload of its answer, over a connection of its own."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        reader = s.makefile("rb")
        if not reader.readline().startswith(b"INFO "):
            raise RuntimeError("no INFO")
        s.sendall(b'CONNECT {"verbose":false,"headers":true,"no_responders":true}\r\n'
                  b"SUB _INBOX.probe 1\r\nPUB " + subject.encode() + b" _INBOX.probe "
                  + str(len(payload)).encode() + b"\r\n" + payload + b"\r\n")
        while True:
            line = reader.readline()
            if not line:
                raise RuntimeError("connection closed")
            if line.startswith(b"PING"):
                s.sendall(b"PONG\r\n")
            elif line.startswith(b"MSG "):
                size = int(line.split()[-1])
                return reader.read(size + 2)[:size]
            elif line.startswith(b"HMSG "):
                raise RuntimeError("no responders")
            elif line.startswith(b"-ERR"):
                raise RuntimeError(line.decode().strip())


class NatsSubscriber:
    """What arrives on `subject`, collected on a thread over a core NATS connection of its own."""

    def __init__(self, port: int, subject: str, timeout: float = 5.0):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.reader = self.sock.makefile("rb")
        if not self.reader.readline().startswith(b"INFO "):
            raise RuntimeError("no INFO")
        self.sock.sendall(b'CONNECT {"verbose":false}\r\nSUB ' + subject.encode() + b" 1\r\nPING\r\n")
        while not self.reader.readline().startswith(b"PONG"):
            pass
        self.sock.settimeout(None)
        self.messages = []
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        try:
            while True:
                line = self.reader.readline()
                if not line:
                    return
                if line.startswith(b"PING"):
                    self.sock.sendall(b"PONG\r\n")
                elif line.startswith(b"MSG "):
                    parts = line.split()
                    size = int(parts[-1])
                    payload = self.reader.read(size + 2)[:size]
                    with self.lock:
                        self.messages.append((parts[1].decode(), payload))
        except (OSError, ValueError):
            return

    def wait_for(self, predicate, timeout: float = 5.0):
        """The first (subject, payload) that `predicate` accepts, waiting up to `timeout`."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            with self.lock:
                for message in self.messages:
                    if predicate(*message):
                        return message
            time.sleep(0.02)
        raise AssertionError(f"nothing on the subscription matched within {timeout} s")

    def close(self):
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


class NatsCluster:
    def __init__(self, directory: str, client_ports: list, route_ports: list):
        self.directory = directory
        self.client_ports = client_ports
        self.route_ports = route_ports
        self.processes = {}

    @property
    def urls(self) -> list:
        return [f"nats://127.0.0.1:{port}" for port in self.client_ports]

    @classmethod
    def start(cls, size: int = 3, timeout: float = 20.0, running: int = None) -> "NatsCluster":
        """A cluster of `size` servers, of which the first `running` (all by default) are started."""
        binary = nats_server_binary()
        directory = tempfile.mkdtemp(prefix="bangbang-nats-")
        ports = free_ports(size * 2)
        cluster = cls(directory, ports[:size], ports[size:])
        try:
            for index in range(size if running is None else running):
                cluster._launch(binary, index)
            cluster.wait_for_jetstream(timeout)
        except BaseException:
            cluster.stop()
            raise
        return cluster

    def launch(self, index: int) -> None:
        """Starts server `index` (one not started yet, or killed)."""
        self._launch(nats_server_binary(), index)

    def _launch(self, binary: str, index: int) -> None:
        name = f"n{index + 1}"
        routes = ", ".join(f"nats://127.0.0.1:{p}" for i, p in enumerate(self.route_ports) if i != index)
        config = os.path.join(self.directory, f"{name}.conf")
        with open(config, "w") as f:
            f.write(f'server_name: {name}\nlisten: 127.0.0.1:{self.client_ports[index]}\n'
                    f'jetstream {{ store_dir: "{self.directory}/{name}", max_memory_store: 64MB, max_file_store: 1GB }}\n')
            if len(self.client_ports) > 1:
                f.write(f'cluster {{ name: bangbang-test, listen: 127.0.0.1:{self.route_ports[index]}, routes: [{routes}] }}\n')
        log = open(os.path.join(self.directory, f"{name}.log"), "wb")
        self.processes[index] = subprocess.Popen([binary, "-c", config], stdout=log, stderr=subprocess.STDOUT)

    def wait_for_jetstream(self, timeout: float = 20.0) -> None:
        """Waits until JetStream answers on every running node."""
        deadline = time.monotonic() + timeout
        for index, port in enumerate(self.client_ports):
            if index not in self.processes:
                continue
            while True:
                try:
                    if "error" not in jetstream_info(port):
                        break
                except (OSError, RuntimeError, ValueError):
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError(f"JetStream not ready on node {index}; logs in {self.directory}")
                time.sleep(0.1)

    def stream_leader(self, stream: str, timeout: float = 10.0) -> int:
        """The index of the node that leads `stream` (its `cluster.leader`, a server name n<i+1>)."""
        deadline = time.monotonic() + timeout
        while True:
            for index, port in enumerate(self.client_ports):
                if index not in self.processes:
                    continue
                try:
                    leader = jetstream_request(port, f"$JS.API.STREAM.INFO.{stream}").get("cluster", {}).get("leader")
                except (OSError, RuntimeError, ValueError):
                    continue
                if leader:
                    return int(leader[1:]) - 1
            if time.monotonic() > deadline:
                raise RuntimeError(f"{stream} has no leader; logs in {self.directory}")
            time.sleep(0.1)

    def step_down(self, stream: str) -> None:
        """Asks `stream`'s leader to step down, so another replica leads it."""
        for index, port in enumerate(self.client_ports):
            if index not in self.processes:
                continue
            try:
                jetstream_request(port, f"$JS.API.STREAM.LEADER.STEPDOWN.{stream}", timeout=5.0)
                return
            except (OSError, RuntimeError, ValueError):
                continue

    def arrange_leaders(self, together: list, apart: list, timeout: float = 30.0) -> int:
        """Steps leaders down until one server leads every stream of `together` and none of
        `apart`; returns its index."""
        deadline = time.monotonic() + timeout
        while True:
            home = self.stream_leader(together[0])
            moving = [s for s in together[1:] if self.stream_leader(s) != home]
            moving += [s for s in apart if self.stream_leader(s) == home]
            if not moving:
                return home
            if time.monotonic() > deadline:
                raise RuntimeError(f"could not put {together} on one server and {apart} elsewhere")
            self.step_down(moving[0])
            time.sleep(0.5)

    def kill(self, index: int) -> None:
        """kill -9 of one node, by the PID this helper started."""
        process = self.processes.pop(index)
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)

    def stop(self) -> None:
        for process in self.processes.values():
            process.terminate()
        for process in self.processes.values():
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.kill(process.pid, signal.SIGKILL)
                process.wait(timeout=5)
        self.processes.clear()
        shutil.rmtree(self.directory, ignore_errors=True)

    def __enter__(self) -> "NatsCluster":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
