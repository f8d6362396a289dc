"""A small, bounded loopback benchmark for a running `bangbang --echo`, for the performance
notes (not a test: nothing here asserts a speed).

    echo_bench.py echo --port P [--connections 1] [--seconds 10] [--size 100]
        Closed loop: every connection keeps one 100-byte text message in flight on /echo and
        sends the next as soon as the echo is back. Prints messages/s and round-trip p50/p99.
    echo_bench.py idle --port P --pid SERVER_PID [--connections 10000] [--deflate]
        Opens that many WebSocket connections on /echo (each exchanges one message, so a
        deflate connection has used its compressor once), then reads the server's resident
        memory and prints the growth per connection.

Frames are built once and the client parses only the fixed-size echo, so a single Python
process can keep a server core busy; still, with one connection the client's own latency is
part of every round trip, so treat the numbers as a floor for the server."""
import argparse
import asyncio
import base64
import os
import re
import struct
import time

HANDSHAKE = ("GET /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
             "Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n{extra}\r\n")
DEFLATE = "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n"


def masked_text_frame(payload, rsv1=False):
    key = os.urandom(4)
    first = 0x81 | (0x40 if rsv1 else 0)
    length = len(payload)
    header = bytes([first, 0x80 | length]) if length < 126 else bytes([first, 0x80 | 126]) + struct.pack("!H", length)
    return header + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


async def open_websocket(port, deflate=False):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write(HANDSHAKE.format(key=key, extra=DEFLATE if deflate else "").encode())
    head = await reader.readuntil(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 101"):
        raise RuntimeError(f"handshake refused: {head[:80]!r}")
    return reader, writer, b"permessage-deflate" in head


async def read_frame(reader):
    first, second = await reader.readexactly(2)
    length = second & 0x7F
    if length == 126:
        length = struct.unpack("!H", await reader.readexactly(2))[0]
    elif length == 127:
        length = struct.unpack("!Q", await reader.readexactly(8))[0]
    return first, await reader.readexactly(length)


async def echo_loop(port, size, deadline, samples):
    reader, writer, _ = await open_websocket(port)
    frame = masked_text_frame(b"x" * size)
    expected = 2 + size if size < 126 else 4 + size
    while time.monotonic() < deadline:
        started = time.perf_counter()
        writer.write(frame)
        await reader.readexactly(expected)
        samples.append(time.perf_counter() - started)
    writer.close()


async def run_echo(args):
    samples = []
    deadline = time.monotonic() + args.seconds
    started = time.monotonic()
    await asyncio.gather(*(echo_loop(args.port, args.size, deadline, samples) for _ in range(args.connections)))
    elapsed = time.monotonic() - started
    samples.sort()

    def quantile(q):
        return samples[min(len(samples) - 1, int(q * len(samples)))] * 1000

    print(f"connections={args.connections} size={args.size} messages={len(samples)} "
          f"rate={len(samples) / elapsed:.0f}/s p50={quantile(0.5):.3f}ms p99={quantile(0.99):.3f}ms")


def resident_bytes(pid):
    with open(f"/proc/{pid}/status") as status:
        return int(re.search(r"VmRSS:\s+(\d+) kB", status.read()).group(1)) * 1024


async def run_idle(args):
    await asyncio.sleep(0.5)
    before = resident_bytes(args.pid)
    connections = []
    negotiated = 0
    semaphore = asyncio.Semaphore(200)

    async def one():
        nonlocal negotiated
        async with semaphore:
            reader, writer, deflated = await open_websocket(args.port, args.deflate)
            negotiated += deflated
            # One message each, compressed when deflate was agreed, so compressors have run.
            payload = b"hello idle connection " * 4
            if deflated:
                import zlib
                compressor = zlib.compressobj(wbits=-15)
                body = compressor.compress(payload) + compressor.flush(zlib.Z_SYNC_FLUSH)
                writer.write(masked_text_frame(body[:-4], rsv1=True))
            else:
                writer.write(masked_text_frame(payload))
            await read_frame(reader)
            connections.append((reader, writer))

    await asyncio.gather(*(one() for _ in range(args.connections)))
    await asyncio.sleep(2)
    after = resident_bytes(args.pid)
    print(f"connections={len(connections)} deflate_negotiated={negotiated} server_rss_before={before >> 20}MiB "
          f"after={after >> 20}MiB per_connection={(after - before) / len(connections):.0f}B")
    for _, writer in connections:
        writer.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["echo", "idle"])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--connections", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--pid", type=int)
    parser.add_argument("--deflate", action="store_true")
    args = parser.parse_args()
    if args.seconds > 120 or args.connections > 20_000:
        parser.error("bounded by design: at most 120 s and 20,000 connections")
    asyncio.run(run_echo(args) if args.mode == "echo" else run_idle(args))


if __name__ == "__main__":
    main()
