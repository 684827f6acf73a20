"""The Python ConfigClient against the real dialog-configdb: commits, versions, tags, a stale base
refused, an unknown tag, the run registry."""

from __future__ import annotations

import asyncio

import pytest
from conftest import run, run_tool

import dialog


def test_config_client(daemons):
    daemons.start("dialog-configdb", "--data-dir", str(daemons.tmp / "configdb"), "--control-server", daemons.address)

    async def main():
        async with dialog.Client("PyConfig", daemons.address, heartbeat_ms=200) as c:
            config = dialog.ConfigClient(c, timeout=15.0)
            made = await config.commit(0, {"slaves/FE1": '{"registers": 8}'}, "first")
            assert made["version"] == 1
            await config.tag("py-tag")
            await config.commit(1, {"slaves/FE1": '{"registers": 9}', "readout/RO1": '{"threads": 2}'}, "second")
            doc, version = await config.get("slaves/FE1", "py-tag")
            assert (doc.content, version, doc.changed) == ('{"registers": 8}', 1, 1)
            docs, version = await config.list("", "head")
            assert [d.path for d in docs] == ["readout/RO1", "slaves/FE1"] and version == 2
            # A commit on a stale base is refused, naming the change since.
            with pytest.raises(dialog.ConfigError) as refused:
                await config.commit(1, {"slaves/FE1": '{"registers": 10}'})
            assert refused.value.code == "AlreadyExists"
            assert "configuration changed since version 1" in refused.value.message
            with pytest.raises(dialog.ConfigError) as unknown:
                await config.get("slaves/FE1", "no-such-tag")
            assert unknown.value.code == "NotFound" and "unknown tag 'no-such-tag'" in unknown.value.message
            with pytest.raises(dialog.ConfigError) as invalid:
                await config.commit(2, {"slaves/FE1": '{"registers": 0}'})
            assert invalid.value.code == "InvalidObject"
            changes = await config.diff("py-tag")
            assert {ch["path"] for ch in changes} == {"readout/RO1", "slaves/FE1"}
            assert [c["version"] for c in await config.log()] == [2, 1]
            started = await config.call(
                {"op": "run-start", "run": {"partition": "py", "run_type": "Physics", "config_version": 2}}
            )
            assert started["number"] == 1
            assert [r["number"] for r in await config.runs()] == [1]
            out = await run_tool("runs", "show", "1", address=daemons.address)
            assert "run 1 of py" in out

    run(main())
