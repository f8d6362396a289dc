"""End-to-end tests: a real `bangbang` process on loopback, driven by the independent
`websockets` client. Each test module gets a fresh server with its own data directory."""
import os
import pathlib
import re
import signal
import subprocess
import tempfile
import time

import pytest

from bbclient import Client, ServerProcess

ROOT = pathlib.Path(__file__).resolve().parents[2]


def server_binary() -> str:
    explicit = os.environ.get("BANGBANG_BINARY")
    if explicit:
        return explicit
    return str(ROOT / ".build" / "debug" / "bangbang")


@pytest.fixture(scope="module")
def server():
    """A dev-mode server with /echo and an administrator phone, on a free port."""
    with tempfile.TemporaryDirectory(prefix="bangbang-e2e-") as data:
        process = ServerProcess.start(server_binary(), data,
                                      ["--dev", "--echo", "--fsync", "never", "--admin-phone", "+8613000000000"])
        try:
            yield process
        finally:
            process.stop()


@pytest.fixture
def client(server):
    with server.client() as connection:
        yield connection
