"""A partition with a shared secret: the Python client joins it with the secret (both directions of
the challenge-response, against libdialog's), and is refused without it or with another one."""

from __future__ import annotations

import asyncio
import os

import pytest
from conftest import Daemons, run, run_tool

import dialog


@pytest.fixture
def secured(tmp_path, monkeypatch):
    secret = tmp_path / "secret"
    secret.write_bytes(b"the partition's secret, 32 bytes\n")
    other = tmp_path / "other"
    other.write_bytes(b"another partition's secret......")
    # The daemons and the tool inherit it.
    monkeypatch.setenv("DIALOG_SECRET_FILE", str(secret))
    d = Daemons(tmp_path)
    d.start_control_server()
    try:
        yield d, str(secret), str(other)
    finally:
        d.close()


def test_python_client_with_the_secret_works_both_ways(secured):
    daemons, secret, _ = secured
    daemons.start("dialogctl", "publish", "--rate", "20", "--data", "from C++", "SecCpp.Value")

    async def main():
        c = dialog.Client("PySecure", daemons.address, heartbeat_ms=200, secret_file=secret)
        await c.start()
        try:
            await c.wait_connected(10)
            # Inbound: libdialog connects to us and proves the secret; we prove it in turn.
            sub = c.subscribe("SecCpp.Value")
            m = await sub.get(timeout=15)
            assert m.data == b"from C++"
            # Outbound: a C++ subscriber (dialogctl get) reached through our data port.
            svc = c.publish("PySecure.Value")
            svc.update("secured value")
            out = await run_tool(
                "get", "--count", "1", "--timeout-ms", "15000", "PySecure.Value", address=daemons.address
            )
            assert "secured value" in out
            assert c.stats["auth_failures"] == 0
        finally:
            await c.close()

    run(main())


@pytest.mark.parametrize("which", ["none", "other"])
def test_python_client_without_the_secret_is_refused(secured, which):
    daemons, _, other = secured

    async def main():
        # secret_file="": none, whatever $DIALOG_SECRET_FILE says.
        c = dialog.Client(
            "PyIntruder", daemons.address, heartbeat_ms=200, secret_file=other if which == "other" else ""
        )
        await c.start()
        try:
            with pytest.raises(asyncio.TimeoutError):
                await c.wait_connected(2)
            assert any(what == "auth" for what, _, _ in c.refusals), c.refusals
            reasons = [r for what, _, r in c.refusals if what == "auth"]
            assert "authentication failed" in reasons[0]
            # Told once per attempt, with back-off: not a tight loop.
            assert len(reasons) <= 2
        finally:
            await c.close()
        out = await run_tool("ls", address=daemons.address)
        assert "PyIntruder" not in out

    run(main())


def test_bad_secret_file_is_a_clear_error(tmp_path):
    short = tmp_path / "short"
    short.write_bytes(b"abc")
    with pytest.raises(dialog.ClientError, match="at least 16"):
        dialog.Client("X", "127.0.0.1:1", secret_file=str(short))
    with pytest.raises(dialog.ClientError, match="secret file"):
        dialog.Client("X", "127.0.0.1:1", secret_file=str(tmp_path / "missing"))


def test_python_client_proves_its_name_with_its_process_key(tmp_path, monkeypatch):
    """docs/security.md, "Identities": a Control Server with an identity secret admits a partition's
    process name only from a connection that proved it; the Python client proves it with the key of
    $DIALOG_PROCESS_KEY_FILE. Without a key it is refused ("must prove its name"), with another
    process's key under its name refused at the handshake ("wrong proof")."""
    from conftest import wait_port

    from dialog import wire

    secret = tmp_path / "secret"
    secret.write_bytes(b"the partition's secret, 32 bytes\n")
    identity = tmp_path / "identity"
    identity.write_bytes(b"the identity secret of this partition\n")
    monkeypatch.setenv("DIALOG_SECRET_FILE", str(secret))
    monkeypatch.delenv("DIALOG_PROCESS_KEY_FILE", raising=False)

    def key_file(file_name: str, name: str, key_of: str) -> str:
        path = tmp_path / file_name
        path.write_bytes(wire.process_key_file_content(name, wire.process_key(identity.read_bytes().strip(), key_of)))
        return str(path)

    d = Daemons(tmp_path)
    try:
        d.start("dialog-controlserver", "--port", str(d.cs_port), "--heartbeat-ms", "200", "--identity-file",
                str(identity), "--proven-names", "PyProven,Other")
        wait_port(d.cs_port)

        async def attempt(**kw) -> dialog.Client:
            c = dialog.Client("PyProven", d.address, heartbeat_ms=200, **kw)
            await c.start()
            try:
                await c.wait_connected(3)
            except dialog.ConnectError:
                pass
            c.was_connected = c.state == "connected"
            await c.close()
            return c

        async def main():
            ok = await attempt(process_key_file=key_file("own.key", "PyProven", "PyProven"))
            assert ok.was_connected and not ok.refusals, (ok.last_error, ok.refusals)
            none = await attempt()
            assert any(r[0] == "connect" and "PyProven is a process of the partition and must prove its name" in r[2]
                       for r in none.refusals), none.refusals
            forged = await attempt(process_key_file=key_file("forged.key", "PyProven", "Other"))
            assert any(r[0] == "auth" and "wrong proof of the name PyProven" in r[2] for r in forged.refusals), \
                forged.refusals

        run(main(), 60)
    finally:
        d.close()
