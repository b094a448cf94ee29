"""``ctx.log``: lines a handler writes to its attempt, kept with the run (``weft runs logs``)."""

from __future__ import annotations

import json
import logging
import threading
import time
from datetime import datetime, timezone
from typing import Any, Callable, Dict, List, Optional

from .errors import WeftApiError, WeftError
from .transport import Transport
from .wire import LeasedTask

#: Lines are sent once this many are buffered, or this long after the first, and before the report.
SEND_AT_LINES = 100
SEND_AFTER_S = 1.0
#: Lines one request carries, and the longest message the server takes (a longer one is cut here).
MAX_PER_REQUEST = 500
MAX_MESSAGE_CHARS = 64 * 1024


class TaskLog:
    """The log of one attempt: ``ctx.log.info("charged the card", amount=5)``.

    Lines are buffered and sent in batches from the handler's own thread (a handler that logs nothing
    sends nothing), fenced by the lease like a report: once the server answers ``lease_lost`` the attempt
    no longer holds its lease, and its lines are dropped.
    """

    def __init__(
        self, task: LeasedTask, transport: Callable[[], Transport], log: logging.Logger, timeout: float
    ) -> None:
        self._task = task
        self._make_transport = transport
        self._transport: Optional[Transport] = None
        self._log = log
        self._timeout = timeout
        self._lock = threading.Lock()
        self._buffer: List[Dict[str, Any]] = []
        self._first_at = 0.0
        self._lost = False
        self._closed = False

    def debug(self, message: str, **fields: Any) -> None:
        self._add("debug", message, fields)

    def info(self, message: str, **fields: Any) -> None:
        self._add("info", message, fields)

    def warn(self, message: str, **fields: Any) -> None:
        self._add("warn", message, fields)

    warning = warn

    def error(self, message: str, **fields: Any) -> None:
        self._add("error", message, fields)

    def _add(self, level: str, message: str, fields: Dict[str, Any]) -> None:
        text = str(message)
        line: Dict[str, Any] = {"level": level, "at": datetime.now(timezone.utc).isoformat()}
        if fields:
            try:
                line["fields"] = json.loads(json.dumps(fields))
            except (TypeError, ValueError):
                text += " [fields dropped: not JSON]"
        line["message"] = text[:MAX_MESSAGE_CHARS]
        with self._lock:
            if self._lost or self._closed:
                return
            if not self._buffer:
                self._first_at = time.monotonic()
            self._buffer.append(line)
            due = len(self._buffer) >= SEND_AT_LINES or time.monotonic() - self._first_at >= SEND_AFTER_S
        if due:
            self._send()

    def _send(self) -> None:
        with self._lock:
            lines, self._buffer = self._buffer, []
        t = self._task
        fence = {"run_id": t.run_id, "attempt": t.attempt, "lease_token": t.lease_token}
        for start in range(0, len(lines), MAX_PER_REQUEST):
            body = json.dumps({**fence, "lines": lines[start : start + MAX_PER_REQUEST]}).encode()
            try:
                if self._transport is None:
                    self._transport = self._make_transport()
                self._transport.call("POST", f"/v1/tasks/{t.task_id}/logs", body, self._timeout)
            except WeftApiError as e:
                if e.code == "lease_lost":
                    with self._lock:
                        self._lost = True
                        self._buffer = []
                    return
                self._log.warning("%d log line(s) of task %s were refused: %s", len(lines), t.task_id, e)
            except WeftError as e:
                self._log.warning("%d log line(s) of task %s were not sent: %s", len(lines), t.task_id, e)

    def close(self) -> None:
        """The handler finished: sends what is left (before the report), then closes the connection."""
        with self._lock:
            self._closed = True
            pending = bool(self._buffer)
        if pending:
            self._send()
        if self._transport is not None:
            self._transport.close()
