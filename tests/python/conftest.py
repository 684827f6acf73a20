"""Fixtures of the Python tests: the real daemons (built C++ binaries) on 127.0.0.1 with free ports.

DIALOG_BIN_DIR names the directory of the binaries (CTest passes it); every child is reaped at the
end of its test, and every wait is bounded.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import List, Optional

import pytest

SOURCE_DIR = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(SOURCE_DIR / "python"))

BIN_DIR = Path(os.environ.get("DIALOG_BIN_DIR", SOURCE_DIR / "build" / "bin"))
TYPES_DIR = SOURCE_DIR / "resources" / "is-types"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as s:
            s.settimeout(0.2)
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise TimeoutError("nothing listens on port %d" % port)


class Daemons:
    """Starts binaries of DIALOG_BIN_DIR and reaps them."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.procs: List[subprocess.Popen] = []
        self.cs_port = free_port()
        self.cs: Optional[subprocess.Popen] = None
        self.n = 0

    @property
    def address(self) -> str:
        return "127.0.0.1:%d" % self.cs_port

    def start(self, binary: str, *args: str) -> subprocess.Popen:
        exe = BIN_DIR / binary
        if not exe.exists():
            pytest.skip("%s is not built" % exe)
        self.n += 1
        log = open(self.tmp / ("%02d-%s.log" % (self.n, binary)), "wb")
        env = dict(os.environ, QT_QPA_PLATFORM="offscreen", DIALOG_CONTROL_SERVER=self.address)
        p = subprocess.Popen([str(exe), *args], stdout=log, stderr=subprocess.STDOUT, env=env)
        log.close()
        self.procs.append(p)
        return p

    def start_control_server(self) -> subprocess.Popen:
        self.cs = self.start("dialog-controlserver", "--port", str(self.cs_port), "--heartbeat-ms", "200")
        wait_port(self.cs_port)
        return self.cs

    def start_is_server(self, name: str, http_port: int = 0) -> subprocess.Popen:
        args = ["--name", name, "--types", str(TYPES_DIR), "--control-server", self.address]
        if http_port:
            args += ["--http-port", str(http_port)]
        p = self.start("dialog-isserver", *args)
        if http_port:
            wait_port(http_port)
        return p

    @staticmethod
    def stop(p: subprocess.Popen, kill: bool = False) -> None:
        if p.poll() is None:
            p.kill() if kill else p.terminate()
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(5)

    def close(self) -> None:
        for p in reversed(self.procs):
            self.stop(p)


@pytest.fixture
def daemons(tmp_path: Path):
    d = Daemons(tmp_path)
    d.start_control_server()
    try:
        yield d
    finally:
        d.close()


async def run_tool(*args: str, address: str, timeout: float = 20.0) -> str:
    """Runs the `dialogctl` tool (asynchronously: the Python client keeps working) and returns its output;
    AssertionError when it fails or does not end within @p timeout."""
    exe = BIN_DIR / "dialogctl"
    if not exe.exists():
        pytest.skip("%s is not built" % exe)
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", DIALOG_CONTROL_SERVER=address)
    p = await asyncio.create_subprocess_exec(
        str(exe), *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, env=env
    )
    try:
        out, _ = await asyncio.wait_for(p.communicate(), timeout)
    except asyncio.TimeoutError:
        p.kill()
        await p.wait()
        raise AssertionError("dialogctl %s did not finish within %s s" % (" ".join(args), timeout))
    text = out.decode(errors="replace")
    assert p.returncode == 0, "dialogctl %s exited with %s:\n%s" % (" ".join(args), p.returncode, text)
    return text


def run(coro, timeout: float = 60.0):
    """Runs @p coro in a new event loop, bounded by @p timeout seconds."""
    return asyncio.run(asyncio.wait_for(coro, timeout))
