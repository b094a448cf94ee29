"""Reports and heartbeats against a stand-in server that shapes its answers."""

from __future__ import annotations

import asyncio
import logging
import threading
import unittest
from typing import List

from weft_worker import Worker
from weft_worker.reporter import Reporter
from weft_worker.settings import connection_settings
from weft_worker.state import Outage, WorkerState
from weft_worker.transport import Transport
from weft_worker.wire import Report, completed, parse_task

from .proxy import Exchange
from .standin import StandIn, leased
from .support import running, wait_until


def deliver(url: str, reports: List[Report]) -> WorkerState:
    """Runs one report thread over these reports until the server has given a verdict on each."""
    state = WorkerState(len(reports), logging.getLogger("weft_worker"))
    state.held = {r.task.task_id: r.task for r in reports}
    state.pending = list(reports)
    transport = Transport(connection_settings(url))
    reporter = Reporter(state, [transport], Outage(state.log, url), "w", ["t"], 5)
    reporter.start()
    try:
        wait_until(
            lambda: state.stats.completed + state.stats.failed + state.stats.refused == len(reports),
            "verdicts",
        )
    finally:
        with state.cond:
            state.closed = True
            state.cond.notify_all()
        reporter.join(5)
        transport.close()
    return state


class ReportsTest(unittest.TestCase):
    def test_the_poll_asks_for_every_free_slot_and_waits_as_told(self) -> None:
        with StandIn([]) as server:
            with running(
                Worker({"a": print, "b": print}, url=server.url, name="w-1", concurrency=7, poll_wait=0.25)
            ):
                wait_until(lambda: server.sent("/v1/tasks/poll"), "a poll")
        poll = server.sent("/v1/tasks/poll")[0].request
        self.assertEqual(poll, {"worker": "w-1", "task_types": ["a", "b"], "max": 7, "wait_ms": 250})

    def test_an_output_json_cannot_hold_leaves_the_rest_of_its_batch_delivered(self) -> None:
        tasks = [parse_task(leased()) for _ in range(3)]
        with StandIn([]) as server:
            state = deliver(
                server.url, [completed(tasks[0], 1), completed(tasks[1], {"at": {1}}), completed(tasks[2], 3)]
            )
        [request] = server.sent("/v1/tasks/report")
        reports = request.request["reports"]
        self.assertEqual([r["task_id"] for r in reports], [t.task_id for t in tasks])
        self.assertEqual([r.get("output") for r in reports], [1, None, 3])
        self.assertFalse(reports[1]["error"]["retryable"])
        self.assertEqual((state.stats.completed, state.stats.failed, state.held), (2, 1, {}))

    def test_a_batch_the_server_refuses_is_split_and_a_report_it_refuses_fails_its_task(self) -> None:
        def refuse(x: Exchange):
            reports = x.request["reports"]
            if len(reports) > 1:
                return 400, {"error": {"code": "bad_request", "message": "one report is malformed"}}
            if reports[0].get("output") == "poison":
                return 413, {"error": {"code": "bad_request", "message": "the body is too large"}}
            return None

        tasks = [parse_task(leased()) for _ in range(3)]
        with StandIn([], on_report=refuse) as server:
            with self.assertLogs("weft_worker", "WARNING") as logs:
                state = deliver(
                    server.url, [completed(t, v) for t, v in zip(tasks, ["fine", "poison", "good"])]
                )
        sent = server.sent("/v1/tasks/report")
        self.assertEqual(
            [(len(x.request["reports"]), x.status) for x in sent],
            [(3, 400), (1, 200), (1, 413), (1, 200), (1, 200)],
        )
        accepted = [x.request["reports"][0] for x in sent if x.status == 200]
        outcomes = {r["task_id"]: r.get("output", r.get("error", {}).get("message")) for r in accepted}
        self.assertEqual(
            outcomes,
            {
                tasks[0].task_id: "fine",
                tasks[1].task_id: "the server refused this task's report: the body is too large",
                tasks[2].task_id: "good",
            },
        )
        self.assertEqual((state.stats.completed, state.stats.failed, state.held), (2, 1, {}))
        self.assertIn("sending them one by one", logs.output[0])
        self.assertIn("failing the task instead", logs.output[1])

    def test_a_lease_is_renewed_while_its_report_waits_to_be_sent(self) -> None:
        gate = threading.Event()
        task = leased()
        down = (503, {"error": {"code": "database_unavailable", "message": "down"}})

        with StandIn([task], heartbeat_ms=50, on_report=lambda x: None if gate.is_set() else down) as server:
            with self.assertLogs("weft_worker", "WARNING"):
                worker = Worker({"t": lambda i, c: "done"}, url=server.url)
                with running(worker):
                    wait_until(lambda: server.sent("/v1/tasks/report"), "a first report")
                    # The handler has finished; its report cannot be delivered yet; the lease is renewed.
                    first = len(server.sent("/v1/tasks/report"))
                    wait_until(
                        lambda: any(
                            x.request["tasks"]
                            == [{k: task[k] for k in ("run_id", "task_id", "attempt", "lease_token")}]
                            for x in server.sent("/v1/tasks/heartbeat")[first:]
                        ),
                        "a heartbeat for the task whose report waits",
                    )
                    gate.set()
                    wait_until(lambda: worker.stats.completed == 1, "the report to be taken")
                    # Answered: the lease is no longer held, so no heartbeat names it again.
                    self.assertEqual(worker._state.held, {})

    def test_a_lease_whose_report_is_on_its_way_is_left_to_the_report(self) -> None:
        quick, slow = leased(input="quick"), leased(input="slow")
        release, seen = threading.Event(), {}
        server: StandIn

        def hold(x: Exchange):
            # Holds the first report until a heartbeat comes meanwhile, and keeps what that heartbeat named.
            if "named" in seen:
                return None
            start = len(server.sent("/v1/tasks/heartbeat"))
            wait_until(
                lambda: len(server.sent("/v1/tasks/heartbeat")) > start, "a heartbeat during the report"
            )
            seen["named"] = [t["task_id"] for t in server.sent("/v1/tasks/heartbeat")[start].request["tasks"]]
            return None

        def handler(input, ctx):
            if input == "slow":
                release.wait(30)
            return input

        with StandIn([quick, slow], heartbeat_ms=50, on_report=hold) as server:
            worker = Worker({"t": handler}, url=server.url, concurrency=2)
            with running(worker):
                wait_until(lambda: "named" in seen, "the held report")
                release.set()
                wait_until(lambda: worker.stats.completed == 2, "both reports")
        self.assertEqual(seen["named"], [slow["task_id"]])

    def test_an_async_handler_is_awaited(self) -> None:
        async def handler(input, ctx):
            await asyncio.sleep(0)
            return {"async": input}

        with StandIn([leased(input=5)]) as server:
            worker = Worker({"t": handler}, url=server.url)
            with running(worker):
                wait_until(lambda: worker.stats.completed == 1, "the report")
        [report] = server.sent("/v1/tasks/report")[0].request["reports"]
        self.assertEqual(report["output"], {"async": 5})


if __name__ == "__main__":
    unittest.main()
