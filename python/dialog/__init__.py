"""DIALOG for Python: services, commands, requests and the Information Service, without Qt.

A pure-Python (asyncio) implementation of the DIALOG wire protocol (docs/protocol.md) that talks to
the same Control Server, IS servers and processes as libdialog. See python/README.md.
"""

from .client import (
    Client,
    ClientError,
    Command,
    ConnectError,
    Message,
    Request,
    RequestError,
    Service,
    Subscription,
)
from .alarms import AlarmClient, AlarmError
from .config import ConfigClient, ConfigError
from .wire import ProtocolError

__all__ = [
    "AlarmClient",
    "AlarmError",
    "Client",
    "ClientError",
    "ConfigClient",
    "ConfigError",
    "Command",
    "ConnectError",
    "Message",
    "ProtocolError",
    "Request",
    "RequestError",
    "Service",
    "Subscription",
]
__version__ = "0.1.0"
