"""A synchronous facade for scripts: one background thread runs a Client's event loop.

    import dialog.sync
    print(dialog.sync.get("RunParams.RunInfo").value)
    dialog.sync.send_command("RunCtrl.Master.Command", "configure")

The process connects on first use (name "py-<pid>" unless connect() was called with another), to
$DIALOG_CONTROL_SERVER or 127.0.0.1:3425, and disconnects at exit.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import threading
from typing import Any, Dict, List, Optional, Union

from .client import Client
from .is_ import Dictionary, Entry

_lock = threading.Lock()
_session: Optional["Session"] = None


class Session:
    """A Client and a Dictionary living in their own thread; every method blocks until done."""

    def __init__(self, name: str, control_server: Union[str, List[str], None] = None, timeout: float = 10.0) -> None:
        self.timeout = timeout
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="dialog", daemon=True)
        self._thread.start()
        self.client = Client(name, control_server)
        self.dictionary = Dictionary(self.client)
        try:
            self.call(self._start())
        except BaseException:
            self.close()
            raise

    async def _start(self) -> None:
        await self.client.start()
        await self.client.wait_connected(self.timeout)

    def call(self, coro: Any, timeout: Optional[float] = None) -> Any:
        """Runs @p coro in the client's loop and returns its result."""
        fut = asyncio.run_coroutine_threadsafe(coro, self._loop)
        return fut.result(timeout if timeout is not None else self.timeout + 5)

    def close(self) -> None:
        if self._loop.is_running():
            try:
                asyncio.run_coroutine_threadsafe(self.client.close(), self._loop).result(5)
            except Exception:
                pass
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(5)

    def get(self, name: str, as_type: str = "") -> Entry:
        return self.call(self.dictionary.get(name, as_type))

    def put(self, name: str, type_name: str, value: Dict[str, Any]) -> None:
        self.call(self.dictionary.put(name, type_name, value))

    def remove(self, name: str) -> None:
        self.call(self.dictionary.remove(name))

    def list(self, server: str, regex: str = "", type: str = "", with_values: bool = False) -> List[Entry]:
        return self.call(self.dictionary.list(server, regex, type, with_values=with_values))

    def types(self, server: str) -> List[str]:
        return self.call(self.dictionary.list_types(server))

    def send_command(self, name: str, data: Union[bytes, str] = b"") -> bool:
        async def send() -> bool:
            return self.client.send_command(name, data)

        return self.call(send())

    def request(self, service: str, data: Union[bytes, str] = b"", timeout: float = 5.0) -> bytes:
        return self.call(self.client.request(service, data, timeout), timeout + 5)

    def receive(self, service: str, timeout: float = 10.0) -> bytes:
        """The current value of @p service (its provider sends it on subscription)."""

        async def once() -> bytes:
            s = self.client.subscribe(service)
            try:
                return (await s.get(timeout)).data
            finally:
                s.close()

        return self.call(once(), timeout + 5)


def connect(name: Optional[str] = None, control_server: Union[str, List[str], None] = None) -> Session:
    """The module's session, created (and connected) on first use."""
    global _session
    with _lock:
        if _session is None:
            _session = Session(name or "py-%d" % os.getpid(), control_server)
            atexit.register(disconnect)
        return _session


def disconnect() -> None:
    """Closes the module's session (a later call connects again)."""
    global _session
    with _lock:
        s, _session = _session, None
    if s is not None:
        s.close()


def get(name: str, as_type: str = "") -> Entry:
    """The IS object @p name ("Server.Object")."""
    return connect().get(name, as_type)


def put(name: str, type_name: str, value: Dict[str, Any]) -> None:
    """Creates or updates the IS object @p name."""
    connect().put(name, type_name, value)


def remove(name: str) -> None:
    """Removes the IS object @p name."""
    connect().remove(name)


def list(server: str, regex: str = "", type: str = "", with_values: bool = False) -> List[Entry]:  # noqa: A001
    """The objects of IS server @p server matching @p regex and @p type."""
    return connect().list(server, regex, type, with_values)


def types(server: str) -> List[str]:
    """The type names IS server @p server knows."""
    return connect().types(server)


def send_command(name: str, data: Union[bytes, str] = b"") -> bool:
    """Sends the command @p name to its registrants."""
    return connect().send_command(name, data)


def request(service: str, data: Union[bytes, str] = b"", timeout: float = 5.0) -> bytes:
    """Sends a request to the provider of @p service and returns the reply's data."""
    return connect().request(service, data, timeout)


def receive(service: str, timeout: float = 10.0) -> bytes:
    """The current value of the service @p service."""
    return connect().receive(service, timeout)
