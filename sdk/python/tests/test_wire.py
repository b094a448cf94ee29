"""The protocol's messages, without a server."""

from __future__ import annotations

import json
import math
import unittest

from weft_worker import IdempotencyKeyMissing, TaskContext, TerminalError
from weft_worker.wire import (
    MAX_BATCH_BYTES,
    MAX_ITEMS_SENT,
    completed,
    failed,
    first_batch,
    parse_task,
    refused_by_server,
    report_body,
)

RAW = {
    "task_id": "00000000-0000-4000-8000-000000000001",
    "run_id": "00000000-0000-4000-8000-000000000002",
    "node_id": "charge",
    "iteration": "",
    "attempt": 2,
    "task_type": "payments.charge",
    "definition": "order",
    "input": {"amount": 42},
    "lease_token": "00000000-0000-4000-8000-000000000003",
    "lease_expires_at": "2030-01-01T00:00:00.000Z",
    "deadline_at": None,
}
TASK = parse_task(RAW)


class ParseTest(unittest.TestCase):
    def test_a_leased_task_is_read_field_by_field(self) -> None:
        ctx = TaskContext(parse_task({**RAW, "context": {"tenant": "acme"}, "idempotency_key": "k-1"}))
        self.assertEqual(
            (ctx.run_id, ctx.task_id, ctx.node_id, ctx.iteration, ctx.attempt, ctx.task_type, ctx.definition),
            (RAW["run_id"], RAW["task_id"], "charge", "", 2, "payments.charge", "order"),
        )
        self.assertEqual(ctx.context, {"tenant": "acme"})
        self.assertEqual(ctx.idempotency_key, "k-1")
        self.assertFalse(ctx.cancelled.is_set())

    def test_an_absent_idempotency_key_is_said_not_invented(self) -> None:
        ctx = TaskContext(TASK)
        with self.assertRaises(IdempotencyKeyMissing) as caught:
            ctx.idempotency_key
        self.assertIn(f"did not send idempotency_key with task {RAW['task_id']}", str(caught.exception))
        self.assertEqual(caught.exception.code, "idempotency_key_missing")

    def test_the_trace_context_is_passed_on_as_sent(self) -> None:
        traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        self.assertEqual(TaskContext(parse_task({**RAW, "traceparent": traceparent})).traceparent, traceparent)
        self.assertIsNone(TaskContext(TASK).traceparent)

    def test_a_task_missing_what_a_report_needs_is_refused_by_name(self) -> None:
        for field, value in (("lease_token", None), ("attempt", "2"), ("attempt", True), ("task_id", 7)):
            raw = {**RAW, field: value}
            with self.assertRaisesRegex(ValueError, f"has no valid {field}"):
                parse_task(raw)
        with self.assertRaisesRegex(ValueError, "not an object"):
            parse_task(["x"])


class ReportTest(unittest.TestCase):
    def test_an_output_is_reported_with_the_lease_and_the_node(self) -> None:
        body = json.loads(completed(TASK, {"ok": [1, "two", None, 3.5]}).encoded)
        self.assertEqual(
            body,
            {
                "run_id": RAW["run_id"],
                "task_id": RAW["task_id"],
                "attempt": 2,
                "lease_token": RAW["lease_token"],
                "node_id": "charge",
                "iteration": "",
                "output": {"ok": [1, "two", None, 3.5]},
            },
        )
        self.assertIsNone(json.loads(completed(TASK, None).encoded)["output"])

    def test_an_output_json_cannot_hold_fails_the_task_naming_where(self) -> None:
        loop: dict = {}
        loop["self"] = loop
        cases = [
            ({"when": object()}, "output.when is of type object"),
            ({"a": [1, {"b": {1, 2}}]}, "output.a[1].b is of type set"),
            ({"x": math.nan}, "output.x is nan"),
            ([math.inf], "output[0] is inf"),
            ({(1, 2): "tuple key"}, "output has a key of type tuple"),
            (loop, "output.self contains itself"),
            (b"bytes", "output is of type bytes"),
        ]
        for value, where in cases:
            report = completed(TASK, value)
            error = json.loads(report.encoded)["error"]
            self.assertTrue(report.failed)
            self.assertFalse(error["retryable"])
            self.assertEqual(error["type"], "OutputNotJson")
            self.assertIn(where, error["message"])
            self.assertTrue(error["message"].startswith("the handler's output cannot be sent as JSON"))

    def test_any_exception_is_retryable_and_a_terminal_error_is_not(self) -> None:
        try:
            raise KeyError("missing")
        except KeyError as e:
            plain = json.loads(failed(TASK, e).encoded)["error"]
        self.assertEqual(
            (plain["message"], plain["type"], plain["retryable"]), ("'missing'", "KeyError", True)
        )
        self.assertIn("raise KeyError", plain["stack"])
        terminal = json.loads(failed(TASK, TerminalError("declined", {"code": 51})).encoded)["error"]
        self.assertEqual((terminal["retryable"], terminal["details"]), (False, {"code": 51}))
        odd = json.loads(failed(TASK, TerminalError("declined", {"at": object()})).encoded)["error"]
        self.assertNotIn("details", odd)
        self.assertIn("its details were left out", odd["message"])
        self.assertEqual(json.loads(failed(TASK, ValueError()).encoded)["error"]["message"], "ValueError")

    def test_a_report_the_server_refused_becomes_a_failure_saying_why(self) -> None:
        error = json.loads(refused_by_server(TASK, "body too large").encoded)["error"]
        self.assertEqual(error["message"], "the server refused this task's report: body too large")
        self.assertFalse(error["retryable"])


class BatchTest(unittest.TestCase):
    def test_batches_hold_at_most_a_thousand_reports(self) -> None:
        reports = [completed(TASK, i) for i in range(MAX_ITEMS_SENT + 5)]
        self.assertEqual(len(first_batch(reports)), MAX_ITEMS_SENT)
        self.assertEqual(len(first_batch(reports[MAX_ITEMS_SENT:])), 5)

    def test_batches_stay_under_the_byte_limit_and_a_large_report_goes_alone(self) -> None:
        big = completed(TASK, "x" * (MAX_BATCH_BYTES // 3))
        self.assertEqual(len(first_batch([big, big, big, big])), 2)
        huge = completed(TASK, "x" * (MAX_BATCH_BYTES + 10))
        self.assertEqual(len(first_batch([huge, big])), 1)
        self.assertEqual(len(first_batch([big, huge])), 1)

    def test_a_report_marked_alone_goes_in_a_request_of_its_own(self) -> None:
        from dataclasses import replace

        a, b = completed(TASK, 1), replace(completed(TASK, 2), alone=True)
        self.assertEqual(first_batch([a, b, a]), [a])
        self.assertEqual(first_batch([b, a]), [b])

    def test_the_report_body_asks_for_next_tasks_only_when_there_is_room(self) -> None:
        reports = [completed(TASK, 1), failed(TASK, RuntimeError("no"))]
        body = json.loads(report_body("w-1", reports, ["a", "b"], 3))
        self.assertEqual(body["worker"], "w-1")
        self.assertEqual(body["next"], {"task_types": ["a", "b"], "max": 3})
        self.assertEqual(
            [("output" in r, "error" in r) for r in body["reports"]], [(True, False), (False, True)]
        )
        self.assertNotIn("next", json.loads(report_body("w-1", reports, ["a"], 0)))


if __name__ == "__main__":
    unittest.main()
