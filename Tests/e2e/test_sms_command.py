"""`--sms-command`: codes leave through the operator's command, never through replies or the log."""
import os
import time

from bbclient import fresh_phone
from test_operations import running


def test_codes_are_delivered_by_the_command_and_nowhere_else(tmp_path):
    outbox = tmp_path / "outbox"
    command = f'printf "%s %s %s\\n" "$BANGBANG_SMS_PHONE" "$BANGBANG_SMS_CODE" "$BANGBANG_SMS_PURPOSE" >> {outbox}'
    with running(["--fsync", "never", "--dev", "--sms-command", command]) as server:
        phone = fresh_phone()
        with server.client() as client:
            reply = client.ok("auth.request_code", {"phone": phone})
            assert "dev_code" not in reply, "a real SMS provider never reveals the code"
            deadline = time.monotonic() + 10
            while not (outbox.exists() and outbox.read_text().strip()):
                assert time.monotonic() < deadline, "the command was not run"
                time.sleep(0.05)
            sent_phone, code, purpose = outbox.read_text().split()
            assert (sent_phone, purpose) == (phone, "login")
            assert len(code) == 6 and code.isdigit()
            login = client.ok("auth.login_code", {"phone": phone, "code": code})
            assert login["user"]["phone"] == phone
        assert f"code={code}" not in server.log() and "dev_sms_code" not in server.log()
