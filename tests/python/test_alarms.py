"""The Python AlarmClient against the real dialog-alarmserver: the table, an acknowledgement with
its comment, refusals (an unknown alarm, a comment the alarm requires), a shelve, the history, and
the table subscribed to (a late subscriber has the whole table, then each change)."""

from __future__ import annotations

import asyncio
import json

import pytest
from conftest import run

import dialog

RULES = {
    "alarms": [
        {"path": "DAQ/Processes/Nobody", "severity": "major", "ack_comment_required": True,
         "guidance": "Start it", "condition": {"process": "Nobody", "when": "lost"}},
        {"path": "DAQ/Processes/Ghost", "severity": "minor", "condition": {"process": "Ghost", "when": "lost"}},
    ]
}


def test_alarm_client(daemons):
    rules = daemons.tmp / "rules.json"
    rules.write_text(json.dumps(RULES))
    daemons.start("dialog-alarmserver", "--rules", str(rules), "--data-dir", str(daemons.tmp / "alarms"),
                  "--control-server", daemons.address)

    async def main():
        async with dialog.Client("PyAlarms", daemons.address, heartbeat_ms=200) as c:
            alarms = dialog.AlarmClient(c, timeout=15.0)
            # Nobody and Ghost never run: both alarms are raised once the directory arrives.
            for _ in range(200):
                try:
                    table = await alarms.table()
                    if table["counts"]["active"] == 2:
                        break
                except dialog.AlarmError:
                    pass
                await asyncio.sleep(0.05)
            assert table["counts"]["active"] == 2 and table["worst"] == "major"
            # Subscribed after the raises: the table holds both alarms (the current one may be the
            # message of a moment before; the next, at most 100 ms later, is up to date).
            live = alarms.subscribe()
            for _ in range(50):
                paths = {a["path"] for a in (await live.get(15.0))["alarms"]}
                if len(paths) == 2:
                    break
            assert paths == {"DAQ/Processes/Nobody", "DAQ/Processes/Ghost"}
            with pytest.raises(dialog.AlarmError) as refused:
                await alarms.ack("DAQ/Processes/Nobody")
            assert "needs a comment" in refused.value.message
            with pytest.raises(dialog.AlarmError) as unknown:
                await alarms.ack("No/such")
            assert "unknown alarm 'No/such'" in unknown.value.message
            acked = await alarms.ack("DAQ/Processes/Nobody", "known: not in this partition")
            assert acked["state"] == "acknowledged" and acked["ack_comment"] == "known: not in this partition"
            # The acknowledgement reaches the subscriber as a new table.
            for _ in range(50):
                t = await live.get(15.0)
                states = {a["path"]: a["state"] for a in t["alarms"]}
                if states.get("DAQ/Processes/Nobody") == "acknowledged":
                    break
            assert states["DAQ/Processes/Nobody"] == "acknowledged"
            live.close()
            shelved = await alarms.shelve("DAQ/Processes/Ghost", "for the night", for_s=3600)
            assert shelved["shelved"] and shelved["shelve_reason"] == "for the night"
            tree = await alarms.tree("DAQ")
            assert tree["worst"] == "major"  # Nobody: acknowledged but still raised; Ghost shelved
            rows = await alarms.history("DAQ/Processes/Nobody")
            assert [r["event"] for r in rows] == ["acknowledged", "raised"]

    run(main())
