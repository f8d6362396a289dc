"""A small synchronous client of the Bangbang protocol for the end-to-end tests, built on the
`websockets` library (an independent WebSocket implementation). Every message received is
validated against protocol/schemas, and so is every request the server accepted (what the
server takes, the request schemas must allow), so the spec and the server cannot drift apart."""
import itertools
import json
import os
import pathlib
import re
import signal
import subprocess
import threading
import time

import jsonschema
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012
from websockets.sync.client import connect

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "protocol" / "schemas"
ADMIN_PHONE = "+8613000000000"


def _load_schemas():
    store = {}
    for path in sorted(SCHEMAS.glob("*.json")):
        schema = json.loads(path.read_text())
        store[schema.get("$id", path.name)] = schema
        store[path.name] = schema
    return store


_SCHEMAS = _load_schemas()


_REGISTRY = Registry().with_resources(
    [(name, Resource.from_contents(schema, default_specification=DRAFT202012)) for name, schema in _SCHEMAS.items()])


def _validator(name):
    return jsonschema.Draft202012Validator(_SCHEMAS[name], registry=_REGISTRY)


def validate_reply_data(op, data):
    """Checks a successful reply's data against the operation's schema, when one is written:
    `ops-*.json` files map operation names to reply schemas under `$defs`."""
    for name, schema in _SCHEMAS.items():
        if name.startswith("ops-") and name.endswith(".json") and op in schema.get("$defs", {}):
            definition = schema["$defs"][op]
            if "reply" in definition.get("properties", {}):
                jsonschema.Draft202012Validator({"$ref": f"{name}#/$defs/{op}/properties/reply"},
                                                registry=_REGISTRY).validate(data)


def validate_accepted_request(request):
    """Checks a request the server answered with success: its envelope against request.json and
    its data against the operation's request schema, when one is written."""
    if "request.json" in _SCHEMAS:
        _validator("request.json").validate(request)
    for name, schema in _SCHEMAS.items():
        if name.startswith("ops-") and name.endswith(".json") and request["op"] in schema.get("$defs", {}):
            if "request" in schema["$defs"][request["op"]].get("properties", {}):
                jsonschema.Draft202012Validator({"$ref": f"{name}#/$defs/{request['op']}/properties/request"},
                                                registry=_REGISTRY).validate(request.get("data") or {})


_SERVER_MESSAGE = _validator("server-message.json") if "server-message.json" in _SCHEMAS else None


def validate_server_message(message):
    if _SERVER_MESSAGE is not None:
        _SERVER_MESSAGE.validate(message)


class ProtocolError(AssertionError):
    pass


class Client:
    """One WebSocket connection to /ws. `call` sends a request and returns its reply; events
    that arrive meanwhile are kept in `events` (in order)."""

    _ids = itertools.count(1)

    def __init__(self, url, **options):
        self.ws = connect(url, max_size=2 ** 24, open_timeout=10, legacy=True, **options)
        self.events = []
        self.user = None
        self.token = None

    def close(self):
        self.ws.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def send_raw(self, text):
        self.ws.send(text)

    def receive(self, timeout=10):
        raw = self.ws.recv(timeout=timeout)
        message = json.loads(raw)
        validate_server_message(message)
        return message

    def call(self, op, data=None, timeout=10):
        request_id = next(self._ids)
        request = {"id": request_id, "op": op}
        if data is not None:
            request["data"] = data
        self.ws.send(json.dumps(request))
        deadline = time.monotonic() + timeout
        while True:
            message = self.receive(timeout=max(0.01, deadline - time.monotonic()))
            if message.get("id") == request_id:
                if message["ok"]:
                    validate_reply_data(op, message["data"])
                    validate_accepted_request(request)
                return message
            if "event" in message:
                self.events.append(message)
            else:
                raise ProtocolError(f"unexpected message {message}")

    def ok(self, op, data=None):
        reply = self.call(op, data)
        if not reply["ok"]:
            raise ProtocolError(f"{op} failed: {reply['error']}")
        return reply["data"]

    def error(self, op, data=None):
        reply = self.call(op, data)
        if reply["ok"]:
            raise ProtocolError(f"{op} unexpectedly succeeded: {reply['data']}")
        return reply["error"]

    def wait_event(self, predicate=lambda e: True, timeout=5):
        """Returns (and removes) the first event matching `predicate`, waiting for it."""
        deadline = time.monotonic() + timeout
        while True:
            for index, event in enumerate(self.events):
                if predicate(event):
                    return self.events.pop(index)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"no matching event; have {self.events}")
            message = self.receive(timeout=remaining)
            if "event" not in message:
                raise ProtocolError(f"unexpected reply {message}")
            self.events.append(message)

    def login(self, phone, device="test"):
        code = self.ok("auth.request_code", {"phone": phone})["dev_code"]
        data = self.ok("auth.login_code", {"phone": phone, "code": code, "device": device})
        self.user = data["user"]
        self.token = data["token"]
        return data


_phones = itertools.count(int(time.time()) % 1_000_000 * 1000)


def fresh_phone():
    """A mainland mobile number no other test uses."""
    return f"+86139{next(_phones) % 10 ** 8:08d}"


class ServerProcess:
    def __init__(self, process, port, data_dir, log_path):
        self.process = process
        self.port = port
        self.data_dir = data_dir
        self.log_path = log_path

    @classmethod
    def start(cls, binary, data_dir, arguments, port=0, timeout=30):
        log_path = os.path.join(data_dir, "server.log")
        log = open(log_path, "ab")
        process = subprocess.Popen([binary, "--port", str(port), "--data-dir", os.path.join(data_dir, "data"), *arguments],
                                   stdout=log, stderr=log)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = open(log_path, encoding="utf-8", errors="replace").read()
            match = re.search(r"event=listening .*?port=(\d+)", text)
            if match:
                return cls(process, int(match.group(1)), data_dir, log_path)
            if process.poll() is not None:
                raise RuntimeError(f"server exited with {process.returncode}:\n{text}")
            time.sleep(0.05)
        process.kill()
        raise RuntimeError("server did not start listening in time")

    @property
    def url(self):
        return f"ws://127.0.0.1:{self.port}/ws"

    def client(self, **options):
        return Client(self.url, **options)

    def log(self):
        return open(self.log_path, encoding="utf-8", errors="replace").read()

    def stop(self, sig=signal.SIGTERM, timeout=15):
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode


def admin(server):
    """A logged-in administrator connection (the phone the fixture server configures)."""
    connection = server.client()
    connection.login(ADMIN_PHONE, device="admin")
    return connection
