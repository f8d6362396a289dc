#!/usr/bin/env python3
"""Writes the seed corpora under fuzz/corpus/. Run it again after changing an input layout.

Each target's first byte (or two) is its setup byte, described at the top of its main.swift;
the seeds cover every role and option with small valid inputs the fuzzer can mutate from.
"""
import base64
import hashlib
import os
import struct
import zlib

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "corpus")
GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def write(target, name, data):
    folder = os.path.join(ROOT, target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def accept(key):
    return base64.b64encode(hashlib.sha1(key.encode() + GUID).digest()).decode()


# http-request: setup byte, then the request.
KEY = "dGhlIHNhbXBsZSBub25jZQ=="
upgrade = ("GET /ws?token=abc HTTP/1.1\r\nHost: localhost:8080\r\nUpgrade: websocket\r\n"
           "Connection: keep-alive, Upgrade\r\nSec-WebSocket-Key: " + KEY + "\r\nSec-WebSocket-Version: 13\r\n")
requests = {
    "upgrade": upgrade + "\r\n",
    "upgrade-deflate": upgrade + "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits, "
                                 "permessage-deflate; server_no_context_takeover; server_max_window_bits=10\r\n\r\n",
    "upgrade-subprotocol-origin": upgrade + "Sec-WebSocket-Protocol: chat, bangbang.v1\r\n"
                                            "Origin: https://bangbang.example\r\n\r\n",
    "upgrade-bad-version": upgrade.replace("Version: 13", "Version: 8") + "\r\n",
    "healthz": "GET /healthz HTTP/1.1\r\nHost: example\r\nAccept: */*\r\n\r\n",
    "head-http10": "HEAD / HTTP/1.0\r\n\r\n",
    "with-body": "POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n",
    "pipelined-frame": upgrade + "\r\n\x81\x85\x37\xfa\x21\x3d\x7f\x9f\x4d\x51\x58",
}
for index, (name, text) in enumerate(sorted(requests.items())):
    setup = [0x40, 0x00, 0x7F, 0xFF, 0x85, 0x20, 0x10, 0x60][index % 8]
    write("http-request", name, bytes([setup]) + text.encode("latin-1"))

# http-response: the key is what ClientHandshake draws from the target's fixed-seed generator.
state, key_bytes = 0x0123456789ABCDEF, b""
for _ in range(2):
    state = (state * 6364136223846793005 + 1442695040888963407) % 2**64
    key_bytes += struct.pack("<Q", state)
client_accept = accept(base64.b64encode(key_bytes).decode())
ok = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " + client_accept + "\r\n"
responses = {
    "plain": (0x20, ok + "\r\n"),
    "subprotocol": (0x10, ok + "Sec-WebSocket-Protocol: bangbang.v1\r\n\r\n"),
    "deflate": (0x60, ok + "Sec-WebSocket-Extensions: permessage-deflate; server_max_window_bits=10; "
                           "client_max_window_bits=12; server_no_context_takeover\r\n\r\n"),
    "deflate-unoffered": (0x00, ok + "Sec-WebSocket-Extensions: permessage-deflate\r\n\r\n"),
    "with-first-frame": (0x3F, ok + "\r\n\x81\x05hello"),
    "refused": (0x00, "HTTP/1.1 403 Forbidden\r\nContent-Length: 3\r\nConnection: close\r\n\r\nno\n"),
}
for name, (setup, text) in responses.items():
    write("http-response", name, bytes([setup]) + text.encode("latin-1"))


# websocket-frames: setup byte, then frames. Server role (bit 0 = 0) reads masked frames.
def frame(opcode, payload, fin=True, rsv1=False, mask=None):
    head = bytes([(0x80 if fin else 0) | (0x40 if rsv1 else 0) | opcode])
    length = len(payload)
    masked = 0x80 if mask is not None else 0
    if length < 126:
        head += bytes([masked | length])
    elif length < 65536:
        head += bytes([masked | 126]) + struct.pack(">H", length)
    else:
        head += bytes([masked | 127]) + struct.pack(">Q", length)
    if mask is None:
        return head + payload
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def compress(data, wbits=15):
    c = zlib.compressobj(6, zlib.DEFLATED, -wbits)
    out = c.compress(data) + c.flush(zlib.Z_SYNC_FLUSH)
    assert out.endswith(b"\x00\x00\xff\xff")
    return out[:-4]


MASK = b"\x37\xfa\x21\x3d"
json_text = b'{"id":1,"op":"order.list","data":{"board":"north","limit":20}}'
for role, mask in (("server", MASK), ("client", None)):
    bit = 0 if role == "server" else 1
    f = lambda *a, **k: frame(*a, mask=mask, **k)
    write("websocket-frames", role + "-text", bytes([bit | 0x40]) + f(1, b"hello") + f(8, b"\x03\xe8bye"))
    write("websocket-frames", role + "-fragmented",
          bytes([bit | 0x20]) + f(1, "h\u00e9".encode()[:2], fin=False) + f(9, b"p") + f(0, "\u00e9llo".encode()[1:], fin=False)
          + f(0, b"!") + f(2, bytes(range(200))))
    write("websocket-frames", role + "-binary-16bit", bytes([bit | 0x30]) + f(2, bytes(300)) + f(10, b""))
    write("websocket-frames", role + "-close-empty", bytes([bit]) + f(8, b""))
    # permessage-deflate: context takeover (setup bits 1-2 = 1), then none (2), then 9-bit windows (3).
    write("websocket-frames", role + "-compressed", bytes([bit | 2 | 0x70]) + f(1, compress(json_text), rsv1=True)
          + f(1, compress(json_text), rsv1=True))
    halves = compress(json_text * 3)
    write("websocket-frames", role + "-compressed-fragmented", bytes([bit | 4 | 0x50])
          + f(1, halves[:10], fin=False, rsv1=True) + f(9, b"") + f(0, halves[10:]))
    write("websocket-frames", role + "-compressed-window9", bytes([bit | 6 | 0x08]) + f(2, compress(bytes(500), 9), rsv1=True))
    write("websocket-frames", role + "-compressed-empty", bytes([bit | 4]) + f(1, b"\x00", rsv1=True))

# inflate: setup byte, split byte, payload.
write("inflate", "text-window15", bytes([0x07 | 0x40, 0xFF]) + compress(json_text))
write("inflate", "two-messages-context", bytes([0x07 | 0x08 | 0x30, 0x80]) + compress(json_text) + compress(json_text))
write("inflate", "window9", bytes([0x01 | 0xB0, 0xFF]) + compress(bytes(2000), 9))
write("inflate", "bomb", bytes([0x07 | 0xA0, 0xFF]) + compress(bytes(200000)))
final = zlib.compressobj(6, zlib.DEFLATED, -15)
write("inflate", "bfinal", bytes([0x07, 0xFF]) + final.compress(b"the end") + final.flush())
write("inflate", "stored-empty", bytes([0x07, 0xFF, 0x00]))

# json: one message per file.
documents = {
    "request": json_text,
    "auth": b'{"id":"a-1","op":"auth.login","data":{"phone":"+8613800138000","code":"123456"}}',
    "numbers": b'[0,-0,1.5,-2e10,1E-3,9223372036854775807,-9223372036854775808,18446744073709551616,0.1]',
    "strings": b'["\\u00e9\\ud83d\\ude00","\\"\\\\\\/\\b\\f\\n\\r\\t","\xe5\xb8\xae\xe5\xb8\xae",""]',
    "nested": b'{"a":[{"b":{"c":[null,true,false,{}]}}],"d":[]}',
    "bad-envelope": b'{"id":7,"op":"order.accept","extra":1}',
    "whitespace": b' \t\r\n{ "id" : 2 , "op" : "ping" } \n',
}
for name, data in documents.items():
    write("json", name, data)

# forwarding: setup byte (top bit clear: a connection's first bytes, low bits the split;
# top bit set: header values, one per line, cycling Forwarded / X-Forwarded-For / X-Forwarded-Proto).
V2 = b"\r\n\r\n\x00\r\nQUIT\n"
def v2(command, family, body):
    return V2 + bytes([0x20 | command, family]) + struct.pack(">H", len(body)) + body
def tlv(kind, value):
    return bytes([kind]) + struct.pack(">H", len(value)) + value
ipv4 = bytes([203, 0, 113, 7, 198, 51, 100, 1]) + struct.pack(">HH", 56324, 443)
ipv6 = bytes.fromhex("20010db8000000000000000000000007") + bytes(15) + b"\x01" + struct.pack(">HH", 1234, 8443)
connections = {
    "v1-tcp4": (0x40, b"PROXY TCP4 203.0.113.7 198.51.100.1 56324 443\r\nGET / HTTP/1.1\r\n\r\n"),
    "v1-tcp6": (0x7F, b"PROXY TCP6 2001:db8::7 ::ffff:198.51.100.1 1234 8443\r\n\x16\x03\x01"),
    "v1-unknown": (0x10, b"PROXY UNKNOWN ffff::1 ffff::2 1 2\r\n"),
    "v2-tcp4-tlvs": (0x20, v2(1, 0x11, ipv4 + tlv(0x01, b"h2") + tlv(0x20, b"\x01\x00\x00\x00\x00" + tlv(0x21, b"TLSv1.3"))
                          + tlv(0x04, b"")) + b"\x16\x03\x01"),
    "v2-tcp6": (0x7F, v2(1, 0x21, ipv6)),
    "v2-local": (0x00, v2(0, 0x00, b"")),
    "v2-unix": (0x30, v2(1, 0x31, bytes(216))),
    "v2-bad-length": (0x05, v2(1, 0x11, ipv4[:8])),
}
for name, (setup, data) in connections.items():
    write("forwarding", name, bytes([setup]) + data)
header_sets = {
    "forwarded": (0x80, 'for=192.0.2.60;proto=https;by=203.0.113.43, for="[2001:db8:cafe::17]:4711", for=10.0.0.1'
                        '\n\n\nfor=unknown;proto=http, for="_hidden:_port"'),
    "x-forwarded-for": (0x81, '\n203.0.113.7, 2001:db8::1, [::1]:80, 10.0.0.2\nhttps, http\n\n127.0.0.2:5000, unknown\nwss'),
}
for name, (setup, text) in header_sets.items():
    write("forwarding", name, bytes([setup]) + text.encode())

# relay-protocol: direction byte (even: to the owner, odd: to a gateway), then one envelope.
def relay_envelope(node, incarnation, frames):
    return b"BR\x01" + bytes([len(node)]) + node + struct.pack(">Q", incarnation) + b"".join(frames)


def relay_open(connection, flags, address):
    return b"\x01" + struct.pack(">QBB", connection, flags, len(address)) + address


def relay_message(connection, text):
    return b"\x02" + struct.pack(">QI", connection, len(text)) + text


def relay_alive(connections):
    return b"\x04" + struct.pack(">I", len(connections)) + b"".join(struct.pack(">Q", c) for c in connections)


def relay_deliver(connections, text):
    return (b"\x05" + struct.pack(">H", len(connections)) + b"".join(struct.pack(">Q", c) for c in connections)
            + struct.pack(">I", len(text)) + text)


def relay_close_connection(connection, code, reason):
    return b"\x06" + struct.pack(">QHB", connection, code, len(reason)) + reason


relay_seeds = {
    "to-owner": (0x00, relay_envelope(b"node-b", 7, [relay_open(1, 1, b"10.1.2.3"),
                                                     relay_message(1, b'{"id":1,"op":"info.server"}'),
                                                     b"\x03" + struct.pack(">Q", 1), relay_alive([1, 2])])),
    "open-ipv6-tls": (0x02, relay_envelope(b"n_1", 1, [relay_open(9, 3, b"2001:db8::7")])),
    "to-gateway": (0x01, relay_envelope(b"node-a", 9, [relay_deliver([1, 7, 2 ** 64 - 1], b'{"event":"feed.enter"}'),
                                                       relay_close_connection(7, 1012, "owner changed".encode()),
                                                       relay_alive([])])),
    "close-reason-utf8": (0x03, relay_envelope(b"a", 2, [relay_close_connection(1, 1012, "重启".encode())])),
    "wrong-direction": (0x01, relay_envelope(b"a", 2, [relay_open(1, 0, b"::1")])),
}
for name, (setup, data) in relay_seeds.items():
    write("relay-protocol", name, bytes([setup]) + data)


# inbox-protocol: decoder byte (modulo 3: 0 a message, 1 an outbox state, 2 a reader state),
# then its bytes.
def inbox_event(user, name, data):
    return struct.pack(">QB", user, len(name)) + name + struct.pack(">I", len(data)) + data


def inbox_entry(outbox_sequence, journal_sequence, events, at=1796099188971):
    return struct.pack(">QQqH", outbox_sequence, journal_sequence, at, len(events)) + b"".join(events)


def inbox_message(space, index, entries):
    return b"BI\x01" + struct.pack(">BHH", space, index, len(entries)) + b"".join(entries)


def inbox_outbox(destinations):
    body = b"".join(struct.pack(">HQI", index, next_sequence, len(pending)) + b"".join(pending)
                    for index, next_sequence, pending in destinations)
    return b"BO\x01" + struct.pack(">H", len(destinations)) + body


def inbox_reader(position, sources):
    return (b"BN\x01" + struct.pack(">QI", position, len(sources))
            + b"".join(struct.pack(">BHQ", space, index, applied) for space, index, applied in sources))


def p1_entry(outbox_sequence, at=1796099188971):
    return inbox_entry(outbox_sequence, (100 + outbox_sequence) % 2 ** 64,
                       [inbox_event(outbox_sequence, b"order.changed", b'{"id":"o-%d"}' % outbox_sequence)], at)


inbox_seeds = {
    "message": (0x00, inbox_message(1, 3, [inbox_entry(7, 0x0102030405060708, [
        inbox_event(42, b"order.changed", b'{"id":"o-1","status":"accepted"}'),
        inbox_event(2 ** 64 - 1, b"order.taken", b""),
        inbox_event(0, "订单.变更".encode(), b"\x00\xff")])])),
    "message-entries": (0x03, inbox_message(1, 3, [p1_entry(7), p1_entry(8, at=-2), inbox_entry(9, 109, [
        inbox_event(43, b"account.login", b"{}"), inbox_event(42, b"order.taken", b"")], at=2 ** 63 - 1)])),
    "message-accounts": (0x06, inbox_message(2, 0xFFFF, [inbox_entry(2 ** 64 - 1, 0, [inbox_event(9, b"account.login", b"{}")])])),
    "message-entries-to-max": (0x09, inbox_message(2, 0, [p1_entry(2 ** 64 - 2), p1_entry(2 ** 64 - 1, at=-2 ** 63)])),
    "message-long-name": (0x0C, inbox_message(1, 0, [inbox_entry(1, 1, [inbox_event(1, "é".encode() * 32, b"x")])])),
    "outbox": (0x01, inbox_outbox([(0, 4, [p1_entry(2), p1_entry(3)]), (5, 1, []), (0xFFFF, 8, [p1_entry(7)])])),
    "outbox-many-pending": (0x07, inbox_outbox([(2, 9, [p1_entry(n) for n in range(1, 9)]),
                                                (3, 2 ** 64 - 2, [p1_entry(2 ** 64 - 3, at=-1)])])),
    "outbox-empty": (0x04, inbox_outbox([])),
    "reader": (0x02, inbox_reader(0x0102030405060708, [(1, 0, 12), (1, 3, 1), (1, 0xFFFF, 2 ** 64 - 1), (2, 0, 5)])),
    "reader-empty": (0x05, inbox_reader(0, [])),
}
for name, (setup, data) in inbox_seeds.items():
    write("inbox-protocol", name, bytes([setup]) + data)


# inbox-protocol, decoder byte 0xF0 to 0xF7: an owner's answer to "a user's events after N":
# 0, the stream's last number, the count, then each event's number, length and message.
def stream_answer(last, events):
    return (b"\x00" + struct.pack(">QI", last, len(events))
            + b"".join(struct.pack(">QI", number, len(message)) + message for number, message in events))


stream_answer_seeds = {
    "stream-answer": stream_answer(9, [(4, b'{"event":"order.changed","seq":4}'), (5, b""), (9, b"{" * 40)]),
    "stream-answer-empty": stream_answer(0, []),
    "stream-answer-at-max": stream_answer(2 ** 64 - 1, [(2 ** 64 - 1, b"{}")]),
}
for name, data in stream_answer_seeds.items():
    write("inbox-protocol", name, b"\xf0" + data)


# inbox-protocol, decoder byte 0xF8 and above: one event as an owner publishes it on a user
# subject: the user, the event's number, then its push message.
personal_event_seeds = {
    "user-event": struct.pack(">QQ", 42, 7) + b'{"event":"order.changed","seq":7}',
    "user-event-at-max": struct.pack(">QQ", 2 ** 64 - 1, 2 ** 64 - 1) + b"{",
}
for name, data in personal_event_seeds.items():
    write("inbox-protocol", name, b"\xf8" + data)


# inbox-protocol, decoder byte 0xE8 to 0xEF: a board change as an owner publishes it on a feed
# subject: the partition, its sequence, the length of the order before, then the orders before and
# after (opaque here).
feed_change_seeds = {
    "feed-change": struct.pack(">HQI", 3, 9, 5) + b"\x02old" + b"!" + b"\x02new order",
    "feed-change-new-order": struct.pack(">HQI", 0, 1, 0) + b"\x02order",
    "feed-change-at-max": struct.pack(">HQI", 0xFFFF, 2 ** 64 - 1, 1) + b"ab",
}
for name, data in feed_change_seeds.items():
    write("inbox-protocol", name, b"\xe8" + data)


# inbox-protocol, decoder byte 0xE0 to 0xE7: a board partition's part of a listing: 0, the boards
# (name and sequence each), the matches in all, whether more follow, then each order's sort key, id
# and bytes.
def board_list(boards, total, more, entries):
    head = b"\x00" + bytes([len(boards)]) + b"".join(bytes([len(name)]) + name + struct.pack(">Q", sequence)
                                                   for name, sequence in boards)
    return (head + struct.pack(">IBI", total, more, len(entries))
            + b"".join(struct.pack(">qQI", key, id, len(order)) + order for key, id, order in entries))


board_list_seeds = {
    "board-list": board_list([(b"bounty", 41), (b"express", 0)], 12, 1,
                             [(1796099188971, 258, b'{"id":258,"tip":800}'), (-5, 3, b"{")]),
    "board-list-empty": board_list([], 0, 0, []),
    "board-list-utf8": board_list([("团购".encode(), 2 ** 64 - 1)], 2 ** 32 - 1, 0, [(2 ** 63 - 1, 2 ** 64 - 1, b"x")]),
}
for name, data in board_list_seeds.items():
    write("inbox-protocol", name, b"\xe0" + data)


# record-batch: reader byte (even: a batch payload, odd: a `Bb-Records` header value), then its
# bytes. A payload is the count of records, then each record's length and bytes (u32 each).
def record_batch(records):
    return struct.pack(">I", len(records)) + b"".join(struct.pack(">I", len(r)) + r for r in records)


record_seeds = {
    "batch-one": (0x00, record_batch([b"\x01\x02journal entry"])),
    "batch-several": (0x02, record_batch([b"a" * 40, b"", "订单".encode(), b"\x00\xff" * 8])),
    "batch-empty-record": (0x04, record_batch([b""])),
    "header": (0x01, b"105"),
    "header-largest": (0x03, b"18446744073709551615"),
    "header-zero": (0x05, b"0"),
}
for name, (setup, data) in record_seeds.items():
    write("record-batch", name, bytes([setup]) + data)
