"""The Python examples of README.md and docs/*.md, each run as a script against the demo partition
(docs/examples.md says how the examples are marked)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import BIN_DIR, SOURCE_DIR, free_port

PARTITION = SOURCE_DIR / "resources" / "partitions" / "demo.json"


def _examples():
    out = subprocess.run([sys.executable, str(SOURCE_DIR / "tests" / "docs" / "docexamples.py"), "--python",
                          str(SOURCE_DIR)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


EXAMPLES = _examples()


def _tool(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    return subprocess.run([str(BIN_DIR / "dialogctl"), *args], capture_output=True, text=True, env=env,
                          timeout=timeout)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The demo partition on a free port, and the secret dialogctl up made for it (the partition names
    none); every process it started is gone afterwards."""
    if not (BIN_DIR / "dialogctl").exists():
        pytest.skip("%s is not built" % (BIN_DIR / "dialogctl"))
    run_dir = tmp_path_factory.mktemp("demo")
    port = str(free_port())
    up = _tool("up", str(PARTITION), "--port", port, "--run-dir", str(run_dir))
    record = run_dir / "processes.json"
    pids = [p["pid"] for p in json.loads(record.read_text())["processes"]] if record.exists() else []
    try:
        assert up.returncode == 0, up.stdout + up.stderr
        assert "export DIALOG_SECRET_FILE=%s" % (run_dir / "secret") in up.stdout, up.stdout
        yield "127.0.0.1:" + port, str(run_dir / "secret")
    finally:
        _tool("down", str(PARTITION), "--port", port, "--run-dir", str(run_dir))
        for pid in pids:
            try:
                cmdline = Path("/proc/%d/cmdline" % pid).read_bytes()
            except OSError:
                continue
            if str(BIN_DIR).encode() in cmdline:
                os.kill(pid, signal.SIGKILL)


def test_examples_are_found():
    # The convention is in force: at least the Python page has an example.
    assert any(e["page"] == "docs/python.md" for e in EXAMPLES)
    assert {e["kind"] for e in EXAMPLES if e["page"] == "python/README.md"} == {"script", "notebook"}


@pytest.mark.parametrize("example", EXAMPLES, ids=[e["where"] for e in EXAMPLES])
def test_example_runs(example, demo, tmp_path):
    script = tmp_path / "example.py"
    code = example["code"]
    if example["kind"] == "notebook":  # a cell: top-level await, inside the loop a notebook runs
        body = "\n".join("    " + line for line in code.split("\n"))
        code = "import asyncio\n\n\nasync def _cell():\n%s\n\n\nasyncio.run(_cell())\n" % body
    script.write_text(code, encoding="utf-8")
    address, secret = demo
    env = dict(os.environ, DIALOG_CONTROL_SERVER=address, DIALOG_SECRET_FILE=secret,
               PYTHONPATH=str(SOURCE_DIR / "python"))
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=60,
                       cwd=tmp_path)
    assert p.returncode == 0, "%s exited with %d:\n%s%s" % (example["where"], p.returncode, p.stdout, p.stderr)
