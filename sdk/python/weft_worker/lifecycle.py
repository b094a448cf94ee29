"""Reaching the server at start (or failing fast), and stopping on SIGINT and SIGTERM."""

from __future__ import annotations

import logging
import signal
import ssl
import threading
import time
from typing import Any, Callable

from .errors import WeftApiError, WeftConnectionError, WeftError
from .transport import Transport

# Answers that mean the server is there but not ready yet (starting, or its database is down).
NOT_YET = (408, 425, 429, 500, 502, 503, 504)


def connect(
    transport: Transport, connect_timeout: float, request_timeout: float, log: logging.Logger
) -> None:
    """Asks the server how it hands out tasks, trying again until ``connect_timeout`` seconds have passed.

    Raises :class:`WeftConnectionError` when nothing answered in time, and :class:`WeftError` at once for
    what trying again cannot fix: an unverifiable certificate, a refused API key, a URL that is not a Weft
    server, or a server that hands out tasks through Redis (which this SDK does not read).
    """
    url = transport.settings.url
    end = time.monotonic() + connect_timeout
    delay = 0.2
    while True:
        left = end - time.monotonic()
        try:
            info = transport.call("GET", "/v1/tasks/dispatch", timeout=max(0.001, min(request_timeout, left)))
            break
        except WeftConnectionError as e:
            if isinstance(e.cause, ssl.SSLError):
                raise
            problem: WeftError = e
        except WeftApiError as e:
            if e.status in (401, 403):
                raise WeftApiError(
                    e.status,
                    e.code,
                    f"{url} refused the worker ({e.message}): check api_key (or WEFT_API_KEY)",
                ) from e
            if e.status not in NOT_YET:
                raise WeftApiError(
                    e.status, e.code, f"{url} answered GET /v1/tasks/dispatch with {e.status}: {e.message}"
                ) from e
            problem = e
        if time.monotonic() + delay >= end:
            raise WeftConnectionError(
                f"could not reach the Weft server at {url} within {connect_timeout:g} s ({problem}): "
                "check the url and that the server is running, or give a longer connect_timeout",
                problem,
            )
        log.info("waiting for %s: %s", url, problem)
        time.sleep(delay)
        delay = min(delay * 2, 2.0)
    _check_dispatch(info, url)


def _check_dispatch(info: Any, url: str) -> None:
    kind = info.get("dispatcher") if isinstance(info, dict) else None
    if kind == "table":
        return
    if kind == "redis":
        raise WeftError(
            "redis_dispatch",
            f"the server at {url} hands tasks out through Redis streams, which this SDK does not read: "
            "run the Python worker against a server using the table dispatcher (the default), or use "
            "the TypeScript worker",
        )
    raise WeftError(
        "bad_answer", f"{url} answered GET /v1/tasks/dispatch with {info!r:.200}: is it a Weft server?"
    )


def install_signals(on_first: Callable[[], None], on_second: Callable[[], None]) -> Callable[[], None]:
    """From the main thread: the first SIGINT or SIGTERM calls ``on_first``, a second one ``on_second``
    (each on a thread of its own, never inside the signal handler). Returns what puts the old handlers back.
    Elsewhere it does nothing (Python delivers signals to the main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    count = [0]

    def handle(signum: int, frame: Any) -> None:
        count[0] += 1
        target = on_first if count[0] == 1 else on_second
        threading.Thread(target=target, name="weft-signal", daemon=True).start()

    old = {s: signal.signal(s, handle) for s in (signal.SIGINT, signal.SIGTERM)}

    def restore() -> None:
        for s, previous in old.items():
            signal.signal(s, previous)

    return restore
