"""Reaching the server: failing fast, what is sent with every request, and logging outages."""

from __future__ import annotations

import socket
import time
import unittest
import uuid

from weft_worker import WeftApiError, WeftConnectionError, WeftError, Worker

from .proxy import Exchange, Proxy
from .support import KEY, SERVER, Api, needs_server, running, unique, wait_until


def closed_port() -> int:
    """A local port nothing listens on."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def fake(dispatch=(200, {"dispatcher": "table"}), poll=None):
    """Answers of a stand-in server: GET /v1/tasks/dispatch, and polls (empty by default)."""

    def answer(x: Exchange):
        if x.path.endswith("/v1/tasks/dispatch"):
            return dispatch() if callable(dispatch) else dispatch
        if x.path.endswith("/v1/tasks/poll"):
            return poll(x) if poll else (200, {"tasks": [], "lease_ms": 90000, "heartbeat_ms": 30000})
        return None

    return answer


def noop(input, ctx):
    return None


class FailFastTest(unittest.TestCase):
    def test_start_fails_with_a_clear_error_when_nothing_answers_in_time(self) -> None:
        url = f"http://127.0.0.1:{closed_port()}"
        worker = Worker({"t": noop}, url=url, connect_timeout=1)
        began = time.monotonic()
        with self.assertRaises(WeftConnectionError) as caught:
            worker.start()
        self.assertLess(time.monotonic() - began, 30)
        message = str(caught.exception)
        self.assertIn(f"could not reach the Weft server at {url} within 1 s", message)
        self.assertIn("check the url and that the server is running", message)
        self.assertEqual(Worker({"t": noop}).options.connect_timeout, 30.0)

    def test_run_fails_as_start_does(self) -> None:
        worker = Worker({"t": noop}, url=f"http://127.0.0.1:{closed_port()}", connect_timeout=0.5)
        with self.assertRaises(WeftConnectionError):
            worker.run()

    def test_a_url_that_is_not_a_weft_server_fails_at_once(self) -> None:
        with Proxy() as other:  # answers 404 to everything
            with self.assertRaises(WeftApiError) as caught:
                Worker({"t": noop}, url=other.url, connect_timeout=30).start()
        self.assertEqual(caught.exception.status, 404)
        self.assertIn("answered GET /v1/tasks/dispatch with 404", str(caught.exception))
        self.assertEqual(len(other.exchanges), 1)

    def test_a_refused_api_key_fails_at_once_and_says_which_setting(self) -> None:
        refuse = (401, {"error": {"code": "unauthorized", "message": "the API key is not valid"}})
        with Proxy(answer=fake(dispatch=refuse)) as server:
            with self.assertRaises(WeftApiError) as caught:
                Worker({"t": noop}, url=server.url, api_key="wrong").start()
        self.assertIn("check api_key (or WEFT_API_KEY)", str(caught.exception))
        self.assertIn("the API key is not valid", str(caught.exception))

    def test_a_server_that_is_starting_is_waited_for(self) -> None:
        answers = iter([(503, {"error": {"code": "database_unavailable", "message": "later"}})] * 2)
        dispatch = lambda: next(answers, (200, {"dispatcher": "table"}))  # noqa: E731
        with Proxy(answer=fake(dispatch=dispatch)) as server:
            with running(Worker({"t": noop}, url=server.url, connect_timeout=30, poll_wait=0.1), timeout=5):
                pass
        asked = [x.status for x in server.exchanges if x.path == "/v1/tasks/dispatch"]
        self.assertEqual(asked, [503, 503, 200])

    def test_a_server_dispatching_through_redis_is_refused_with_the_reason(self) -> None:
        redis = (200, {"dispatcher": "redis", "stream_prefix": "weft"})
        with Proxy(answer=fake(dispatch=redis)) as server:
            with self.assertRaises(WeftError) as caught:
                Worker({"t": noop}, url=server.url).start()
        self.assertEqual(caught.exception.code, "redis_dispatch")
        self.assertIn("table dispatcher", str(caught.exception))


class KeepAliveTest(unittest.TestCase):
    def test_a_connection_the_server_closed_while_idle_is_opened_again_without_a_problem(self) -> None:
        with Proxy(answer=fake(), drop_idle=True) as server:
            with self.assertLogs("weft_worker", "DEBUG") as logs:
                with running(Worker({"t": noop}, url=server.url, poll_wait=0.01), timeout=5):
                    wait_until(
                        lambda: sum(x.path == "/v1/tasks/poll" for x in server.exchanges) >= 5, "5 polls"
                    )
        self.assertEqual([line for line in logs.output if line.startswith(("WARNING", "ERROR"))], [])


class OutageTest(unittest.TestCase):
    def test_an_unreachable_server_is_logged_once_per_outage(self) -> None:
        down = {"now": True}

        def poll(x: Exchange):
            if down["now"]:
                return 503, {"error": {"code": "database_unavailable", "message": "the database is down"}}
            return 200, {"tasks": [], "lease_ms": 90000, "heartbeat_ms": 30000}

        with Proxy(answer=fake(poll=poll)) as server:
            with self.assertLogs("weft_worker", "DEBUG") as logs:
                with running(Worker({"t": noop}, url=server.url, poll_wait=0.05), timeout=5):
                    wait_until(
                        lambda: sum(x.path == "/v1/tasks/poll" for x in server.exchanges) >= 3, "3 polls"
                    )
                    down["now"] = False
                    wait_until(
                        lambda: any("answers again" in line for line in logs.output), "the recovery log"
                    )
        warnings = [line for line in logs.output if line.startswith("WARNING")]
        self.assertEqual(len(warnings), 1, warnings)
        self.assertIn("polling for tasks failed: the database is down", warnings[0])


@needs_server
class HeadersTest(unittest.TestCase):
    def test_every_request_carries_the_api_key_the_namespace_and_extra_headers(self) -> None:
        namespace = f"py-{uuid.uuid4().hex[:8]}"
        api = Api(namespace=namespace)
        name, kind = unique("py_headers"), unique("py.headers")
        api.deploy(
            f"name: {name}\nnodes:\n  - {{ id: a, task_type: {kind} }}\n  - {{ id: b, task_type: {kind} }}\n"
        )
        run_id = api.start(name)
        with Proxy(SERVER) as proxy:
            worker = Worker(
                {kind: noop}, url=proxy.url, namespace=namespace, api_key=KEY, headers={"X-Trace": "abc"}
            )
            with running(worker):
                api.wait_run(run_id)
        sent = proxy.exchanges
        paths = {x.path for x in sent}
        self.assertTrue({"/v1/tasks/dispatch", "/v1/tasks/poll", "/v1/tasks/report"} <= paths, paths)
        for x in sent:
            self.assertEqual(x.headers.get("authorization"), f"Bearer {KEY}", x.path)
            self.assertEqual(x.headers.get("x-weft-namespace"), namespace, x.path)
            self.assertEqual(x.headers.get("x-trace"), "abc", x.path)
            self.assertTrue(x.headers.get("user-agent", "").startswith("weft-worker-python/"))

    def test_the_api_key_comes_from_weft_api_key_when_not_given(self) -> None:
        import os
        from unittest import mock

        with mock.patch.dict(os.environ, {"WEFT_API_KEY": "from-env"}):
            with Proxy(answer=fake()) as server:
                with running(Worker({"t": noop}, url=server.url, poll_wait=0.05), timeout=5):
                    wait_until(lambda: len(server.exchanges) >= 2, "a poll")
        self.assertTrue(all(x.headers["authorization"] == "Bearer from-env" for x in server.exchanges))


if __name__ == "__main__":
    unittest.main()
