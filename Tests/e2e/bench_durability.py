"""Durability benchmarks (not a test; run by hand against a release build).

Starts `bangbang` on a data directory, logs in a few users, opens N connections (each resumes one
of the users' sessions) and has every connection publish orders back to back for a fixed time.
Prints acknowledged publishes per second, acknowledgement latency percentiles, how long the
server took from exec to listening (recovery), and the snapshots it logged meanwhile.

    .build/pyenv/bin/python Tests/e2e/bench_durability.py --binary .build/release/bangbang \\
        --data-dir /tmp/bench --fsync always --connections 100 --seconds 10 [--snapshot-interval 1]
"""
import argparse
import asyncio
import itertools
import json
import os
import re
import signal
import subprocess
import time

import websockets

ids = itertools.count(1)


async def call(ws, op, data=None):
    request_id = next(ids)
    message = {"id": request_id, "op": op}
    if data is not None:
        message["data"] = data
    await ws.send(json.dumps(message))
    while True:
        reply = json.loads(await ws.recv())
        if reply.get("id") == request_id:
            return reply


def start_server(binary, data_dir, fsync, snapshot_interval, log_path):
    log = open(log_path, "wb")
    started = time.monotonic()
    process = subprocess.Popen([binary, "--port", "0", "--data-dir", data_dir, "--dev", "--fsync", fsync,
                                "--snapshot-interval", str(snapshot_interval), "--sms-per-ip-hourly", "0",
                                "--requests-per-second", "0", "--user-requests-per-second", "0"], stdout=log, stderr=log)
    while True:
        text = open(log_path, encoding="utf-8", errors="replace").read()
        match = re.search(r"event=listening .*?port=(\d+)", text)
        if match:
            return process, int(match.group(1)), time.monotonic() - started
        if process.poll() is not None:
            raise RuntimeError(text)
        time.sleep(0.01)


async def log_in(url, phone):
    async with websockets.connect(url, max_size=2 ** 24) as ws:
        code = (await call(ws, "auth.request_code", {"phone": phone}))["data"]["dev_code"]
        reply = await call(ws, "auth.login_code", {"phone": phone, "code": code, "device": "bench"})
        return reply["data"]["token"]


async def publisher(url, token, start_at, stop_at, latencies, counts):
    async with websockets.connect(url, max_size=2 ** 24) as ws:
        assert (await call(ws, "auth.resume", {"token": token}))["ok"]
        while time.monotonic() < start_at:
            await asyncio.sleep(0.001)
        serial = 0
        while True:
            now = time.monotonic()
            if now >= stop_at:
                return
            serial += 1
            deadline = int(time.time() * 1000) + 3_600_000
            sent = time.monotonic()
            reply = await call(ws, "order.publish", {"type": "bounty", "campus": "North", "deadline": deadline, "tip": 100,
                                                     "details": {"title": f"bench {serial}", "description": "load"}})
            elapsed = time.monotonic() - sent
            if reply["ok"]:
                counts["ok"] += 1
                latencies.append(elapsed)
            else:
                counts[reply["error"]["code"]] = counts.get(reply["error"]["code"], 0) + 1


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else float("nan")


async def run(arguments):
    os.makedirs(os.path.dirname(os.path.abspath(arguments.data_dir)), exist_ok=True)
    log_path = arguments.data_dir.rstrip("/") + ".log"
    process, port, startup = start_server(arguments.binary, arguments.data_dir, arguments.fsync,
                                          arguments.snapshot_interval, log_path)
    url = f"ws://127.0.0.1:{port}/ws"
    try:
        base = int(time.time()) % 10_000
        tokens = [await log_in(url, f"+86136{base:04d}{index:04d}") for index in range(arguments.users)]
        latencies, counts = [], {"ok": 0}
        start_at = time.monotonic() + 1.0
        stop_at = start_at + arguments.seconds
        await asyncio.gather(*(publisher(url, tokens[index % len(tokens)], start_at, stop_at, latencies, counts)
                               for index in range(arguments.connections)))
        result = {
            "fsync": arguments.fsync, "connections": arguments.connections, "seconds": arguments.seconds,
            "snapshot_interval": arguments.snapshot_interval,
            "acknowledged_per_second": round(counts["ok"] / arguments.seconds),
            "p50_ms": round(percentile(latencies, 0.50) * 1000, 2),
            "p99_ms": round(percentile(latencies, 0.99) * 1000, 2),
            "max_ms": round(max(latencies) * 1000, 2) if latencies else None,
            "errors": {code: count for code, count in counts.items() if code != "ok"},
            "exec_to_listening_s": round(startup, 3),
        }
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=600)
    log = open(log_path, encoding="utf-8", errors="replace").read()
    result["recovered"] = re.findall(r"event=recovered .*", log)[:1]
    result["snapshots"] = re.findall(r"event=snapshot_written .*", log)
    print(json.dumps(result, indent=2))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", required=True)
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--fsync", default="always")
    parser.add_argument("--connections", type=int, default=100)
    parser.add_argument("--users", type=int, default=10, help="users whose sessions the connections share (codes are rate-limited per address)")
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--snapshot-interval", type=int, default=86_400)
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
