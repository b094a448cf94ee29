"""The threads that run handlers."""

from __future__ import annotations

import queue
import threading
from typing import Any, Callable, List, Optional, Tuple


class HandlerPool:
    """Up to ``size`` daemon threads, started as work arrives and reused.

    Daemon threads, unlike ``concurrent.futures``, do not keep the process alive: a handler that ignores
    its cancellation cannot stop a worker from exiting after a hard stop.
    """

    def __init__(self, size: int, work: Callable[..., None], name: str) -> None:
        self._size = size
        self._work = work
        self._name = name
        self._queue: "queue.SimpleQueue[Optional[Tuple[Any, ...]]]" = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads: List[threading.Thread] = []
        self._idle = 0

    def submit(self, *args: Any) -> None:
        """Runs ``work(*args)`` on a free thread, starting one if none is idle."""
        with self._lock:
            if self._idle == 0 and len(self._threads) < self._size:
                thread = threading.Thread(
                    target=self._loop, name=f"{self._name}-{len(self._threads) + 1}", daemon=True
                )
                self._threads.append(thread)
                self._idle += 1
                thread.start()
            self._idle -= 1
        self._queue.put(args)

    def close(self) -> None:
        """Lets idle threads end; busy ones end when their handler returns."""
        with self._lock:
            count = len(self._threads)
        for _ in range(count):
            self._queue.put(None)

    def _loop(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            try:
                self._work(*item)
            finally:
                with self._lock:
                    self._idle += 1
