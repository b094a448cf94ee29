"""The worker's own options (how many tasks, how long to wait), checked where they enter."""

from __future__ import annotations

import os
import random
import socket
import string
from dataclasses import dataclass
from typing import Any, Callable, List, Mapping, Optional

MAX_TYPES = 100


@dataclass(frozen=True)
class WorkerOptions:
    """Checked options of a :class:`~weft_worker.Worker`; durations are in seconds."""

    name: str
    types: List[str]
    concurrency: int
    poll_wait: float
    reports_in_flight: int
    request_timeout: float
    connect_timeout: float
    stop_timeout: float


def check_options(
    handlers: Mapping[str, Callable[..., Any]],
    name: Optional[str],
    concurrency: int,
    poll_wait: float,
    reports_in_flight: int,
    request_timeout: float,
    connect_timeout: float,
    stop_timeout: float,
) -> WorkerOptions:
    """Raises ``ValueError`` (``TypeError`` for a handler that is not callable) saying what to change."""
    if not isinstance(handlers, Mapping) or not handlers:
        raise ValueError("a worker needs at least one handler: handlers={'task.type': function}")
    if len(handlers) > MAX_TYPES:
        raise ValueError(
            f"a worker handles at most {MAX_TYPES} task types; split the {len(handlers)} into workers"
        )
    for task_type, handler in handlers.items():
        if not isinstance(task_type, str) or not 1 <= len(task_type) <= 128:
            raise ValueError(f"task type {task_type!r} must be text of 1 to 128 characters")
        if not callable(handler):
            raise TypeError(
                f"the handler for {task_type!r} is not callable: give a function (input, ctx) -> output"
            )
    name = name if name is not None else _default_name()
    if not isinstance(name, str) or not 1 <= len(name) <= 200:
        raise ValueError(f"name {name!r} must be text of 1 to 200 characters")
    _whole("concurrency", concurrency, 1, 10_000)
    _whole("reports_in_flight", reports_in_flight, 1, 64)
    _seconds("poll_wait", poll_wait, 0, 60)
    _seconds("request_timeout", request_timeout, 0.001, 3600)
    _seconds("connect_timeout", connect_timeout, 0.001, 86_400)
    _seconds("stop_timeout", stop_timeout, 0, 86_400)
    return WorkerOptions(
        name=name,
        types=list(handlers),
        concurrency=concurrency,
        poll_wait=float(poll_wait),
        reports_in_flight=reports_in_flight,
        request_timeout=float(request_timeout),
        connect_timeout=float(connect_timeout),
        stop_timeout=float(stop_timeout),
    )


def _default_name() -> str:
    """host-pid-random, so that leases and history say which process held a task."""
    suffix = "".join(random.choices(string.ascii_lowercase + string.digits, k=4))
    return f"{socket.gethostname()[:150]}-{os.getpid()}-{suffix}"


def _whole(label: str, value: Any, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{label} must be a whole number from {low} to {high}, not {value!r}")


def _seconds(label: str, value: Any, low: float, high: float) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise ValueError(f"{label} is in seconds and must be from {low:g} to {high:g}, not {value!r}")
