#!/usr/bin/env python3
"""Figures of the Python client against the C++ processes (a benchmark, not a test).

    python3 python/bench.py [--bin build/bin] [--seconds 3] [--json]

- fan-in: 25 `dialogctl publish --rate 0 --flow block` processes (C++) -> one Python subscriber, at 100 B and 10 KB;
- Python publisher -> C++ subscriber (`dialogctl get`), 100 B;
- request round trip from Python: to an IS server (GET of a small object) and to another Python
  client, p50 / p99.

Starts its own Control Server and IS server on free loopback ports and stops everything at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import dialog  # noqa: E402
from dialog._proto import is_pb2  # noqa: E402
from dialog.is_ import Dictionary  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Procs:
    def __init__(self, bin_dir: Path, address: str) -> None:
        self.bin = bin_dir
        self.address = address
        self.procs: list = []
        self.logdir = tempfile.mkdtemp(prefix="dialog-pybench-")

    def start(self, exe: str, *args: str, stdout=None) -> subprocess.Popen:
        env = dict(os.environ, DIALOG_CONTROL_SERVER=self.address, QT_QPA_PLATFORM="offscreen")
        out = stdout or open(os.path.join(self.logdir, "%d.log" % len(self.procs)), "wb")
        p = subprocess.Popen([str(self.bin / exe), *args], stdout=out, stderr=subprocess.STDOUT, env=env)
        self.procs.append(p)
        return p

    def stop(self, procs=None) -> None:
        for p in procs if procs is not None else self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs if procs is not None else self.procs:
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


async def fanin(procs: Procs, size: int, seconds: float, senders: int = 25) -> float:
    # As `dialogctl bench fanin`: the publishers send as fast as flow control allows and wait for room
    # (Block) rather than spin dropping.
    args = ["publish", "--rate", "0", "--flow", "block", "--size", str(size)]
    pubs = [procs.start("dialogctl", *args, "--name", "FanIn%d" % i, "FanIn%d.Data" % i) for i in range(senders)]
    try:
        async with dialog.Client("PyFanIn", procs.address) as c:
            count = 0

            def on(m: dialog.Message) -> None:
                nonlocal count
                count += 1

            for i in range(senders):
                c.subscribe("FanIn%d.Data" % i, callback=on)
            deadline = time.monotonic() + 20
            while sum(1 for i in range(senders) if c.provider_of("FanIn%d.Data" % i)) < senders:
                if time.monotonic() > deadline:
                    raise RuntimeError("the publishers did not appear")
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.5)  # warm-up
            start_count, t0 = count, time.monotonic()
            await asyncio.sleep(seconds)
            return (count - start_count) / (time.monotonic() - t0)
    finally:
        procs.stop(pubs)


async def publish_to_cpp(procs: Procs, size: int, seconds: float) -> float:
    out = open(os.path.join(procs.logdir, "get.out"), "w+b")
    async with dialog.Client("PyPublisher", procs.address) as c:
        svc = c.publish("PyPublisher.Data")
        sub = procs.start("dialogctl", "get", "PyPublisher.Data", stdout=out)
        try:
            await svc.wait_subscribers(1, 20)
            data = b"x" * size
            t0 = time.monotonic()
            n = 0
            while time.monotonic() - t0 < seconds:
                for _ in range(100):
                    svc.update(data)
                n += 100
                await svc.drain()
                await asyncio.sleep(0)
            elapsed = time.monotonic() - t0
            await asyncio.sleep(1.0)  # let the subscriber print what is in flight
        finally:
            procs.stop([sub])
    out.seek(0)
    received = sum(1 for line in out if b"PyPublisher.Data #" in line)
    return min(n, received) / elapsed


async def round_trips(c: dialog.Client, service: str, data: bytes, n: int) -> dict:
    await c.request(service, data)  # locate the provider
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        await c.request(service, data)
        times.append((time.perf_counter() - t0) * 1e6)
    times.sort()
    return {"p50_us": round(statistics.median(times)), "p99_us": round(times[int(len(times) * 0.99) - 1])}


async def requests(procs: Procs, n: int) -> dict:
    procs.start("dialog-isserver", "--name", "PyBench", "--control-server", procs.address)
    async with dialog.Client("PyRequester", procs.address) as c, dialog.Client("PyAnswerer", procs.address) as a:
        a.publish("PyAnswerer.Echo", on_request=lambda r: r.data)
        d = Dictionary(c)
        for _ in range(100):
            try:
                await d.put("PyBench.Small", "Histogram1D", {"title": "x", "bins": 1, "contents": [1.0]})
                break
            except dialog.is_.ISError:
                await asyncio.sleep(0.1)
        get = is_pb2.Request(op=is_pb2.Request.GET, name="PyBench.Small").SerializeToString()
        return {
            "is_get": await round_trips(c, "IS.PyBench", get, n),
            "python_echo": await round_trips(c, "PyAnswerer.Echo", b"x" * 100, n),
        }


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=str(HERE.parent / "build" / "bin"), help="directory of the C++ binaries")
    ap.add_argument("--seconds", type=float, default=3.0, help="measurement time of each rate")
    ap.add_argument("--requests", type=int, default=2000, help="round trips measured")
    ap.add_argument("--json", action="store_true", help="one JSON line")
    args = ap.parse_args()
    port = free_port()
    procs = Procs(Path(args.bin), "127.0.0.1:%d" % port)
    procs.start("dialog-controlserver", "--port", str(port))
    time.sleep(0.3)
    try:
        r = {
            "fanin_25x100B_msgs_per_s": round(await fanin(procs, 100, args.seconds)),
            "fanin_25x10KB_msgs_per_s": round(await fanin(procs, 10 * 1024, args.seconds)),
            "python_pub_to_cpp_100B_msgs_per_s": round(await publish_to_cpp(procs, 100, args.seconds)),
            "request_rtt": await requests(procs, args.requests),
        }
    finally:
        procs.stop()
    if args.json:
        print(json.dumps(r))
        return
    print("Python subscriber, 25 -> 1 fan-in, 100 B : %8d msgs/s" % r["fanin_25x100B_msgs_per_s"])
    print("Python subscriber, 25 -> 1 fan-in, 10 KB : %8d msgs/s" % r["fanin_25x10KB_msgs_per_s"])
    print("Python publisher -> C++ subscriber, 100 B: %8d msgs/s" % r["python_pub_to_cpp_100B_msgs_per_s"])
    for k, v in r["request_rtt"].items():
        print("request round trip (%s): p50 %d us, p99 %d us" % (k, v["p50_us"], v["p99_us"]))


if __name__ == "__main__":
    asyncio.run(main())
