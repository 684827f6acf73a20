"""Services, commands and requests between the Python client and the C++ processes."""

from __future__ import annotations

import asyncio
import json

import pytest
from conftest import run, run_tool

import dialog
from dialog import wire


def client(daemons, name: str) -> dialog.Client:
    return dialog.Client(name, daemons.address, heartbeat_ms=200)


def test_python_publisher_cpp_subscriber(daemons):
    async def main():
        async with client(daemons, "PyPub") as c:
            svc = c.publish("PyPub.Value")
            svc.update("first value")
            out = await run_tool("get", "--count", "1", "--timeout-ms", "15000", "PyPub.Value", address=daemons.address)
            assert "first value" in out
            # Above the compression threshold: sent as zstd, decoded by libdialog.
            big = ("0123456789abcdef" * 8192).encode()
            svc.update(big)
            assert wire.prepare_data(big)[1] == wire.FLAG_COMPRESSED
            out = await run_tool("get", "--count", "1", "--timeout-ms", "15000", "PyPub.Value", address=daemons.address)
            assert "(%d bytes)" % len(big) in out

    run(main())


def test_cpp_publisher_python_subscriber(daemons):
    daemons.start("dialogctl", "publish", "--rate", "20", "--data", "from C++", "CppPub.Value")

    async def main():
        async with client(daemons, "PySub") as c:
            got = []
            async for m in c.subscribe("CppPub.Value"):
                assert m.name == "CppPub.Value"
                got.append(m)
                if len(got) == 3:
                    break
            assert all(m.data == b"from C++" for m in got)
            assert got[0].sequence < got[1].sequence < got[2].sequence

    run(main(), 30)


def test_cpp_publisher_compressed_callback_form(daemons):
    daemons.start("dialogctl", "publish", "--rate", "20", "--size", "200000", "--compress-threshold", "1000",
                  "CppPub.Big")

    async def main():
        async with client(daemons, "PySubCb") as c:
            got: asyncio.Queue = asyncio.Queue()
            c.subscribe("CppPub.Big", callback=got.put_nowait)
            m = await asyncio.wait_for(got.get(), 15)
            assert len(m.data) == 200000

    run(main(), 30)


def test_python_command_to_cpp_registrants(daemons):
    # Two C++ registrants echo the command's data on their own services.
    daemons.start("dialogctl", "echo", "--name", "Echo1", "--command", "Py.Cmd", "--service", "Echo1.Out")
    daemons.start("dialogctl", "echo", "--name", "Echo2", "--command", "Py.Cmd", "--service", "Echo2.Out")

    async def main():
        async with client(daemons, "PyCmd") as c:
            s1, s2 = c.subscribe("Echo1.Out"), c.subscribe("Echo2.Out")
            # The registrants are connected once their services are located.
            while not (c.provider_of("Echo1.Out") and c.provider_of("Echo2.Out")):
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.2)
            for _ in range(50):  # until both echoed (registration may trail the service)
                assert c.send_command("Py.Cmd", "go 42")
                try:
                    m1 = await s1.get(0.5)
                    m2 = await s2.get(2)
                    break
                except asyncio.TimeoutError:
                    continue
            assert m1.data == b"go 42" and m2.data == b"go 42"

    run(main(), 60)


def test_names_given_right_after_start_are_announced_once_accepted(daemons):
    """start() returns before the Control Server accepted the connection (its docstring says so):
    what is published, updated, subscribed and registered then works as it does with `async with`."""
    daemons.start("dialogctl", "publish", "--rate", "20", "--data", "from C++", "CppPub.Early")

    async def main():
        # A heartbeat long enough that the CONNECT is not repeated (with the names) during the test:
        # the names must go because the connection was accepted, not because it was asked again.
        c = dialog.Client("PyEarly", daemons.address, heartbeat_ms=30000)
        await c.start()
        try:
            assert c.state == "connecting"
            c.publish("PyEarly.Value").update("published before the connection was accepted")
            sub = c.subscribe("CppPub.Early")
            got: asyncio.Queue = asyncio.Queue()
            c.register_command("PyEarly.Do", callback=got.put_nowait)
            c.register_command("PyEarly.Dropped")
            c.unregister_command("PyEarly.Dropped")
            out = await run_tool("get", "--count", "1", "--timeout-ms", "10000", "PyEarly.Value",
                                 address=daemons.address)
            assert "published before the connection was accepted" in out
            assert (await sub.get(timeout=10)).data == b"from C++"
            async with client(daemons, "PyEarlySender") as sender:
                deadline = asyncio.get_running_loop().time() + 10
                cmd = None
                while cmd is None and asyncio.get_running_loop().time() < deadline:
                    assert sender.send_command("PyEarly.Do", "go")
                    try:
                        cmd = await asyncio.wait_for(got.get(), 0.5)
                    except asyncio.TimeoutError:
                        pass
                assert cmd is not None and cmd.data == b"go", "the command registered early never arrived"
            ls = await run_tool("ls", address=daemons.address)
            assert "PyEarly.Do" in ls and "PyEarly.Dropped" not in ls, ls
            assert c.state == "connected" and not c.refusals
        finally:
            await c.close()

    run(main(), 60)


def test_commands_and_requests_between_python_clients(daemons):
    async def main():
        async with client(daemons, "PyA") as a, client(daemons, "PyB") as b:
            got: asyncio.Queue = asyncio.Queue()
            b.register_command("B.Do", callback=got.put_nowait)
            b.register_command("B.Queued")

            async def double(r: dialog.Request) -> bytes:
                if r.data == b"fail":
                    raise ValueError("asked to fail")
                return r.data * 2

            b.publish("B.Service", on_request=double)
            b.publish("B.NoRequests")
            await asyncio.sleep(0.3)
            for _ in range(50):
                a.send_command("B.Do", "x")
                try:
                    cmd = await asyncio.wait_for(got.get(), 0.5)
                    break
                except asyncio.TimeoutError:
                    continue
            assert cmd.origin == "PyA" and cmd.data == b"x" and cmd.name == "B.Do"
            a.send_command("B.Queued", "y")
            it = b.commands()
            cmd = await asyncio.wait_for(it.__anext__(), 10)
            assert cmd.name == "B.Queued" and cmd.data == b"y"
            assert await a.request("B.Service", "ab") == b"abab"
            big = b"z" * 300000
            assert await a.request("B.Service", big) == big * 2
            with pytest.raises(dialog.RequestError) as e:
                await a.request("B.Service", "fail")
            assert e.value.status == "failed" and "asked to fail" in str(e.value)
            with pytest.raises(dialog.RequestError) as e:
                await a.request("B.NoRequests", "x")
            assert e.value.status == "not-accepted"
            with pytest.raises(dialog.RequestError) as e:
                await a.request("Nobody.Provides", "x", timeout=0.5)
            assert e.value.status == "timeout"

    run(main(), 60)


def test_subscriber_survives_provider_restart(daemons):
    pub = daemons.start("dialogctl", "publish", "--rate", "20", "--data", "before", "--name", "Prov", "Prov.Value")

    async def main():
        async with client(daemons, "PySurvivor") as c:
            sub = c.subscribe("Prov.Value")
            assert (await sub.get(15)).data == b"before"
            daemons.stop(pub, kill=True)
            daemons.start("dialogctl", "publish", "--rate", "20", "--data", "after", "--name", "Prov", "Prov.Value")
            while True:
                m = await sub.get(30)
                if m.data == b"after":
                    break

    run(main(), 60)


def test_subscriber_survives_control_server_restart(daemons):
    pub = daemons.start("dialogctl", "publish", "--rate", "20", "--data", "one", "--name", "Prov", "Prov.Value")

    async def main():
        async with client(daemons, "PySurvivor") as c:
            svc = c.publish("PySurvivor.Mine")
            svc.update("mine")
            sub = c.subscribe("Prov.Value")
            assert (await sub.get(15)).data == b"one"
            daemons.stop(daemons.cs)
            while c.state == "connected":  # the silence is noticed
                await asyncio.sleep(0.05)
            daemons.start_control_server()
            await c.wait_connected(30)
            # A new provider can only be found through the new Control Server: the client
            # registered its requests again.
            daemons.stop(pub, kill=True)
            daemons.start("dialogctl", "publish", "--rate", "20", "--data", "two", "--name", "Prov", "Prov.Value")
            while (await sub.get(30)).data != b"two":
                pass
            # ... and its own service again.
            out = await run_tool("get", "--count", "1", "--timeout-ms", "15000", "PySurvivor.Mine",
                                 address=daemons.address)
            assert "mine" in out

    run(main(), 90)


def test_redirected_by_a_control_server_that_steps_down(daemons):
    """A client configured with the primary's address only follows the primary's redirect to the
    standby that took over while the primary was hung (fencing: one Control Server serves)."""
    import signal

    from conftest import free_port, wait_port

    standby_port = free_port()
    standby = "127.0.0.1:%d" % standby_port
    daemons.start("dialog-controlserver", "--port", str(standby_port), "--standby-of", daemons.address,
                  "--heartbeat-ms", "200")

    async def main():
        async with client(daemons, "PyRedirected") as c:
            c.publish("PyRedirected.Value").update("here")
            while "DIALOG.Standby.%d" % standby_port not in await run_tool("ls", address=daemons.address):
                await asyncio.sleep(0.2)
            daemons.cs.send_signal(signal.SIGSTOP)
            try:
                await asyncio.get_running_loop().run_in_executor(None, wait_port, standby_port, 15.0)
            finally:
                daemons.cs.send_signal(signal.SIGCONT)
            # Woken, the primary finds its standby serving, redirects us there and steps down.
            while ("127.0.0.1", standby_port) not in c.servers or c.state != "connected" or \
                    c.servers[c._server_index] != ("127.0.0.1", standby_port):
                await asyncio.sleep(0.05)
            out = await run_tool("get", "--count", "1", "--timeout-ms", "15000", "PyRedirected.Value",
                                 address=standby)
            assert "here" in out

    run(main(), 60)


@pytest.mark.parametrize(
    "garbage, reason",
    [
        (b"GET / HTTP/1.1\r\n\r\n", "bad magic"),
        (wire.encode_frame(wire.MessageType.SERVICE_MESSAGE, b"\x05\x00ab"), "not a valid HELLO"),
        (b"\xa1\xd1\x07\x01" + bytes(8), "unsupported protocol version 7"),
        ("hello+truncated", "truncated SERVICE_MESSAGE"),
        ("hello+corrupt-zstd", "zstd"),
        ("hello+bad-control", "malformed INFO_SERVICE"),
    ],
)
def test_malformed_input_closes_the_connection(daemons, garbage, reason):
    async def main():
        async with client(daemons, "PyVictim") as c:
            c.subscribe("X.Y")
            data = garbage
            if isinstance(garbage, str):
                hello = wire.control_frame(wire.MessageType.HELLO, wire.wire_pb2.Hello(name="Evil", host="127.0.0.1", port=1))
                if garbage.endswith("truncated"):
                    data = hello + wire.encode_frame(wire.MessageType.SERVICE_MESSAGE, b"\x03\x00X.Y\x01\x02")
                elif garbage.endswith("corrupt-zstd"):
                    body = b"\x03\x00X.Y" + bytes(8) + b"\x28\xb5\x2f\xfd garbage"
                    data = hello + wire.encode_frame(wire.MessageType.SERVICE_MESSAGE, body, wire.FLAG_COMPRESSED)
                else:
                    data = hello + wire.encode_frame(wire.MessageType.INFO_SERVICE, b"\xff\xff\xff")
            reader, writer = await asyncio.open_connection("127.0.0.1", c.port)
            writer.write(data)
            await writer.drain()
            # The client closes the connection: EOF (or a reset), never a hang.
            try:
                rest = await asyncio.wait_for(reader.read(), 10)
            except ConnectionResetError:
                rest = b""
            assert rest == b""
            writer.close()
            assert c.protocol_errors, "no protocol error recorded"
            assert reason in str(c.protocol_errors[-1]), str(c.protocol_errors[-1])
            assert isinstance(c.protocol_errors[-1], dialog.ProtocolError)
            # The client itself keeps working.
            assert c.state == "connected"

    run(main(), 30)


def test_client_rejects_bad_addresses():
    with pytest.raises(dialog.ClientError):
        dialog.Client("X", "no-port")
    with pytest.raises(dialog.ClientError):
        dialog.Client("", "127.0.0.1:1")


def test_control_server_from_environment(monkeypatch):
    monkeypatch.setenv("DIALOG_CONTROL_SERVER", "127.0.0.1:4711")
    assert dialog.Client("X").servers == [("127.0.0.1", 4711)]
    assert dialog.Client("X", "10.0.0.1:1,127.0.0.1:2").servers == [("10.0.0.1", 1), ("127.0.0.1", 2)]
    # a non-local Control Server: the address of the route to it, as libdialog advertises
    assert dialog.Client("X", "10.0.0.1:1").host == dialog.client.route_address("10.0.0.1", 1)
    monkeypatch.setenv("DIALOG_ADVERTISE", "daq-pc-7")
    assert dialog.Client("X", "10.0.0.1:1").host == "daq-pc-7"
    assert dialog.Client("X", "10.0.0.1:1", advertise="10.1.1.1").host == "10.1.1.1"


def test_service_of_another_process_is_refused(daemons):
    async def main():
        async with client(daemons, "PyFirst") as a, client(daemons, "PySecond") as b:
            a.publish("Shared.Name").update("a")
            await asyncio.sleep(0.2)
            b.publish("Shared.Name")
            for _ in range(100):
                if b.refusals:
                    break
                await asyncio.sleep(0.05)
            what, name, reason = b.refusals[0]
            assert (what, name) == ("service", "Shared.Name") and "PyFirst" in reason
            sub = b.subscribe("Shared.Name")
            assert (await sub.get(10)).data == b"a"

    run(main(), 30)


def test_name_in_use_is_refused_on_the_connection_and_retried_with_back_off(daemons):
    """The Control Server answers a CONNECT naming a live process on the connection it came by;
    the refused client reports it once per attempt and waits 2, 4, ... s between attempts."""

    async def main():
        async with client(daemons, "PyTwin") as a:
            await a.wait_connected(10)
            errors = []
            b = client(daemons, "PyTwin")
            b.on_error = errors.append
            await b.start()
            try:
                for _ in range(100):
                    if b.refusals:
                        break
                    await asyncio.sleep(0.05)
                assert b.refusals, "no refusal reached the second client"
                what, name, reason = b.refusals[0]
                assert (what, name) == ("connect", "PyTwin") and reason
                assert errors and "refused by the Control Server" in str(errors[0])
                # The first back-off is 2 s, jittered to at least half of it; 0.9 s at 200 ms
                # heartbeats: without the back-off it would try about 4 more times.
                await asyncio.sleep(0.9)
                assert len(b.refusals) == 1 and b.state != "connected"
            finally:
                await b.close()
            assert a.state == "connected"

    run(main(), 30)


def test_reconnect_delay_is_jittered_and_bounded():
    """As libdialog's clientcore: the first attempt anywhere in one interval, then [c/2, c) with c
    doubling from 2 intervals up to 8 intervals, never above 30 s."""
    from dialog.client import reconnect_delay

    for r in (0.0, 0.25, 0.5, 0.999, 1.0):
        assert 0.0 <= reconnect_delay(0, 0.2, r) <= 0.2
        assert 0.2 <= reconnect_delay(1, 0.2, r) <= 0.4
        assert 0.4 <= reconnect_delay(2, 0.2, r) <= 0.8
        assert 0.8 <= reconnect_delay(3, 0.2, r) <= 1.6
        assert 0.8 <= reconnect_delay(50, 0.2, r) <= 1.6  # capped at 8 intervals
        assert 15.0 <= reconnect_delay(3, 10.0, r) <= 30.0  # ... and at 30 s
    assert reconnect_delay(1, 0.2, 0.0) < reconnect_delay(1, 0.2, 1.0)  # the random part is used
    assert reconnect_delay(0, 0.2, -3.0) == 0.0 and reconnect_delay(0, 0.2, 7.0) == 0.2


def test_connects_to_a_silent_control_server_are_paced():
    """A Control Server that never answers (hung, or drowning in a reconnection storm) gets a
    CONNECT later and later, not one per heartbeat interval from every process."""
    connects = []

    async def main():
        async def serve(reader, writer):
            decoder = wire.FrameDecoder()
            try:
                while True:
                    data = await reader.read(65536)
                    if not data:
                        return
                    for f in decoder.feed(data):
                        if f.type == wire.MessageType.CONNECT_TO_CONTROL_SERVER:
                            connects.append(asyncio.get_running_loop().time())
            finally:
                writer.close()

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        c = dialog.Client("PyPaced", "127.0.0.1:%d" % port, heartbeat_ms=100)
        await c.start()
        try:
            await asyncio.sleep(3.0)
        finally:
            await c.close()
            server.close()

    run(main(), 30)
    # Unpaced: one CONNECT per 100 ms interval, about 30. Paced: 0.1-0.2, 0.2-0.4, then 0.4-0.8 s
    # apart, 5 to 9 in 3 s (fewer on a loaded machine).
    assert 2 <= len(connects) <= 12, connects
    gaps = [b - a for a, b in zip(connects, connects[1:])]
    assert all(g >= 0.09 for g in gaps), gaps


def test_frames_from_another_connection_than_the_control_servers_are_ignored(daemons):
    """A COMMAND_MESSAGE and an INFO_SERVICE written straight to the client's port by a connection that
    says it is the Control Server are ignored; the Control Server's path still works."""
    from dialog._proto import dialog_pb2 as pb

    async def main():
        async with client(daemons, "PyVictim") as v, client(daemons, "PySender") as s:
            got: asyncio.Queue = asyncio.Queue()
            v.register_command("PyVictim.Do", callback=got.put_nowait)
            reader, writer = await asyncio.open_connection("127.0.0.1", v.port)
            hello = pb.Hello(name="DIALOG.ControlServer", host="127.0.0.1", port=1, pid=1, incarnation=1)
            info = pb.InfoService(name="Anything", available=True, provider="Evil", host="127.0.0.1", port=1)
            writer.write(wire.control_frame(wire.MessageType.HELLO, hello)
                         + wire.command_frame("PyVictim.Do", "RunControl", b"forged")
                         + wire.control_frame(wire.MessageType.INFO_SERVICE, info))
            await writer.drain()
            for _ in range(100):  # bounded: 10 s
                if v.ignored_frames >= 2:
                    break
                await asyncio.sleep(0.1)
            assert v.ignored_frames >= 2
            assert got.empty()
            writer.close()
            for _ in range(50):
                s.send_command("PyVictim.Do", "genuine")
                try:
                    cmd = await asyncio.wait_for(got.get(), 0.5)
                    break
                except asyncio.TimeoutError:
                    continue
            assert cmd.data == b"genuine" and cmd.origin == "PySender"

    run(main(), 60)


def test_subscriber_believes_data_only_from_the_provider_subscribed_to(daemons):
    """The Python subscriber sends a token with its SUBSCRIBE_SERVICE (as libdialog does): values for the
    name written to its port by a rogue that claims the provider's name and incarnation, or that
    echoes a token of its own, are ignored; the provider's values still arrive."""
    from dialog._proto import dialog_pb2 as pb

    daemons.start("dialogctl", "publish", "--rate", "20", "--data", "genuine", "--name", "CppProvider",
                  "CppPub.Real")

    async def main():
        async with client(daemons, "PySubTok") as c:
            got: asyncio.Queue = asyncio.Queue()
            c.subscribe("CppPub.Real", callback=got.put_nowait)
            first = await asyncio.wait_for(got.get(), 15)
            assert first.data == b"genuine" and first.sequence > 0
            provider, _ep, incarnation = c._providers["CppPub.Real"]
            assert provider == "CppProvider"
            reader, writer = await asyncio.open_connection("127.0.0.1", c.port)
            hello = pb.Hello(name=provider, host="127.0.0.1", port=1, pid=1, incarnation=incarnation)
            writer.write(wire.control_frame(wire.MessageType.HELLO, hello)
                         + wire.service_frame("CppPub.Real", 0, b"a token of my own")
                         + wire.service_frame("CppPub.Real", 1 << 40, b"forged"))
            await writer.drain()
            for _ in range(100):  # bounded: 10 s
                if c.ignored_data >= 2:
                    break
                await asyncio.sleep(0.1)
            assert c.ignored_data >= 2
            # The provider asked to acknowledge again (the rogue claims its name and incarnation)
            # changes nothing: later values are the provider's, on its own connection.
            for _ in range(10):
                m = await asyncio.wait_for(got.get(), 10)
                assert m.data == b"genuine", m
            writer.close()

    run(main(), 60)


def test_service_refused_for_now_is_asked_again(tmp_path):
    """A registration the Control Server refuses for now (Refused.retry_ms: the directory is full) is
    kept and asked again, paced, until there is room; a final refusal is not."""
    from conftest import Daemons, wait_port

    d = Daemons(tmp_path)
    try:
        d.start("dialog-controlserver", "--port", str(d.cs_port), "--heartbeat-ms", "200",
                "--max-services", "2", "--reserved-services", "0")
        wait_port(d.cs_port)

        async def main():
            async with client(d, "PyFull") as c:
                first = c.publish("PyFull.One")
                first.update("one")
                # No process may hold the room left for all others: the second is refused for now.
                second = c.publish("PyFull.Two")
                second.update("two")
                for _ in range(100):  # bounded: 10 s
                    if any(r[0] == "service-later" and r[1] == "PyFull.Two" for r in c.refusals):
                        break
                    await asyncio.sleep(0.1)
                later = [r for r in c.refusals if r[1] == "PyFull.Two"]
                assert later and later[0][0] == "service-later" and "asking again in" in later[0][2], c.refusals
                assert "PyFull.Two" in c._services
                # Room again: the next round gets it in, and a subscriber its value.
                c.unpublish(first)
                out = await run_tool("get", "--count", "1", "--timeout-ms", "30000", "PyFull.Two",
                                     address=d.address, timeout=40)
                assert "two" in out

        run(main(), 90)
    finally:
        d.close()


def test_directory_keeps_the_software_version_of_the_hello(daemons):
    # The Python client says its package's version in its HELLO; the Control Server's directory keeps it
    # (the run registry records it per process from there).
    async def main():
        async with client(daemons, "PyVersion"):
            out = await run_tool("ls", "--json", address=daemons.address)
            directory = json.loads([line for line in out.splitlines() if line.startswith("{")][-1])
            processes = {p["name"]: p for p in directory["processes"]}
            assert processes["PyVersion"]["version"] == dialog.__version__

    run(main())
