"""The Python client as a first-class client: the address it advertises, scripts' connection options
and the reasons they are given, the message log, IS history and the put/insert/update semantics."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import shutil
import subprocess
import sys
import uuid

import pytest
from conftest import SOURCE_DIR, free_port, run, run_tool

import dialog
import dialog.sync
from dialog.client import ConnectError, route_address
from dialog.is_ import Dictionary, ISError, Status


def test_advertised_address_follows_the_route_to_the_control_server():
    assert route_address("127.0.0.1", 3425) == "127.0.0.1"
    assert route_address("localhost", 3425) == "127.0.0.1"
    if shutil.which("ip") is None or subprocess.run(["ip", "netns", "list"], capture_output=True).returncode:
        pytest.skip("no network namespaces here (ip netns needs root)")
    # A namespace with one interface: the route to its network goes out of 10.77.0.1.
    ns = "dialogpy" + uuid.uuid4().hex[:6]
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        for cmd in (["ip", "link", "add", "v0", "type", "veth", "peer", "name", "v1"],
                    ["ip", "addr", "add", "10.77.0.1/24", "dev", "v0"],
                    ["ip", "link", "set", "v0", "up"], ["ip", "link", "set", "v1", "up"]):
            subprocess.run(["ip", "netns", "exec", ns, *cmd], check=True)
        code = ("import sys; sys.path.insert(0, %r); from dialog.client import route_address; "
                "print(route_address('10.77.0.9', 3425))" % str(SOURCE_DIR / "python"))
        out = subprocess.run(["ip", "netns", "exec", ns, sys.executable, "-c", code], capture_output=True, text=True,
                             timeout=30)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == "10.77.0.1"
    finally:
        subprocess.run(["ip", "netns", "delete", ns])


def test_an_advertised_address_given_is_the_one_others_reach(daemons, monkeypatch):
    monkeypatch.setenv("DIALOG_ADVERTISE", "127.0.0.2")

    async def main():
        async with dialog.Client("PyAdvertised", daemons.address, heartbeat_ms=200) as a:
            assert a.host == "127.0.0.2"
            a.publish("PyAdvertised.Value").update("reached at 127.0.0.2")
            # A C++ subscriber connects to the address the Control Server was given.
            out = await run_tool("get", "--count", "1", "PyAdvertised.Value", address=daemons.address)
            assert "reached at 127.0.0.2" in out

    run(main())


def test_sync_says_which_address_it_could_not_reach():
    dialog.sync.disconnect()
    port = free_port()
    with pytest.raises(ConnectError) as e:
        dialog.sync.connect("PyNowhere", "127.0.0.1:%d" % port, timeout=1.5)
    assert "127.0.0.1:%d unreachable" % port in str(e.value)
    assert isinstance(e.value, TimeoutError)  # code that caught the bare time-out still does


def test_sync_says_why_the_control_server_refused(tmp_path, daemons):
    daemons.stop(daemons.cs)
    secret = tmp_path / "secret"
    secret.write_bytes(b"the partition's secret, 32 bytes\n")
    other = tmp_path / "other"
    other.write_bytes(b"another partition's secret......")
    daemons.cs = daemons.start("dialog-controlserver", "--port", str(daemons.cs_port), "--heartbeat-ms", "200",
                               "--secret-file", str(secret))
    from conftest import wait_port
    wait_port(daemons.cs_port)
    dialog.sync.disconnect()
    with pytest.raises(ConnectError) as e:
        dialog.sync.connect("PyWrongSecret", daemons.address, timeout=3, secret_file=str(other))
    assert "refused by the Control Server" in str(e.value) or "secret" in str(e.value), str(e.value)
    session = dialog.sync.connect("PyRightSecret", daemons.address, timeout=10, secret_file=str(secret))
    try:
        assert session.client.state == "connected"
        with pytest.raises(dialog.ClientError):
            dialog.sync.connect("PyAnotherName", daemons.address)
    finally:
        dialog.sync.disconnect()


def test_report_reaches_the_message_log(daemons, tmp_path):
    daemons.start("dialog-logger", "--data-dir", str(tmp_path / "log"), "--control-server", daemons.address)
    text = "python report %s" % uuid.uuid4().hex[:8]

    async def main():
        async with dialog.Client("PyReporter", daemons.address, heartbeat_ms=200) as c:
            for _ in range(100):  # until the logger has registered its service
                try:
                    await c.report(text, "warning", "shift.script", values={"channel": 3, "ok": False})
                    break
                except dialog.RequestError:
                    await asyncio.sleep(0.1)
            else:
                raise AssertionError("no logger answered")
            with pytest.raises(ValueError):
                await c.report("x", "loud")
        out = await run_tool("log", "search", "--text", text, "--json", address=daemons.address)
        records = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        assert len(records) == 1, out
        r = records[0]
        assert (r["process"], r["severity"], r["category"], r["text"]) == ("PyReporter", "warning", "shift.script", text)
        assert r["values"] == {"channel": 3, "ok": False}

    run(main())


def test_history_and_put_semantics(daemons):
    daemons.start_is_server("PyHist")

    async def main():
        async with dialog.Client("PyHistory", daemons.address, heartbeat_ms=200) as c:
            d = Dictionary(c)
            for _ in range(100):
                try:
                    await d.fetch_types("PyHist")
                    break
                except ISError:
                    await asyncio.sleep(0.1)
            since = dt.datetime.now(dt.timezone.utc) - dt.timedelta(seconds=1)
            await d.put("PyHist.Run", "RunInfo", {"runNumber": 1, "runType": "physics"})
            for n in range(2, 6):
                await d.put("PyHist.Run", "RunInfo", {"runNumber": n})  # runType kept, as `dialogctl is put`
            assert (await d.get("PyHist.Run")).value["runType"] == "physics"
            h = await d.history("PyHist.Run", since)
            assert h.type == "RunInfo"
            assert [p.value for p in h.series["runNumber"]] == [1, 2, 3, 4, 5], h
            two = await d.history("PyHist.Run", since, max_points=2, attribute="runNumber")
            assert list(two.series) == ["runNumber"]
            assert len(two.series["runNumber"]) == 2 and sum(p.count for p in two.series["runNumber"]) == 5
            assert min(p.min for p in two.series["runNumber"]) == 1 and max(p.max for p in two.series["runNumber"]) == 5
            await d.insert("PyHist.Fresh", "RunInfo", {"runNumber": 7})
            assert (await d.get("PyHist.Fresh")).value["runType"] == ""  # the type's default
            with pytest.raises(ISError) as e:
                await d.insert("PyHist.Fresh", "RunInfo", {"runNumber": 8})
            assert e.value.code == Status.ALREADY_EXISTS
            with pytest.raises(ISError) as e:
                await d.update("PyHist.Missing", "RunInfo", {"runNumber": 1})
            assert e.value.code == Status.NOT_FOUND
            with pytest.raises(ISError) as e:
                await d.history("PyHist.Missing", since)
            assert e.value.code == Status.NOT_FOUND

    run(main())
