"""Every JSON example in protocol/*.md is a message the schemas accept (no server needed).

Each fenced code block that holds JSON (every ```json block, and any other block that starts
with `{`) is read as a sequence of messages; each one is checked against the schema its kind
calls for:

- a request (`op`): the envelope (schemas/request.json) and its data against the operation's
  request schema in schemas/ops-*.json;
- a reply (`ok`) or an event (`event`): schemas/server-message.json, which covers the events'
  payloads; a successful reply's data also against the reply schema of the operation it answers,
  found by its `id` among the requests shown before it in the same file.

A block that is not JSON, or a message of none of these kinds, fails too: the spec shows whole
messages only, so a client writer can copy any of them. Failures name the file and the line."""
import json
import pathlib
import re

import jsonschema
import pytest

from bbclient import _REGISTRY, _SCHEMAS

PROTOCOL = pathlib.Path(__file__).resolve().parents[2] / "protocol"
FENCE = re.compile(r"^```(\S*)\s*$")


def _validator(reference):
    return jsonschema.Draft202012Validator({"$ref": reference}, registry=_REGISTRY)


REQUEST = _validator("request.json")
SERVER_MESSAGE = _validator("server-message.json")


def _operation_schema_file(op):
    for name, schema in _SCHEMAS.items():
        if name.startswith("ops-") and name.endswith(".json") and op in schema.get("$defs", {}):
            return name
    return None


def server_message_errors(message):
    """Why `message` is not a server message: checked against the one kind it claims to be, so
    the error says what is wrong rather than that no kind matched."""
    if "event" in message:
        kind = "boardEvent" if str(message["event"]).startswith("feed.") else "personalEvent"
    else:
        kind = "success" if message.get("ok") is True else "failure"
    errors = [f"{'/'.join(map(str, e.absolute_path)) or 'message'}: {e.message}"
              for e in _validator(f"server-message.json#/$defs/{kind}").iter_errors(message)]
    if not errors:
        errors = [jsonschema.exceptions.best_match(SERVER_MESSAGE.iter_errors(message)).message
                  for _ in [0] if not SERVER_MESSAGE.is_valid(message)]
    return errors


def code_blocks(path):
    """(first line number of the content, language, content) of every fenced block."""
    blocks, language, start, lines = [], None, 0, []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        match = FENCE.match(line)
        if language is None and match:
            language, start, lines = match.group(1), number + 1, []
        elif language is not None and line.strip() == "```":
            blocks.append((start, language, "\n".join(lines)))
            language = None
        elif language is not None:
            lines.append(line)
    assert language is None, f"{path.name}:{start - 1}: a code block is never closed"
    return blocks


def messages(path):
    """(line, message) of every JSON message in `path`'s code blocks, in order; a block that
    does not parse yields (line, ValueError)."""
    found = []
    for start, language, content in code_blocks(path):
        if language != "json" and not content.lstrip().startswith("{"):
            continue
        decoder, offset = json.JSONDecoder(), 0
        while True:
            while offset < len(content) and content[offset].isspace():
                offset += 1
            if offset == len(content):
                break
            line = start + content.count("\n", 0, offset)
            try:
                message, offset = decoder.raw_decode(content, offset)
            except ValueError as error:
                found.append((line, ValueError(f"not JSON: {error}")))
                break
            found.append((line, message))
    return found


def problems(path):
    """What is wrong with the examples of one file, each as 'file:line: what'."""
    wrong = []
    requests = {}
    for line, message in messages(path):
        where = f"{path.relative_to(PROTOCOL.parent)}:{line}"
        if isinstance(message, ValueError):
            wrong.append(f"{where}: {message}")
            continue
        errors = []
        if not isinstance(message, dict):
            errors.append("a message is a JSON object")
        elif "op" in message:
            errors += [e.message for e in REQUEST.iter_errors(message)]
            schema_file = _operation_schema_file(message["op"])
            if schema_file is None:
                errors.append(f"no schema describes operation {message['op']!r}")
            else:
                data = message.get("data") or {}
                reference = f"{schema_file}#/$defs/{message['op']}/properties/request"
                errors += [f"data: {e.message}" for e in _validator(reference).iter_errors(data)]
                requests[json.dumps(message.get("id"))] = message["op"]
        elif "ok" in message or "event" in message:
            errors += server_message_errors(message)
            if message.get("ok") is True:
                op = requests.get(json.dumps(message.get("id")))
                if op is None:
                    errors.append(f"a reply to id {message.get('id')!r}, but no request with that id is shown before it")
                else:
                    reference = f"{_operation_schema_file(op)}#/$defs/{op}/properties/reply"
                    errors += [f"data ({op} reply): {e.message}" for e in _validator(reference).iter_errors(message["data"])]
        else:
            errors.append("neither a request (op), a reply (ok) nor an event (event)")
        wrong += [f"{where}: {error}" for error in errors]
    return wrong


SPEC_FILES = sorted(PROTOCOL.glob("*.md"))


def test_the_spec_has_examples_to_check():
    counted = {path.name: len(messages(path)) for path in SPEC_FILES}
    assert counted["transcript.md"] >= 30 and counted["README.md"] >= 3 and counted["events.md"] >= 4, counted


@pytest.mark.parametrize("path", SPEC_FILES, ids=lambda path: path.name)
def test_every_example_message_validates_against_its_schema(path):
    wrong = problems(path)
    assert not wrong, "examples that do not validate:\n" + "\n".join(wrong)


def test_a_broken_example_is_reported_with_its_file_and_line(tmp_path):
    spec = tmp_path / "protocol" / "broken.md"
    spec.parent.mkdir()
    spec.write_text("# Broken\n\n```json\n"
                    '{"id": 1, "op": "order.get", "data": {"order_id": 0}}\n'
                    '{"id": 1, "ok": true, "data": {}}\n'
                    "{\"id\": 2, \"ok\": false, \"error\": {\"code\": \"rate_limited\", \"message\": \"slow\"}}\n"
                    '{"event": "feed.leave", "type": "express", "seq": 3, "data": {"order_id": 7}}\n'
                    "```\n\n```\n{…}\n```\n", encoding="utf-8")
    global PROTOCOL
    saved, PROTOCOL = PROTOCOL, tmp_path / "protocol"
    try:
        wrong = problems(spec)
    finally:
        PROTOCOL = saved
    text = "\n".join(wrong)
    assert "protocol/broken.md:4: data:" in text, text
    assert "protocol/broken.md:5: data (order.get reply)" in text, text
    assert "protocol/broken.md:6:" in text and "retry_after_ms" in text, text
    assert "protocol/broken.md:7:" in text, text
    assert "protocol/broken.md:11: not JSON" in text, text
