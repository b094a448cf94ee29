"""What the tests share: the Weft server under test, its API, and waiting with a bound."""

from __future__ import annotations

import json
import os
import time
import unittest
import urllib.error
import urllib.request
import uuid
from contextlib import contextmanager
from typing import Any, Callable, Dict, Iterator, Optional

from weft_worker import Worker

SERVER = os.environ.get("WEFT_TEST_URL", "").rstrip("/")
# The API key of that server (an admin key), given by the suite.
KEY = os.environ.get("WEFT_TEST_API_KEY", "")
needs_server = unittest.skipUnless(
    SERVER,
    "needs a Weft server: set WEFT_TEST_URL (packages/worker/test/python-worker.test.ts does)",
)


def unique(prefix: str) -> str:
    """A name no other test uses (definitions and task types are shared by every test on one server)."""
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


def one_node(name: str, task_type: str, attempts: int) -> str:
    """A definition of one task node, retried quickly up to ``attempts`` attempts."""
    retry = f"{{ max_attempts: {attempts}, delay: 10ms }}"
    return f"name: {name}\nnodes:\n  - {{ id: a, task_type: {task_type}, retry: {retry} }}\n"


def wait_until(check: Callable[[], Any], what: str, timeout: float = 30.0) -> Any:
    """Waits for ``check()`` to return something true, at most ``timeout`` seconds."""
    end = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(f"waited {timeout:g} s for {what}")
        time.sleep(0.05)


class Api:
    """The parts of Weft's HTTP API the tests use."""

    def __init__(self, url: str = SERVER, namespace: str = "default") -> None:
        self.url = url
        self.namespace = namespace

    def call(self, method: str, path: str, body: Any = None, yaml: Optional[str] = None) -> Any:
        headers = {"x-weft-namespace": self.namespace}
        if KEY:
            headers["authorization"] = f"Bearer {KEY}"
        data = None
        if yaml is not None:
            data, headers["content-type"] = yaml.encode(), "application/yaml"
        elif body is not None:
            data, headers["content-type"] = json.dumps(body).encode(), "application/json"
        request = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return json.loads(response.read() or b"null")
        except urllib.error.HTTPError as e:
            raise AssertionError(f"{method} {path} answered {e.code}: {e.read().decode()}") from None

    def deploy(self, yaml: str) -> None:
        self.call("POST", "/v1/definitions", yaml=yaml)

    def start(self, definition: str, input: Any = None) -> str:
        return self.call("POST", "/v1/runs", {"definition": definition, "input": input or {}})["id"]

    def run(self, run_id: str) -> Dict[str, Any]:
        return self.call("GET", f"/v1/runs/{run_id}")

    def wait_run(self, run_id: str, *statuses: str, timeout: float = 30.0) -> Dict[str, Any]:
        wanted = statuses or ("completed",)
        return wait_until(
            lambda: (lambda r: r if r["status"] in wanted else None)(self.run(run_id)),
            f"run {run_id} to be {' or '.join(wanted)}",
            timeout,
        )

    def task(self, run_id: str, node_id: str, *statuses: str) -> Optional[Dict[str, Any]]:
        """The node's latest attempt, when it has one in one of ``statuses`` (any status if none given)."""
        tasks = [t for t in self.run(run_id)["tasks"] if t["node_id"] == node_id]
        latest = max(tasks, key=lambda t: t["attempt"], default=None)
        return latest if latest and (not statuses or latest["status"] in statuses) else None

    def history(self, run_id: str) -> list:
        return self.call("GET", f"/v1/runs/{run_id}/history?limit=1000")["events"]

    def cancel(self, run_id: str) -> None:
        self.call("POST", f"/v1/runs/{run_id}/cancel", {"reason": "test"})


@contextmanager
def running(worker: Worker, timeout: float = 30.0) -> Iterator[Worker]:
    """Starts the worker, and stops it however the test ends."""
    worker.start()
    try:
        yield worker
    finally:
        worker.stop(timeout)
