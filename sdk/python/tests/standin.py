"""A stand-in Weft server for tests that need to shape its answers: it leases the tasks it is given."""

from __future__ import annotations

import threading
import uuid
from typing import Any, Callable, Dict, List, Optional

from .proxy import Answer, Exchange, Proxy


def leased(task_type: str = "t", **fields: Any) -> Dict[str, Any]:
    """A leased task as the server sends it."""
    return {
        "task_id": str(uuid.uuid4()),
        "run_id": str(uuid.uuid4()),
        "node_id": "n",
        "iteration": "",
        "attempt": 1,
        "task_type": task_type,
        "definition": "d",
        "input": None,
        "lease_token": str(uuid.uuid4()),
        "lease_expires_at": "2030-01-01T00:00:00.000Z",
        "deadline_at": None,
        **fields,
    }


class StandIn:
    """Hands out ``tasks`` to the first poll, accepts every report unless ``on_report`` answers first, and
    answers heartbeats with every lease held unless ``lost`` names it."""

    def __init__(
        self,
        tasks: List[Dict[str, Any]],
        heartbeat_ms: int = 30_000,
        on_report: Optional[Callable[[Exchange], Optional[Answer]]] = None,
    ) -> None:
        self.tasks = list(tasks)
        self.heartbeat_ms = heartbeat_ms
        self.on_report = on_report
        self.lost: set = set()
        self.lock = threading.Lock()
        self.proxy = Proxy(answer=self._answer)

    def __enter__(self) -> "StandIn":
        self.proxy.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.proxy.__exit__(*exc)

    @property
    def url(self) -> str:
        return self.proxy.url

    def sent(self, path: str) -> List[Exchange]:
        return [x for x in self.proxy.exchanges if x.path == path]

    def _answer(self, x: Exchange) -> Optional[Answer]:
        if x.path == "/v1/tasks/dispatch":
            return 200, {"dispatcher": "table"}
        if x.path == "/v1/tasks/poll":
            with self.lock:
                given, self.tasks = self.tasks[: x.request["max"]], self.tasks[x.request["max"] :]
            return 200, {"tasks": given, "lease_ms": 3 * self.heartbeat_ms, "heartbeat_ms": self.heartbeat_ms}
        if x.path == "/v1/tasks/heartbeat":
            ids = [t["task_id"] for t in x.request["tasks"]]
            held = [i for i in ids if i not in self.lost]
            return 200, {
                "held": held,
                "lost": [i for i in ids if i in self.lost],
                "lease_ms": 3 * self.heartbeat_ms,
            }
        if x.path == "/v1/tasks/report":
            if self.on_report is not None:
                given = self.on_report(x)
                if given is not None:
                    return given
            results = [{"task_id": r["task_id"], "accepted": True} for r in x.request["reports"]]
            return 200, {"results": results, "tasks": []}
        return None
