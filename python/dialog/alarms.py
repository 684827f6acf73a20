"""The alarm server of a partition (dialog-alarmserver), as ``dialogctl alarm`` reads and acts on it:
JSON requests on the service ``ALARM.Server`` (docs/alarms.md).

A refusal (an unknown alarm, a comment the alarm requires, nothing to acknowledge, the access list)
raises AlarmError with the alarm server's reason.
"""

from __future__ import annotations

import json
import time
from typing import Any, Callable, Dict, List, Optional

from .client import Client, Message, RequestError, Subscription

SERVICE = "ALARM.Server"
TABLE_SERVICE = "ALARM.Table"


class AlarmError(Exception):
    """A request the alarm server refused (``status`` "failed", with its reason) or that was not
    answered ("timeout", "not-accepted", "provider-lost", "permission-denied")."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class AlarmClient:
    """Requests to the partition's alarm server, through @p client."""

    def __init__(self, client: Client, timeout: float = 10.0) -> None:
        self.client = client
        self.timeout = timeout

    async def call(self, request: Dict[str, Any]) -> Dict[str, Any]:
        """One request (a JSON object with "op"); its answer, or AlarmError."""
        try:
            data = await self.client.request(SERVICE, json.dumps(request), self.timeout)
        except RequestError as e:
            message = str(e)
            if e.status == "failed" and message.startswith("failed: "):
                message = message[len("failed: "):]
            raise AlarmError(e.status, message) from None
        return json.loads(data)

    async def table(self, all_alarms: bool = False) -> Dict[str, Any]:
        """The table: "alarms" (those not normal, or shelved, or disabled; every one with
        @p all_alarms), "counts", "worst", "history"."""
        return await self.call({"op": "ls", "all": all_alarms})

    async def alarms(self, all_alarms: bool = False) -> List[Dict[str, Any]]:
        return (await self.table(all_alarms))["alarms"]

    async def tree(self, path: str = "") -> Dict[str, Any]:
        return await self.call({"op": "tree", "path": path})

    async def history(self, path: str = "", since_ms: int = 0, until_ms: int = 0, limit: int = 100) -> List[Dict[str, Any]]:
        a = await self.call({"op": "history", "path": path, "since_ms": since_ms, "until_ms": until_ms, "limit": limit})
        return a["rows"]

    async def ack(self, path: str, comment: str = "") -> Dict[str, Any]:
        """Acknowledges the alarm @p path; the alarm as it is then."""
        return (await self.call({"op": "ack", "path": path, "comment": comment}))["alarm"]

    async def shelve(self, path: str, reason: str, for_s: Optional[float] = None, until_ms: Optional[int] = None) -> Dict[str, Any]:
        if until_ms is None:
            until_ms = int((time.time() + (for_s or 0)) * 1000)
        return (await self.call({"op": "shelve", "path": path, "reason": reason, "until_ms": until_ms}))["alarm"]

    async def unshelve(self, path: str) -> Dict[str, Any]:
        return (await self.call({"op": "unshelve", "path": path}))["alarm"]

    async def disable(self, path: str, comment: str = "") -> Dict[str, Any]:
        return (await self.call({"op": "disable", "path": path, "comment": comment}))["alarm"]

    async def enable(self, path: str) -> Dict[str, Any]:
        return (await self.call({"op": "enable", "path": path}))["alarm"]

    def subscribe(self, callback: Optional[Callable[[Dict[str, Any]], Any]] = None) -> "TableSubscription":
        """The table as the alarm server publishes it (ALARM.Table): the whole table in every message
        ("alarms", "counts", "worst", "history", "changed": the paths changed since the previous
        one), the current one first, so a late subscriber has everything. Iterate it
        (``async for table in alarms.subscribe()``) or give @p callback, which gets each table."""
        return TableSubscription(self.client, callback)


class TableSubscription:
    """The tables of ALARM.Table, decoded: iterate it, or await get(); close() ends it."""

    def __init__(self, client: Client, callback: Optional[Callable[[Dict[str, Any]], Any]]) -> None:
        def decoded(m: Message) -> Any:
            return callback(json.loads(m.data))

        self._sub: Subscription = client.subscribe(TABLE_SERVICE, decoded if callback is not None else None)

    @property
    def state(self) -> str:
        return self._sub.state

    def __aiter__(self) -> "TableSubscription":
        return self

    async def __anext__(self) -> Dict[str, Any]:
        m = await self._sub.__anext__()
        return json.loads(m.data)

    async def get(self, timeout: Optional[float] = None) -> Dict[str, Any]:
        """The next table (asyncio.TimeoutError after @p timeout seconds)."""
        return json.loads((await self._sub.get(timeout)).data)

    def close(self) -> None:
        self._sub.close()
