"""What a handler gets besides its input."""

from __future__ import annotations

import threading
from typing import Any, Optional

from .errors import IdempotencyKeyMissing
from .task_log import TaskLog
from .wire import LeasedTask


class TaskContext:
    """The task a handler is running: which run, node and attempt, and whether it should stop.

    ``cancelled`` is set when the worker loses the task's lease (the run was cancelled or the lease
    expired: another attempt may run or has run) or the worker stops hard. A long handler checks it
    (``ctx.cancelled.is_set()``) or waits on it (``ctx.cancelled.wait(5)`` instead of ``time.sleep(5)``)
    and gives up early; its report would be refused anyway.
    """

    def __init__(self, task: LeasedTask) -> None:
        self._task = task
        self.cancelled = threading.Event()
        self.cancel_reason: Optional[str] = None
        self._log: Optional[TaskLog] = None

    @property
    def log(self) -> "TaskLog":
        """Log lines for this attempt, kept with the run: ``ctx.log.info("charged", amount=5)``.

        ``debug``, ``info``, ``warn`` and ``error`` take a message and fields (JSON values). Lines are sent
        in batches and before the report; an attempt that lost its lease has its lines refused.
        """
        if self._log is None:
            raise RuntimeError("ctx.log is given to a handler by the worker that runs it")
        return self._log

    @property
    def run_id(self) -> str:
        return self._task.run_id

    @property
    def task_id(self) -> str:
        """The id of this attempt's task row."""
        return self._task.task_id

    @property
    def node_id(self) -> str:
        return self._task.node_id

    @property
    def iteration(self) -> str:
        """Which loop pass or map item this node instance belongs to ('' outside loops and maps)."""
        return self._task.iteration

    @property
    def attempt(self) -> int:
        """1 for the first try, 2 for the first retry, and so on."""
        return self._task.attempt

    @property
    def task_type(self) -> str:
        return self._task.task_type

    @property
    def definition(self) -> str:
        """The name of the workflow definition the run follows."""
        return self._task.definition

    @property
    def deadline_at(self) -> Optional[str]:
        """When this attempt times out (ISO 8601), or None when the node has no timeout."""
        return self._task.deadline_at

    @property
    def context(self) -> Any:
        """What the server's step-context hook built for this step (None without one)."""
        return self._task.context

    @property
    def traceparent(self) -> Optional[str]:
        """The W3C trace context the server sent with the task (None when the run has none): open the
        handler's span under it with your tracing library to join the run's trace."""
        return self._task.traceparent

    @property
    def idempotency_key(self) -> str:
        """A stable key for side effects: the same for every attempt of this node instance, different for
        every other node, loop pass and map item. Hand it to a payment provider so that a retried charge is
        not charged twice.

        Raises :class:`IdempotencyKeyMissing` when the server did not send one (a server older than the
        key): the SDK never makes one up.
        """
        if self._task.idempotency_key is None:
            raise IdempotencyKeyMissing(self._task.task_id)
        return self._task.idempotency_key

    def _cancel(self, reason: str) -> None:
        if not self.cancelled.is_set():
            self.cancel_reason = reason
            self.cancelled.set()

    def __repr__(self) -> str:
        t = self._task
        return (
            f"TaskContext(run_id={t.run_id!r}, node_id={t.node_id!r}, attempt={t.attempt}, "
            f"task_type={t.task_type!r})"
        )
