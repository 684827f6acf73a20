"""The configuration database and run registry (dialog-configdb), as libdialog's ConfigClient reads
and changes them: JSON requests on the service ``CONFIG.<database>`` (docs/configdb.md).

A reference ("ref") names a version: its number, a tag, or "head" (the newest). A refused request
raises ConfigError with the code libdialog's dialog::Status has for it (``NotFound``,
``InvalidObject``, ``AlreadyExists`` for a commit on a stale base, ``StorageError``, …).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from .client import Client, RequestError


class ConfigError(Exception):
    """A request dialog-configdb refused (``code``: a dialog::Status code name) or could not answer
    (``code``: "Timeout", "NotAccepted", "ProviderLost", "Failed")."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__("%s: %s" % (code, message))
        self.code = code
        self.message = message


@dataclass
class Document:
    """A document as stored in one version."""

    path: str
    content: str
    changed: int  # the version that last changed it


def default_database() -> str:
    """$DIALOG_CONFIGDB, else "configdb"."""
    return os.environ.get("DIALOG_CONFIGDB") or "configdb"


class ConfigClient:
    """Requests to the dialog-configdb serving CONFIG.<database>, through @p client."""

    def __init__(self, client: Client, database: Optional[str] = None, timeout: float = 10.0) -> None:
        self.client = client
        self.database = database or default_database()
        self.timeout = timeout

    @property
    def service(self) -> str:
        return "CONFIG." + self.database

    async def call(self, request: Dict[str, Any]) -> Dict[str, Any]:
        """One request (a JSON object with "op"); its answer, or ConfigError."""
        try:
            data = await self.client.request(self.service, json.dumps(request), self.timeout)
        except RequestError as e:
            codes = {
                "timeout": "Timeout",
                "not-accepted": "NotAccepted",
                "provider-lost": "ProviderLost",
                "permission-denied": "PermissionDenied",
            }
            raise ConfigError(codes.get(e.status, "Failed"), "%s: %s" % (self.service, e)) from None
        answer = json.loads(data)
        if "error" in answer:
            raise ConfigError(answer.get("code", "ServerError"), answer["error"])
        return answer

    async def resolve(self, ref: str = "head") -> int:
        return (await self.call({"op": "resolve", "ref": ref}))["version"]

    async def get(self, path: str, ref: str = "head") -> Tuple[Document, int]:
        """Document @p path as of @p ref, and the version @p ref is."""
        a = await self.call({"op": "get", "path": path, "ref": ref})
        return Document(a["path"], a["content"], a["changed"]), a["version"]

    async def list(self, prefix: str = "", ref: str = "head", content: bool = False) -> Tuple[List[Document], int]:
        """The documents under @p prefix as of @p ref (with their content if asked), and the version."""
        a = await self.call({"op": "ls", "prefix": prefix, "ref": ref, "content": content})
        return [Document(d["path"], d.get("content", ""), d["changed"]) for d in a["documents"]], a["version"]

    async def commit(self, base: int, changes: Dict[str, Optional[str]], message: str = "") -> Dict[str, Any]:
        """Commits @p changes (path → new content, None to remove) on version @p base, all or none."""
        items = [{"path": p, "remove": True} if c is None else {"path": p, "content": c} for p, c in changes.items()]
        return await self.call({"op": "commit", "base": base, "message": message, "changes": items})

    async def log(self, path: str = "", limit: int = 100) -> List[Dict[str, Any]]:
        return (await self.call({"op": "log", "path": path, "limit": limit}))["commits"]

    async def diff(self, from_ref: str, to_ref: str = "head") -> List[Dict[str, Any]]:
        """The documents that differ: path, before and after (None where absent)."""
        return (await self.call({"op": "diff", "from": from_ref, "to": to_ref}))["changes"]

    async def tag(self, name: str, ref: str = "head") -> Dict[str, Any]:
        return await self.call({"op": "tag", "name": name, "ref": ref})

    async def tags(self) -> List[Dict[str, Any]]:
        return (await self.call({"op": "tags"}))["tags"]

    async def runs(self, since_ms: int = 0, run_type: str = "", partition: str = "", limit: int = 50) -> List[Dict[str, Any]]:
        """The newest runs first, as `dialogctl runs ls --json` prints them."""
        return (
            await self.call({"op": "runs", "since": since_ms, "run_type": run_type, "partition": partition, "limit": limit})
        )["runs"]

    async def run(self, number: int) -> Dict[str, Any]:
        return await self.call({"op": "run", "number": number})
