"""Renews every lease the worker holds, at the interval the server asks for."""

from __future__ import annotations

import json
import threading
from typing import Any, List

from .errors import WeftError
from .state import WorkerState
from .transport import Transport
from .wire import MAX_ITEMS_SENT, LeasedTask, lease_of


class Heartbeats:
    """One thread renewing, every ``interval`` seconds, the lease of each task that is running or whose
    report waits to be sent. A task whose lease the server says is lost has its handler's ``ctx.cancelled``
    set.

    The interval is the server's ``heartbeat_ms`` (sent with every lease), a third of the lease: a failed
    renewal is tried again at the next beat, and two may fail before a lease runs out.
    """

    def __init__(
        self, state: WorkerState, transports: List[Transport], worker: str, request_timeout: float
    ) -> None:
        self._state = state
        self._transports = transports
        self._worker = worker
        self._timeout = request_timeout
        self.interval = 30.0
        self._rearm = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="weft-heartbeat", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def set_interval(self, seconds: float) -> None:
        """Takes the interval the server sent; a change takes effect at once."""
        if seconds > 0 and seconds != self.interval:
            self.interval = seconds
            self._rearm.set()

    def wake(self) -> None:
        """Ends the current wait (the worker is closing)."""
        self._rearm.set()

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)

    def _loop(self) -> None:
        while True:
            rearmed = self._rearm.wait(self.interval)
            self._rearm.clear()
            with self._state.cond:
                if self._state.closed:
                    for transport in self._transports:
                        transport.close()
                    return
                held = self._state.renewable()
            # A new interval starts a new wait; the leases were given with it, so they are fresh.
            if not rearmed:
                self.beat(held)

    def beat(self, held: List[LeasedTask]) -> None:
        """Renews these leases, up to 1,000 a request; the pieces go at once, each on its own connection
        (one after another, the last could be renewed after its leases ran out)."""
        pieces = [held[i : i + MAX_ITEMS_SENT] for i in range(0, len(held), MAX_ITEMS_SENT)]
        while len(self._transports) < len(pieces):
            self._transports.append(Transport(self._transports[0].settings))
        if len(pieces) == 1:
            self._renew(self._transports[0], pieces[0])
            return
        threads = [
            threading.Thread(target=self._renew, args=(self._transports[i], piece), daemon=True)
            for i, piece in enumerate(pieces)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    def _renew(self, transport: Transport, piece: List[LeasedTask]) -> None:
        state = self._state
        body = json.dumps({"worker": self._worker, "tasks": [lease_of(t) for t in piece]}).encode()
        try:
            answer = transport.call("POST", "/v1/tasks/heartbeat", body, self._timeout)
        except WeftError as e:
            state.log.warning(
                "renewing %d lease(s) failed: %s; trying again in %.1f s", len(piece), e, self.interval
            )
            return
        lost: Any = answer.get("lost") if isinstance(answer, dict) else None
        with state.cond:
            for task_id in lost if isinstance(lost, list) else []:
                ctx = state.running.get(task_id)
                if ctx is not None:
                    ctx._cancel("the lease on this task was lost")
                    state.log.warning(
                        "lost the lease on task %s (run %s, node %s, attempt %d): its handler's "
                        "ctx.cancelled is set; the run was cancelled or the lease expired, and the report "
                        "will be refused",
                        task_id,
                        ctx.run_id,
                        ctx.node_id,
                        ctx.attempt,
                    )
                elif task_id in state.held:
                    state.log.info("lost the lease on task %s while its report waits to be sent", task_id)
