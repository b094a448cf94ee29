"""What the worker's threads share, behind one condition variable."""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Set

from .context import TaskContext
from .wire import LeasedTask, Report


@dataclass
class WorkerStats:
    """Counts since the worker started."""

    completed: int = 0
    failed: int = 0
    refused: int = 0
    in_flight: int = 0


class WorkerState:
    """Slots, leases and reports of one worker. Every field is read and written under ``cond``.

    A slot is taken by a running handler, or reserved for the tasks a poll or a report may bring back, so
    the worker never asks for more tasks than it can start at once. A lease is held from the moment a task
    is leased until the server has answered its report: heartbeats renew it while the handler runs and
    while its report waits to be sent, but not while the report is on its way (renewing the rows the
    server is finishing would only make the two transactions wait on each other).
    """

    def __init__(self, concurrency: int, logger: logging.Logger) -> None:
        self.cond = threading.Condition()
        self.concurrency = concurrency
        self.log = logger
        self.running: Dict[str, TaskContext] = {}
        self.held: Dict[str, LeasedTask] = {}
        self.pending: List[Report] = []
        # Tasks whose report is on its way: the server is applying it, so heartbeats leave their rows alone.
        self.sending: Set[str] = set()
        self.poll_reserved = 0
        self.report_reserved = 0
        self.reporting = 0
        self.polling = False
        self.stopping = False
        self.hard = False
        self.closed = False
        self.retry_reports_at = 0.0
        self.stats = WorkerStats()
        self.start_task: Callable[[LeasedTask, TaskContext], None] = lambda task, ctx: None

    def free(self) -> int:
        """Slots neither running a handler nor reserved for tasks on their way."""
        return self.concurrency - len(self.running) - self.poll_reserved - self.report_reserved

    def idle(self) -> bool:
        """Stopping, and nothing left to do: no poll, no handler, no report waiting or on its way."""
        return (
            self.stopping
            and not self.polling
            and not self.running
            and not self.pending
            and self.reporting == 0
        )

    def admit(self, tasks: List[LeasedTask]) -> None:
        """Starts handlers for freshly leased tasks. Called under ``cond``."""
        for task in tasks:
            ctx = TaskContext(task)
            self.running[task.task_id] = ctx
            self.held[task.task_id] = task
            self.start_task(task, ctx)
        self.stats.in_flight = len(self.running)

    def renewable(self) -> List[LeasedTask]:
        """The leases heartbeats renew now. Called under ``cond``."""
        return [task for task_id, task in self.held.items() if task_id not in self.sending]

    def settle(self, report: Report) -> None:
        """A handler has finished: its report waits to be sent (its lease is still held and renewed)."""
        with self.cond:
            self.running.pop(report.task.task_id, None)
            self.stats.in_flight = len(self.running)
            if self.closed:
                self.held.pop(report.task.task_id, None)
                self.log.warning(
                    "task %s finished after the worker stopped: its report is not sent, and the task will be "
                    "retried when its lease expires",
                    report.task.task_id,
                )
            else:
                self.pending.append(report)
            self.cond.notify_all()


class Outage:
    """Logs a server that cannot be reached once per outage, not once per failed request."""

    def __init__(self, logger: logging.Logger, url: str) -> None:
        self._log = logger
        self._url = url
        self._lock = threading.Lock()
        self._failures = 0
        self._since = 0.0

    def failed(self, what: str, error: Exception, retry_in: float) -> None:
        with self._lock:
            self._failures += 1
            first = self._failures == 1
            if first:
                self._since = time.monotonic()
        level = logging.WARNING if first else logging.DEBUG
        self._log.log(
            level,
            "%s failed: %s; retrying in %.1f s (logged once until %s answers again)",
            what,
            error,
            retry_in,
            self._url,
        )

    def ok(self) -> None:
        with self._lock:
            failures, self._failures = self._failures, 0
            since = self._since
        if failures:
            self._log.info(
                "%s answers again after %d failed request(s) over %.1f s",
                self._url,
                failures,
                time.monotonic() - since,
            )


def backoff(previous: Optional[float]) -> float:
    """The next wait after a failed request: 0.2 s, doubling up to 5 s."""
    return min(max((previous or 0.0) * 2, 0.2), 5.0)
