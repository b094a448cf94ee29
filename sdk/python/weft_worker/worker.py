"""The worker: takes tasks of its types from a Weft server and runs their handlers."""

from __future__ import annotations

import asyncio
import inspect
import logging
import ssl
import threading
from typing import Any, Awaitable, Callable, List, Mapping, Optional

from .context import TaskContext
from .errors import TerminalError
from .heartbeats import Heartbeats
from .lifecycle import connect, install_signals
from .options import check_options
from .poller import Poller
from .pool import HandlerPool
from .reporter import Reporter
from .settings import connection_settings
from .state import Outage, WorkerState, WorkerStats
from .task_log import TaskLog
from .transport import Transport
from .wire import LeasedTask, completed, failed

Handler = Callable[[Any, TaskContext], Any]
"""Does one task: takes its input and the task's context, returns its output (any JSON value) or raises."""


class Worker:
    """Polls a Weft server for the task types it has handlers for, runs up to ``concurrency`` handlers at
    once on threads, renews their leases while they run, and reports results in batches (each report also
    asks for the next tasks, so a busy worker gets new work in the same round trip).

    Every option is described in the SDK's README. Durations are in seconds.
    """

    def __init__(
        self,
        handlers: Mapping[str, Handler],
        *,
        url: Optional[str] = None,
        namespace: Optional[str] = None,
        api_key: Optional[str] = None,
        headers: Optional[Mapping[str, str]] = None,
        ca_file: Optional[str] = None,
        cert_file: Optional[str] = None,
        key_file: Optional[str] = None,
        ssl_context: Optional[ssl.SSLContext] = None,
        name: Optional[str] = None,
        concurrency: int = 10,
        poll_wait: float = 20.0,
        reports_in_flight: int = 2,
        request_timeout: float = 30.0,
        connect_timeout: float = 30.0,
        stop_timeout: float = 30.0,
        logger: Optional[logging.Logger] = None,
    ) -> None:
        self.options = check_options(
            handlers,
            name,
            concurrency,
            poll_wait,
            reports_in_flight,
            request_timeout,
            connect_timeout,
            stop_timeout,
        )
        self.settings = connection_settings(
            url, namespace, api_key, headers, ca_file, cert_file, key_file, ssl_context
        )
        self.name = self.options.name
        self.log = logger or logging.getLogger("weft_worker")
        self._handlers = dict(handlers)
        self._state = WorkerState(concurrency, self.log)
        self._state.start_task = self._submit
        self._pool = HandlerPool(concurrency, self._run_task, "weft-handler")
        self._transports: List[Transport] = []
        outage = Outage(self.log, self.settings.url)
        o = self.options
        self._heartbeats = Heartbeats(self._state, [self._transport()], self.name, o.request_timeout)
        self._reporter = Reporter(
            self._state,
            [self._transport() for _ in range(o.reports_in_flight)],
            outage,
            self.name,
            o.types,
            o.request_timeout,
        )
        self._poller = Poller(
            self._state,
            self._transport(),
            outage,
            self.name,
            o.types,
            o.poll_wait,
            o.request_timeout,
            self._terms,
        )
        self._started = False
        self._done = threading.Event()

    @property
    def stats(self) -> WorkerStats:
        """Tasks completed, failed and refused since the start, and handlers running now."""
        return self._state.stats

    def start(self) -> None:
        """Reaches the server and starts taking tasks; returns once the worker runs (not when it stops).

        Raises :class:`WeftConnectionError` when the server cannot be reached within ``connect_timeout``,
        and :class:`WeftError` at once for what waiting cannot fix (see the README).
        """
        with self._state.cond:
            if self._started or self._state.stopping:
                raise RuntimeError("a worker starts once: make a new Worker to start again")
        probe = Transport(self.settings)
        try:
            connect(probe, self.options.connect_timeout, self.options.request_timeout, self.log)
        finally:
            probe.close()
        with self._state.cond:
            if self._state.stopping:
                return
            self._started = True
        self._heartbeats.start()
        self._reporter.start()
        self._poller.start()
        self.log.info(
            "worker %s takes %s from %s (namespace %s)",
            self.name,
            ", ".join(self.options.types),
            self.settings.url,
            self.settings.namespace,
        )

    def stop(self, timeout: Optional[float] = None, hard: bool = False) -> None:
        """Stops taking tasks, lets running handlers finish and sends their reports, then returns.

        After ``timeout`` seconds (default ``stop_timeout``) the handlers still running are aborted: their
        ``ctx.cancelled`` is set. After ``timeout`` more, the worker stops waiting for handlers that ignore
        it and for reports the server does not take, and logs which: their tasks are retried when their
        leases expire. ``hard=True`` aborts handlers at once (a graceful stop in progress becomes hard).
        """
        timeout = self.options.stop_timeout if timeout is None else timeout
        state = self._state
        with state.cond:
            first = not state.stopping
            state.stopping = True
            state.hard = state.hard or hard
            state.cond.notify_all()
            started = self._started
        if not first or not started:
            if not started:
                self._done.set()
            self._done.wait()
            return
        self._poller.stop()
        self._drain(timeout)
        self._heartbeats.wake()
        self._reporter.join(timeout)
        self._heartbeats.join(timeout)
        self._poller.join(timeout)
        self._pool.close()
        for transport in self._transports:
            transport.close()
        self.log.info("worker %s stopped: %s", self.name, self.stats)
        self._done.set()

    def run(self) -> None:
        """Starts the worker and blocks until it stops. From the main thread, the first SIGINT (Ctrl-C) or
        SIGTERM stops it gracefully (``stop()``), a second one stops it hard."""
        restore = install_signals(self._stop_on_signal, lambda: self.stop(hard=True))
        try:
            self.start()
            while not self._done.wait(0.5):
                pass
        finally:
            restore()

    def __enter__(self) -> "Worker":
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def _stop_on_signal(self) -> None:
        self.log.warning(
            "stopping: %d handler(s) may finish within %g s; signal again to abort them",
            self.stats.in_flight,
            self.options.stop_timeout,
        )
        self.stop()

    def _drain(self, timeout: float) -> None:
        state = self._state
        with state.cond:
            state.cond.wait_for(lambda: state.idle() or state.hard, timeout)
            if not state.idle():
                why = "stopping hard" if state.hard else f"still running after {timeout:g} s"
                if state.running:
                    self.log.warning("%s: setting ctx.cancelled of %d handler(s)", why, len(state.running))
                for ctx in state.running.values():
                    ctx._cancel("the worker is stopping")
                state.cond.wait_for(state.idle, timeout)
            if not state.idle():
                self.log.error(
                    "stopped with %d handler(s) still running and %d report(s) not taken by the server; "
                    "their tasks will be retried when their leases expire",
                    len(state.running),
                    len(state.pending) + state.reporting,
                )
            state.closed = True
            state.cond.notify_all()

    def _transport(self) -> Transport:
        transport = Transport(self.settings)
        self._transports.append(transport)
        return transport

    def _terms(self, answer: Any) -> None:
        beat = answer.get("heartbeat_ms") if isinstance(answer, dict) else None
        if isinstance(beat, (int, float)) and not isinstance(beat, bool) and beat > 0:
            self._heartbeats.set_interval(beat / 1000)

    def _submit(self, task: LeasedTask, ctx: TaskContext) -> None:
        self._pool.submit(task, ctx)

    def _run_task(self, task: LeasedTask, ctx: TaskContext) -> None:
        handler = self._handlers.get(task.task_type)
        ctx._log = TaskLog(task, lambda: Transport(self.settings), self._state.log, self.options.request_timeout)
        try:
            if handler is None:
                raise TerminalError(f"this worker has no handler for task type {task.task_type}")
            output = handler(task.input, ctx)
            if inspect.isawaitable(output):
                output = asyncio.run(_awaited(output))
            report = completed(task, output)
        except BaseException as e:  # a handler's failure, whatever it raised, is its task's failure
            report = failed(task, e)
        # The attempt's last log lines go before its report, which ends its lease.
        ctx._log.close()
        self._state.settle(report)


async def _awaited(value: Awaitable[Any]) -> Any:
    return await value
