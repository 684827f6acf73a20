#!/usr/bin/env python3
"""A slow, lossy cable between two network interfaces, in user space.

Every Ethernet frame that arrives on one interface leaves on the other after --delay-ms, unless it
is dropped (probability --loss, drawn per frame). For kernels without tc's netem qdisc: the test
network puts this between a host's port and the switch. The interfaces must not hand over
super-frames or partial checksums (turn off tso, gso and tx checksumming with ethtool on the
interfaces that send into it); a frame the other side refuses is counted and dropped.

Prints "ready" once both interfaces are open; on SIGTERM prints the counts and exits 0.
"""
import argparse
import heapq
import random
import select
import signal
import socket
import sys
import threading
import time

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4


def open_port(name):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((name, 0))
    s.setblocking(False)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    return s


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--delay-ms", type=float, default=20.0, help="added to every frame, each way")
    ap.add_argument("--loss", type=float, default=0.0, help="probability a frame is dropped, each way")
    ap.add_argument("--seed", type=int, default=None)
    args = ap.parse_args()
    if not 0.0 <= args.loss < 1.0 or args.delay_ms < 0:
        ap.error("--loss must be in [0, 1) and --delay-ms >= 0")
    rng = random.Random(args.seed)
    ports = {args.a: open_port(args.a), args.b: open_port(args.b)}
    other = {ports[args.a]: ports[args.b], ports[args.b]: ports[args.a]}
    delay = args.delay_ms / 1000.0
    due = []  # (time, order, frame, out socket)
    order = 0
    counts = {"forwarded": 0, "dropped": 0, "refused": 0}
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    print("ready", flush=True)
    while not stop.is_set():
        now = time.monotonic()
        while due and due[0][0] <= now:
            _, _, frame, out = heapq.heappop(due)
            try:
                out.send(frame)
                counts["forwarded"] += 1
            except OSError:
                counts["refused"] += 1
        timeout = max(0.0, min(0.2, due[0][0] - now)) if due else 0.2
        try:
            readable, _, _ = select.select(list(other), [], [], timeout)
        except InterruptedError:
            continue
        for s in readable:
            while True:
                try:
                    frame, addr = s.recvfrom(65535)
                except BlockingIOError:
                    break
                if addr[2] == PACKET_OUTGOING:  # what we sent ourselves
                    continue
                if args.loss and rng.random() < args.loss:
                    counts["dropped"] += 1
                    continue
                order += 1
                heapq.heappush(due, (time.monotonic() + delay, order, frame, other[s]))
    print(" ".join(f"{k}={v}" for k, v in counts.items()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
