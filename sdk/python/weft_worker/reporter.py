"""Sends finished tasks' reports in batches, and starts the tasks the server hands back with them."""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from typing import Any, Dict, List, Optional, Tuple

from .errors import WeftApiError, WeftError
from .poller import read_tasks
from .state import Outage, WorkerState, backoff
from .transport import Transport
from .wire import MAX_TASKS_ASKED, Report, first_batch, refused_by_server, report_body

# Answers that refuse the request itself (its body), not the server's state: sending it again cannot help.
REFUSED_REQUEST = (400, 413, 422)


class Reporter:
    """``count`` threads, each sending one batch at a time to ``/v1/tasks/report``.

    Reports that finish while a batch is on its way go in the next one. Each batch asks for as many next
    tasks as the worker has free slots (none while stopping). A batch that fails to arrive is kept and sent
    again (fencing makes that safe); a batch the server refuses as a request is split so that one bad
    report cannot hold back the others.
    """

    def __init__(
        self,
        state: WorkerState,
        transports: List[Transport],
        outage: Outage,
        worker: str,
        types: List[str],
        request_timeout: float,
    ) -> None:
        self._state = state
        self._outage = outage
        self._worker = worker
        self._types = types
        self._timeout = request_timeout
        self._delay: Optional[float] = None
        self._threads = [
            threading.Thread(target=self._loop, args=(t,), name=f"weft-report-{i + 1}", daemon=True)
            for i, t in enumerate(transports)
        ]

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    def join(self, timeout: float) -> None:
        end = time.monotonic() + timeout
        for thread in self._threads:
            thread.join(max(0.0, end - time.monotonic()))

    def _loop(self, transport: Transport) -> None:
        while True:
            taken = self._take()
            if taken is None:
                return
            batch, want = taken
            try:
                answer = transport.call(
                    "POST",
                    "/v1/tasks/report",
                    report_body(self._worker, batch, self._types, want),
                    self._timeout,
                )
                self._outage.ok()
                self._delay = None
                self._apply(batch, answer)
            except WeftApiError as e:
                if e.status in REFUSED_REQUEST:
                    self._split(batch, e)
                else:
                    self._keep(batch, e)
            except WeftError as e:
                self._keep(batch, e)
            finally:
                with self._state.cond:
                    self._state.sending.difference_update(r.task.task_id for r in batch)
                    self._state.report_reserved -= want
                    self._state.reporting -= 1
                    self._state.cond.notify_all()

    def _take(self) -> Optional[Tuple[List[Report], int]]:
        """Waits for reports to send (or the worker to close) and takes the first batch of them."""
        state = self._state
        with state.cond:
            while True:
                if state.closed:
                    return None
                wait = state.retry_reports_at - time.monotonic()
                if state.pending and wait <= 0:
                    break
                state.cond.wait(wait if state.pending else None)
            batch = first_batch(state.pending)
            del state.pending[: len(batch)]
            state.sending.update(r.task.task_id for r in batch)
            want = 0 if state.stopping else max(0, min(state.free(), MAX_TASKS_ASKED))
            state.report_reserved += want
            state.reporting += 1
            return batch, want

    def _apply(self, batch: List[Report], answer: Any) -> None:
        state = self._state
        results = answer.get("results") if isinstance(answer, dict) else None
        verdicts: Dict[str, Dict[str, Any]] = {}
        for r in results if isinstance(results, list) else []:
            if isinstance(r, dict) and isinstance(r.get("task_id"), str):
                verdicts[r["task_id"]] = r
        tasks = read_tasks(answer, state)
        with state.cond:
            for report in batch:
                task_id = report.task.task_id
                state.held.pop(task_id, None)
                verdict = verdicts.get(task_id)
                if verdict is None:
                    state.log.error("the server's answer says nothing of the report for task %s", task_id)
                elif verdict.get("accepted") is True:
                    if report.failed:
                        state.stats.failed += 1
                    else:
                        state.stats.completed += 1
                else:
                    state.stats.refused += 1
                    state.log.warning(
                        "the report for task %s (run %s, node %s, attempt %d) was refused: %s",
                        task_id,
                        report.task.run_id,
                        report.task.node_id,
                        report.task.attempt,
                        verdict.get("why"),
                    )
            state.admit(tasks)

    def _keep(self, batch: List[Report], error: WeftError) -> None:
        """The batch did not arrive: it goes first in the queue again, after a pause."""
        self._delay = backoff(self._delay)
        self._outage.failed(f"sending {len(batch)} report(s)", error, self._delay)
        with self._state.cond:
            self._state.pending[0:0] = batch
            self._state.retry_reports_at = time.monotonic() + self._delay

    def _split(self, batch: List[Report], error: WeftApiError) -> None:
        """The server refused the request: each report goes again on its own; a report refused on its own
        is replaced by a failure of its task saying why; if even that is refused, it is given up on."""
        state = self._state
        again: List[Report] = []
        if len(batch) > 1:
            again = [replace(r, alone=True) for r in batch]
            state.log.warning(
                "the server refused a batch of %d reports (%s); sending them one by one",
                len(batch),
                error.message,
            )
        elif not batch[0].replaced:
            report = batch[0]
            state.log.warning(
                "the server refused the report for task %s: %s; failing the task instead",
                report.task.task_id,
                error.message,
            )
            again = [replace(refused_by_server(report.task, error.message), alone=True, replaced=True)]
        else:
            state.log.error(
                "the server refused the failure report for task %s too (%s); it will be retried "
                "when its lease expires",
                batch[0].task.task_id,
                error.message,
            )
        with state.cond:
            if not again:
                state.held.pop(batch[0].task.task_id, None)
            state.pending[0:0] = again
