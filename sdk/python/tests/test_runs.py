"""Runs through a real Weft server: outputs, retries, terminal errors, concurrency, the stable key."""

from __future__ import annotations

import threading
import unittest

from weft_worker import IdempotencyKeyMissing, TerminalError, Worker

from .support import SERVER, Api, needs_server, one_node, running, unique


@needs_server
class RunsTest(unittest.TestCase):
    def setUp(self) -> None:
        self.api = Api()

    def test_a_workflow_completes_through_the_worker(self) -> None:
        name, kind = unique("py_chain"), unique("py.step")
        self.api.deploy(
            f"""
name: {name}
nodes:
  - {{ id: first, task_type: {kind}, input: {{ n: input.n }} }}
  - {{ id: second, task_type: {kind}, input: {{ n: nodes.first.output.n }} }}
edges:
  - {{ from: first, to: second }}
output: {{ result: nodes.second.output.n }}
"""
        )
        seen = []

        def double(input, ctx):
            seen.append((ctx.node_id, ctx.attempt, ctx.task_type, ctx.definition, ctx.iteration))
            return {"n": input["n"] * 2}

        ids = [self.api.start(name, {"n": n}) for n in range(5)]
        with running(Worker({kind: double}, url=SERVER, concurrency=4)) as worker:
            runs = [self.api.wait_run(i) for i in ids]
        self.assertEqual([r["output"] for r in runs], [{"result": n * 4} for n in range(5)])
        self.assertEqual(sorted(set(seen)), [("first", 1, kind, name, ""), ("second", 1, kind, name, "")])
        self.assertEqual(worker.stats.completed, 10)
        self.assertEqual(worker.stats.failed, 0)

    def test_a_raised_exception_is_retried_by_the_nodes_policy(self) -> None:
        name, kind = unique("py_flaky"), unique("py.flaky")
        self.api.deploy(one_node(name, kind, 3))
        attempts = []

        def flaky(input, ctx):
            attempts.append(ctx.attempt)
            if ctx.attempt < 3:
                raise ConnectionError(f"the bank is down (attempt {ctx.attempt})")
            return "paid"

        run_id = self.api.start(name)
        with running(Worker({kind: flaky}, url=SERVER)):
            run = self.api.wait_run(run_id)
        self.assertEqual(attempts, [1, 2, 3])
        tasks = sorted(run["tasks"], key=lambda t: t["attempt"])
        self.assertEqual([t["status"] for t in tasks], ["failed", "failed", "completed"])
        self.assertEqual(tasks[0]["error"]["message"], "the bank is down (attempt 1)")
        self.assertEqual(tasks[0]["error"]["type"], "ConnectionError")
        self.assertIn("Traceback", tasks[0]["error"]["stack"])
        self.assertEqual(run["output"], {"a": "paid"})

    def test_a_terminal_error_fails_the_node_without_a_retry(self) -> None:
        name, kind = unique("py_declined"), unique("py.declined")
        self.api.deploy(one_node(name, kind, 5))

        def declined(input, ctx):
            raise TerminalError("card declined", {"reason": "insufficient_funds"})

        run_id = self.api.start(name)
        with running(Worker({kind: declined}, url=SERVER)) as worker:
            run = self.api.wait_run(run_id, "failed")
        self.assertEqual(len(run["tasks"]), 1)
        error = run["tasks"][0]["error"]
        self.assertEqual((error["message"], error["retryable"]), ("card declined", False))
        self.assertEqual(error["details"], {"reason": "insufficient_funds"})
        self.assertEqual(worker.stats.failed, 1)

    def test_handlers_run_concurrently_up_to_the_limit(self) -> None:
        name, kind = unique("py_wide"), unique("py.wide")
        self.api.deploy(f"name: {name}\nnodes:\n  - {{ id: a, task_type: {kind} }}\n")
        lock = threading.Lock()
        now, peak = [0], [0]
        # Four handlers must be inside at once for any of them to pass the barrier.
        barrier = threading.Barrier(4, timeout=30)

        def wide(input, ctx):
            with lock:
                now[0] += 1
                peak[0] = max(peak[0], now[0])
            try:
                barrier.wait()
            finally:
                with lock:
                    now[0] -= 1
            return "ok"

        ids = [self.api.start(name) for _ in range(8)]
        with running(Worker({kind: wide}, url=SERVER, concurrency=4)):
            runs = [self.api.wait_run(i) for i in ids]
        self.assertTrue(all(r["output"] == {"a": "ok"} for r in runs))
        self.assertEqual(peak[0], 4)

    def test_an_output_json_cannot_hold_fails_only_its_task(self) -> None:
        name, kind = unique("py_mixed"), unique("py.mixed")
        self.api.deploy(one_node(name, kind, 3))
        barrier = threading.Barrier(3, timeout=30)

        def mixed(input, ctx):
            barrier.wait()  # the three finish together, so their reports tend to travel together
            return {"ids": {1, 2}} if input["bad"] else {"fine": True}

        good, bad, also_good = (self.api.start(name, {"bad": b}) for b in (False, True, False))
        with running(Worker({kind: mixed}, url=SERVER, concurrency=3)):
            runs = [self.api.wait_run(i, "completed", "failed") for i in (good, bad, also_good)]
        self.assertEqual([r["status"] for r in runs], ["completed", "failed", "completed"])
        self.assertEqual(runs[2]["output"], {"a": {"fine": True}})
        [task] = runs[1]["tasks"]
        self.assertFalse(task["error"]["retryable"])
        self.assertIn("output.ids is of type set", task["error"]["message"])

    def test_the_idempotency_key_is_the_same_for_every_attempt(self) -> None:
        name, kind = unique("py_key"), unique("py.key")
        self.api.deploy(
            f"""
name: {name}
nodes:
  - {{ id: charge, task_type: {kind}, retry: {{ max_attempts: 3, delay: 10ms }} }}
  - {{ id: refund, task_type: {kind}, retry: {{ max_attempts: 3, delay: 10ms }} }}
"""
        )
        keys = {}

        def charge(input, ctx):
            try:
                keys.setdefault(ctx.node_id, []).append(ctx.idempotency_key)
            except IdempotencyKeyMissing as e:
                keys["missing"] = str(e)
                return None
            if ctx.attempt < 2:
                raise RuntimeError("the provider timed out")
            return None

        run_id = self.api.start(name)
        with running(Worker({kind: charge}, url=SERVER)):
            self.api.wait_run(run_id)
        if "missing" in keys:
            self.assertIn("did not send idempotency_key", keys["missing"])
            self.skipTest("this Weft server does not send idempotency_key with leased tasks yet")
        self.assertEqual(len(keys["charge"]), 2)
        self.assertEqual(len(set(keys["charge"])), 1)
        self.assertNotEqual(keys["charge"][0], keys["refund"][0])

    def test_reports_bring_the_next_tasks_back(self) -> None:
        name, kind = unique("py_eager"), unique("py.eager")
        nodes = "".join(f"  - {{ id: n{i}, task_type: {kind} }}\n" for i in range(6))
        edges = "".join(f"  - {{ from: n{i}, to: n{i + 1} }}\n" for i in range(5))
        self.api.deploy(f"name: {name}\nnodes:\n{nodes}edges:\n{edges}")
        from .proxy import Proxy

        with Proxy(SERVER) as proxy:
            run_id = self.api.start(name)
            with running(Worker({kind: lambda i, c: c.node_id}, url=proxy.url, concurrency=1)):
                run = self.api.wait_run(run_id)
        self.assertEqual(len(run["tasks"]), 6)
        reports = [x for x in proxy.exchanges if x.path == "/v1/tasks/report"]
        self.assertTrue(all(x.request["next"] == {"task_types": [kind], "max": 1} for x in reports))
        handed = sum(len(x.response["tasks"]) for x in reports)
        self.assertGreater(handed, 0, "no report answer carried a next task")


if __name__ == "__main__":
    unittest.main()
