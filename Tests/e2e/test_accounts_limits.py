"""The per-IP SMS limit, with the default setting (20 codes an hour from one address) and with
a setting of its own; the other account modules turn it off (`--sms-per-ip-hourly 0`)."""
import tempfile

from bbclient import ServerProcess, fresh_phone
from conftest import server_binary


def test_the_default_allows_twenty_codes_an_hour_from_one_address(client):
    for _ in range(20):
        assert client.ok("auth.request_code", {"phone": fresh_phone()})["dev_code"]
    error = client.error("auth.request_code", {"phone": fresh_phone()})
    assert error["code"] == "rate_limited" and "network" in error["message"]
    assert client.ok("info.get")["version"]


def test_the_limit_is_a_setting():
    with tempfile.TemporaryDirectory(prefix="bangbang-e2e-") as data:
        server = ServerProcess.start(server_binary(), data, ["--dev", "--fsync", "never", "--sms-per-ip-hourly", "2"])
        try:
            with server.client() as client:
                client.ok("auth.request_code", {"phone": fresh_phone()})
                client.ok("auth.request_code", {"phone": fresh_phone()})
                assert client.error("auth.request_code", {"phone": fresh_phone()})["code"] == "rate_limited"
        finally:
            server.stop()
