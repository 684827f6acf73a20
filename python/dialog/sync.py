"""A synchronous facade for scripts: one background thread runs a Client's event loop.

    import dialog.sync
    print(dialog.sync.get("RunParams.RunInfo").value)
    dialog.sync.send_command("RunCtrl.Master.Command", "configure")

The process connects on first use (name "py-<pid>"), to $DIALOG_CONTROL_SERVER or 127.0.0.1:3425,
with $DIALOG_SECRET_FILE, $DIALOG_TLS_* and $DIALOG_ADVERTISE when set, and disconnects at exit.
connect() chooses all of these explicitly (before the first use, or after disconnect()):

    dialog.sync.connect("shift-script", ["cs1:3425", "cs2:3425"], secret_file="/etc/dialog/secret")

A Control Server that cannot be reached or refuses raises dialog.client.ConnectError saying why.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import threading
from typing import Any, Dict, List, Optional, Union

from .client import Client, ClientError
from .is_ import Dictionary, Entry, History

_lock = threading.Lock()
_session: Optional["Session"] = None


class Session:
    """A Client and a Dictionary living in their own thread; every method blocks until done."""

    def __init__(self, name: str, control_server: Union[str, List[str], None] = None, timeout: float = 10.0,
                 **client_options: Any) -> None:
        self.timeout = timeout
        # Made before the thread, so that a bad option is a ClientError with nothing to clean up.
        self.client = Client(name, control_server, **client_options)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="dialog", daemon=True)
        self._thread.start()
        self.dictionary = Dictionary(self.client)
        try:
            self.call(self._start())
        except BaseException:
            self.close()
            raise

    async def _start(self) -> None:
        await self.client.start()
        await self.client.wait_connected(self.timeout)

    @property
    def options(self) -> Dict[str, Any]:
        """What connect() compares: the name and the Control Server list."""
        return {"name": self.client.name, "servers": self.client.servers}

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

    def insert(self, name: str, type_name: str, value: Dict[str, Any]) -> None:
        self.call(self.dictionary.insert(name, type_name, value))

    def update(self, name: str, type_name: str, value: Dict[str, Any]) -> None:
        self.call(self.dictionary.update(name, type_name, value))

    def remove(self, name: str) -> None:
        self.call(self.dictionary.remove(name))

    def history(self, name: str, since: Any, until: Any = None, max_points: int = 0, attribute: str = "") -> History:
        return self.call(self.dictionary.history(name, since, until, max_points, attribute))

    def report(self, text: str, severity: str = "info", category: str = "default",
               values: Optional[Dict[str, Any]] = None) -> None:
        self.call(self.client.report(text, severity, category, values, self.timeout))

    def list(self, server: str, regex: str = "", type: str = "", with_values: bool = False,
             selector: str = "any") -> List[Entry]:
        return self.call(self.dictionary.list(server, regex, type, selector, with_values=with_values))

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


def connect(name: Optional[str] = None, control_server: Union[str, List[str], None] = None, *,
            timeout: float = 10.0, **client_options: Any) -> Session:
    """The module's session, created (and connected) on first use.

    @p name (default "py-<pid>"), @p control_server ("host:port", a comma-separated list or a list;
    default $DIALOG_CONTROL_SERVER, else 127.0.0.1:3425) and @p client_options — ``secret_file``,
    ``tls_cert``, ``tls_key``, ``tls_ca``, ``advertise`` and the other keyword arguments of
    dialog.Client — apply when the session is created. Asking for another name or Control Server
    while a session exists raises ClientError (disconnect() first). ConnectError (a TimeoutError)
    when the Control Server is not reached within @p timeout seconds, with the reason."""
    global _session
    with _lock:
        if _session is not None:
            wanted = Client(name or _session.client.name, control_server) if (name or control_server) else None
            if wanted is not None and (wanted.name != _session.client.name or wanted.servers != _session.client.servers):
                raise ClientError("already connected as %s to %s: disconnect() first"
                                  % (_session.client.name, ", ".join("%s:%d" % ep for ep in _session.client.servers)))
            if client_options:
                raise ClientError("already connected: options apply to a new session (disconnect() first)")
            return _session
        _session = Session(name or "py-%d" % os.getpid(), control_server, timeout, **client_options)
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
    """Creates or updates the IS object @p name; attributes left out keep their stored value (see
    dialog.is_.Dictionary.put)."""
    connect().put(name, type_name, value)


def insert(name: str, type_name: str, value: Dict[str, Any]) -> None:
    """Creates the IS object @p name; ISError(ALREADY_EXISTS) when it exists."""
    connect().insert(name, type_name, value)


def update(name: str, type_name: str, value: Dict[str, Any]) -> None:
    """Updates the IS object @p name as put() does; ISError(NOT_FOUND) when it does not exist."""
    connect().update(name, type_name, value)


def history(name: str, since: Any, until: Any = None, max_points: int = 0, attribute: str = "") -> History:
    """The values the IS object @p name had since @p since (datetime or µs), per numeric attribute."""
    return connect().history(name, since, until, max_points, attribute)


def report(text: str, severity: str = "info", category: str = "default",
           values: Optional[Dict[str, Any]] = None) -> None:
    """Stores a message in the partition's message log; returns once the logger stored it."""
    connect().report(text, severity, category, values)


def remove(name: str) -> None:
    """Removes the IS object @p name."""
    connect().remove(name)


def list(server: str, regex: str = "", type: str = "", with_values: bool = False,  # noqa: A001
         selector: str = "any") -> List[Entry]:
    """The objects of IS server @p server matching @p regex and @p type ("subtypes": or derived)."""
    return connect().list(server, regex, type, with_values, selector)


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
