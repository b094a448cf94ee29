"""Asks the server for tasks when slots are free (long poll)."""

from __future__ import annotations

import json
import threading
from typing import Any, Callable, List, Optional

from .errors import WeftError
from .state import Outage, WorkerState, backoff
from .transport import Transport
from .wire import MAX_TASKS_ASKED, LeasedTask, parse_task


class Poller:
    """One thread that long-polls ``/v1/tasks/poll`` for the worker's free slots.

    It polls only while no report is waiting or on its way: a report asks for the next tasks itself
    (``next``), so a busy worker gets new work in the same round trip and a poll would ask twice.
    """

    def __init__(
        self,
        state: WorkerState,
        transport: Transport,
        outage: Outage,
        worker: str,
        types: List[str],
        wait_s: float,
        request_timeout: float,
        on_terms: Callable[[Any], None],
    ) -> None:
        self._state = state
        self._transport = transport
        self._outage = outage
        self._worker = worker
        self._types = types
        self._wait_s = wait_s
        self._timeout = request_timeout
        self._on_terms = on_terms
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="weft-poll", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Stops polling; a poll waiting on the server is ended at once."""
        self._stop.set()
        self._transport.abort()

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)

    def _loop(self) -> None:
        state = self._state
        delay: Optional[float] = None
        while True:
            with state.cond:
                state.cond.wait_for(
                    lambda: state.stopping
                    or (state.free() > 0 and state.reporting == 0 and not state.pending)
                )
                if state.stopping:
                    return
                want = min(state.free(), MAX_TASKS_ASKED)
                state.poll_reserved = want
                state.polling = True
            tasks: List[LeasedTask] = []
            try:
                tasks = self._poll(want)
                delay = None
            except WeftError as e:
                if not self._stop.is_set():
                    delay = backoff(delay)
                    self._outage.failed("polling for tasks", e, delay)
            finally:
                with state.cond:
                    state.poll_reserved = 0
                    state.polling = False
                    state.admit(tasks)
                    state.cond.notify_all()
            if delay is not None:
                self._stop.wait(delay)

    def _poll(self, want: int) -> List[LeasedTask]:
        body = {
            "worker": self._worker,
            "task_types": self._types,
            "max": want,
            "wait_ms": int(self._wait_s * 1000),
        }
        answer = self._transport.call(
            "POST", "/v1/tasks/poll", json.dumps(body).encode(), timeout=self._wait_s + self._timeout
        )
        self._outage.ok()
        self._on_terms(answer)
        return read_tasks(answer, self._state)


def read_tasks(answer: Any, state: WorkerState) -> List[LeasedTask]:
    """The leased tasks of a poll or report answer. A task that cannot be read is logged and left to its
    lease's expiry (it cannot be reported without the fields it lacks)."""
    raw = answer.get("tasks") if isinstance(answer, dict) else None
    if not isinstance(raw, list):
        state.log.error("the server's answer has no task list: %.200r", answer)
        return []
    out: List[LeasedTask] = []
    for item in raw:
        try:
            out.append(parse_task(item))
        except ValueError as e:
            state.log.error("%s; that task will be retried when its lease expires", e)
    return out
