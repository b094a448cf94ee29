"""ctx.log through a real Weft server: lines kept before the report, and refused once the lease is lost."""

from __future__ import annotations

import unittest

from weft_worker import Worker

from .support import SERVER, Api, needs_server, one_node, running, unique, wait_until


@needs_server
class LogsTest(unittest.TestCase):
    def setUp(self) -> None:
        self.api = Api()

    def logs(self, run_id: str) -> list:
        return self.api.call("GET", f"/v1/runs/{run_id}/logs?limit=1000")["lines"]

    def test_lines_are_kept_with_their_fields_before_the_report(self) -> None:
        name, kind = unique("py_logs"), unique("py.logs")
        self.api.deploy(one_node(name, kind, 1))

        def charge(input, ctx):
            ctx.log.info("charging", amount=5)
            ctx.log.warn("slow provider")
            for i in range(150):
                ctx.log.debug(f"line {i}")
            return "ok"

        run_id = self.api.start(name, {})
        with running(Worker({kind: charge}, url=SERVER)):
            self.api.wait_run(run_id, "completed")
        # Read at once: the lines went before the report that completed the run.
        lines = self.logs(run_id)
        self.assertEqual(len(lines), 152)
        self.assertEqual(
            [(line["level"], line["message"], line["fields"]) for line in lines[:2]],
            [("info", "charging", {"amount": 5}), ("warn", "slow provider", None)],
        )
        self.assertEqual(lines[-1]["message"], "line 149")

    def test_lines_of_an_attempt_that_lost_its_lease_are_dropped(self) -> None:
        name, kind = unique("py_logs_lost"), unique("py.logs")
        self.api.deploy(one_node(name, kind, 1))
        api = self.api

        def slow(input, ctx):
            ctx.log.info("before the cancel")
            ctx.log._send()  # sent now, so that the server holds it before the cancel
            api.cancel(ctx.run_id)
            ctx.cancelled.wait(30)
            ctx.log.warn("after the cancel")
            return None

        run_id = self.api.start(name, {})
        with running(Worker({kind: slow}, url=SERVER)):
            self.api.wait_run(run_id, "cancelled")
            wait_until(lambda: self.api.task(run_id, "a", "cancelled"), "the attempt to end")
        self.assertEqual([line["message"] for line in self.logs(run_id)], ["before the cancel"])


if __name__ == "__main__":
    unittest.main()
