"""Leases through a real Weft server: heartbeats, lost leases, refused reports, and stopping."""

from __future__ import annotations

import threading
import time
import unittest

from weft_worker import Worker

from .proxy import Proxy
from .support import SERVER, Api, needs_server, one_node, running, unique, wait_until


def lease_seconds(api: Api) -> float:
    """The server's lease length, as it tells workers."""
    answer = api.call(
        "POST", "/v1/tasks/poll", {"worker": "probe", "task_types": [unique("none")], "wait_ms": 0}
    )
    return answer["lease_ms"] / 1000


@needs_server
class LeasesTest(unittest.TestCase):
    def setUp(self) -> None:
        self.api = Api()
        self.name, self.kind = unique("py_lease"), unique("py.lease")
        self.api.deploy(one_node(self.name, self.kind, 2))

    def test_heartbeats_keep_the_lease_of_a_task_longer_than_it(self) -> None:
        hold = 3 * lease_seconds(self.api)
        seen = {}

        def long(input, ctx):
            seen["cancelled"] = ctx.cancelled.wait(hold)
            return "done"

        run_id = self.api.start(self.name)
        with running(Worker({self.kind: long}, url=SERVER)) as worker:
            run = self.api.wait_run(run_id, "completed", "failed", timeout=hold + 30)
        self.assertEqual(run["status"], "completed")
        self.assertEqual([t["attempt"] for t in run["tasks"]], [1])
        self.assertFalse(seen["cancelled"])
        self.assertEqual(worker.stats.refused, 0)

    def test_a_lost_lease_sets_the_cancellation_flag_and_the_late_report_is_refused(self) -> None:
        # A partition: the worker's heartbeats do not reach the server until its lease has expired.
        partitioned = threading.Event()
        down = (503, {"error": {"code": "unavailable", "message": "partitioned"}})
        cut = (
            lambda x: down if partitioned.is_set() and x.path == "/v1/tasks/heartbeat" else None
        )  # noqa: E731
        started = threading.Event()
        seen = {}

        def stubborn(input, ctx):
            if ctx.attempt > 1:
                return "second attempt"
            started.set()
            seen["cancelled"] = ctx.cancelled.wait(30)
            seen["reason"] = ctx.cancel_reason
            return "too late"

        run_id = self.api.start(self.name)
        with Proxy(SERVER, answer=cut) as proxy, self.assertLogs("weft_worker", "WARNING") as logs:
            with running(Worker({self.kind: stubborn}, url=proxy.url)) as worker:
                self.assertTrue(started.wait(30))
                partitioned.set()
                run = self.api.wait_run(run_id)  # the lease expired; the retry ran and completed
                partitioned.clear()
                wait_until(lambda: worker.stats.refused == 1, "the late report to be refused")
        self.assertEqual(seen, {"cancelled": True, "reason": "the lease on this task was lost"})
        first = min(run["tasks"], key=lambda t: t["attempt"])
        self.assertEqual((first["status"], first["error"]["reason"]), ("timed_out", "lease_expired"))
        self.assertEqual(run["output"], {"a": "second attempt"})
        text = "\n".join(logs.output)
        self.assertIn("renewing 1 lease(s) failed: partitioned", text)
        self.assertIn(f"lost the lease on task {first['id']}", text)
        self.assertIn(
            f"the report for task {first['id']} (run {run_id}, node a, attempt 1) was refused", text
        )

    def test_a_graceful_stop_takes_no_new_task_and_delivers_the_last_reports(self) -> None:
        started, release = threading.Event(), threading.Event()
        seen = {}

        def slow(input, ctx):
            started.set()
            release.wait(30)
            seen["cancelled"] = ctx.cancelled.is_set()
            return {"finished": True}

        first = self.api.start(self.name)
        # Polls wait a minute for tasks: stopping must end the one waiting now, not wait for it.
        worker = Worker({self.kind: slow}, url=SERVER, poll_wait=60)
        worker.start()
        self.assertTrue(started.wait(30))
        stopper = threading.Thread(target=worker.stop, args=(30,))
        stopper.start()
        wait_until(lambda: not worker._poller._thread.is_alive(), "the worker to stop polling", timeout=15)
        second = self.api.start(self.name)
        release.set()
        stopper.join(60)
        self.assertFalse(stopper.is_alive())
        # stop() has returned: the report is already taken, not on its way.
        self.assertEqual(self.api.task(first, "a")["status"], "completed")
        self.assertEqual(self.api.task(second, "a")["status"], "queued")
        self.assertEqual(worker.stats.completed, 1)
        self.assertEqual(seen, {"cancelled": False})
        self.api.cancel(second)

    def test_a_stop_past_its_timeout_sets_the_cancellation_flag_and_still_reports(self) -> None:
        started = threading.Event()
        seen = {}

        def waits(input, ctx):
            started.set()
            seen["cancelled"] = ctx.cancelled.wait(30)
            seen["reason"] = ctx.cancel_reason
            raise RuntimeError("gave up: the worker is stopping")

        run_id = self.api.start(self.name)
        worker = Worker({self.kind: waits}, url=SERVER)
        worker.start()
        self.assertTrue(started.wait(30))
        with self.assertLogs("weft_worker", "WARNING") as logs:
            worker.stop(timeout=0.2)
        self.assertIn("still running after 0.2 s: setting ctx.cancelled of 1 handler(s)", logs.output[0])
        self.assertEqual(seen, {"cancelled": True, "reason": "the worker is stopping"})
        first = min(self.api.run(run_id)["tasks"], key=lambda t: t["attempt"])
        self.assertEqual(first["status"], "failed")
        self.assertEqual(first["error"]["message"], "gave up: the worker is stopping")
        self.api.cancel(run_id)

    def test_a_hard_stop_aborts_at_once_and_gives_up_on_handlers_that_ignore_it(self) -> None:
        started, release = threading.Event(), threading.Event()

        def deaf(input, ctx):
            started.set()
            release.wait(30)  # ignores ctx.cancelled
            return "late"

        run_id = self.api.start(self.name)
        worker = Worker({self.kind: deaf}, url=SERVER)
        worker.start()
        self.assertTrue(started.wait(30))
        with self.assertLogs("weft_worker", "WARNING") as logs:
            began = time.monotonic()
            worker.stop(timeout=0.3, hard=True)
            took = time.monotonic() - began
            release.set()
            wait_until(lambda: worker.stats.in_flight == 0, "the deaf handler to return")
        self.assertLess(took, 30)  # bounded by the timeout, not by the handler
        text = "\n".join(logs.output)
        self.assertIn("stopping hard: setting ctx.cancelled of 1 handler(s)", text)
        self.assertIn("stopped with 1 handler(s) still running", text)
        self.assertIn("its report is not sent", text)
        self.assertEqual(self.api.task(run_id, "a")["status"], "running")
        self.api.cancel(run_id)


if __name__ == "__main__":
    unittest.main()
