"""The worker protocol's messages: leased tasks as the server sends them, and reports as it takes them."""

from __future__ import annotations

import json
import math
import traceback
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Set, Tuple

from .errors import TerminalError

# What one request may carry, as the server's request schemas say.
MAX_TASKS_ASKED = 500
MAX_ITEMS_SENT = 1000
# A report batch stays well under the server's smallest body limit (8 MB); one larger report goes alone.
MAX_BATCH_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class LeasedTask:
    """A task leased to this worker, as ``/v1/tasks/poll`` and ``/v1/tasks/report`` hand it over."""

    task_id: str
    run_id: str
    node_id: str
    iteration: str
    attempt: int
    task_type: str
    definition: str
    input: Any
    lease_token: str
    lease_expires_at: Optional[str]
    deadline_at: Optional[str]
    context: Any
    idempotency_key: Optional[str]
    has_context: bool
    traceparent: Optional[str] = None


REQUIRED = ("task_id", "run_id", "attempt", "lease_token", "task_type")


def parse_task(raw: Any) -> LeasedTask:
    """Reads one leased task; raises ``ValueError`` naming the field when a field needed to run or report it
    is missing or has the wrong type."""
    if not isinstance(raw, dict):
        raise ValueError(f"a leased task is not an object: {raw!r:.200}")
    for name in REQUIRED:
        value = raw.get(name)
        ok = (
            isinstance(value, int) and not isinstance(value, bool)
            if name == "attempt"
            else isinstance(value, str)
        )
        if not ok:
            raise ValueError(
                f"a leased task has no valid {name} ({value!r:.100}): the server speaks another protocol"
            )
    key = raw.get("idempotency_key")
    trace = raw.get("traceparent")
    return LeasedTask(
        task_id=raw["task_id"],
        run_id=raw["run_id"],
        node_id=str(raw.get("node_id", "")),
        iteration=str(raw.get("iteration", "")),
        attempt=raw["attempt"],
        task_type=raw["task_type"],
        definition=str(raw.get("definition", "")),
        input=raw.get("input"),
        lease_token=raw["lease_token"],
        lease_expires_at=raw.get("lease_expires_at"),
        deadline_at=raw.get("deadline_at"),
        context=raw.get("context"),
        idempotency_key=key if isinstance(key, str) and key else None,
        has_context="context" in raw,
        traceparent=trace if isinstance(trace, str) and trace else None,
    )


def lease_of(task: LeasedTask) -> Dict[str, Any]:
    """What names the task's lease in heartbeats and reports."""
    return {
        "run_id": task.run_id,
        "task_id": task.task_id,
        "attempt": task.attempt,
        "lease_token": task.lease_token,
    }


@dataclass(frozen=True)
class Report:
    """One task's outcome, already encoded as JSON: a value that cannot be encoded never reaches a batch."""

    task: LeasedTask
    failed: bool
    encoded: str
    # Sent in a request of its own (after the server refused a batch holding it).
    alone: bool = False
    # Already the failure that replaced a report the server refused.
    replaced: bool = False


def completed(task: LeasedTask, output: Any) -> Report:
    """The report of a handler that returned ``output``; an output that cannot be sent as JSON fails the
    task (not retryable: the same handler would return the same value again), naming where it is."""
    problem = unencodable(output, "output")
    if problem is not None:
        error = {
            "message": f"the handler's output cannot be sent as JSON: {problem}",
            "type": "OutputNotJson",
        }
        return _encode(task, {"error": {**error, "retryable": False}}, True)
    return _encode(task, {"output": output}, False)


def failed(task: LeasedTask, error: BaseException) -> Report:
    """The report of a handler that raised ``error``: retryable unless it is a :class:`TerminalError`."""
    terminal = isinstance(error, TerminalError)
    details = error.details if isinstance(error, TerminalError) else None
    body: Dict[str, Any] = {
        "message": _text(error) or type(error).__name__,
        "type": type(error).__name__,
        "stack": _stack(error),
        "retryable": not terminal,
    }
    if details is not None:
        problem = unencodable(details, "details")
        if problem is None:
            body["details"] = details
        else:
            body["message"] += f" (its details were left out: they cannot be sent as JSON: {problem})"
    return _encode(task, {"error": body}, True)


def refused_by_server(task: LeasedTask, message: str) -> Report:
    """What replaces a report the server refused as a request (it is too large, or malformed): a failure
    saying why, so the task does not wait for its lease to run out."""
    error = {"message": f"the server refused this task's report: {message}", "type": "ReportRefused"}
    return _encode(task, {"error": {**error, "retryable": False}}, True)


def _encode(task: LeasedTask, outcome: Dict[str, Any], is_failure: bool) -> Report:
    body = {**lease_of(task), "node_id": task.node_id, "iteration": task.iteration, **outcome}
    return Report(task, is_failure, json.dumps(body, allow_nan=False, separators=(",", ":")))


def unencodable(value: Any, path: str) -> Optional[str]:
    """Where and why ``value`` cannot be sent as JSON, or None when it can."""
    try:
        json.dumps(value, allow_nan=False)
        return None
    except (TypeError, ValueError, RecursionError) as e:
        try:
            return _find(value, path, set()) or str(e)
        except RecursionError:
            return f"{path} is nested too deeply"


def _find(value: Any, path: str, seen: Set[int]) -> Optional[str]:
    if value is None or isinstance(value, (str, bool, int)):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{path} is {value}, which JSON cannot hold"
    if not isinstance(value, (dict, list, tuple)):
        return (
            f"{path} is of type {type(value).__name__}, which JSON cannot hold: "
            "return dicts, lists, text, numbers, booleans or None"
        )
    if id(value) in seen:
        return f"{path} contains itself"
    seen.add(id(value))
    items: List[Tuple[str, Any]]
    if isinstance(value, dict):
        for key in value:
            if not isinstance(key, (str, int, float, bool)) and key is not None:
                return f"{path} has a key of type {type(key).__name__}: use text keys"
        items = [(f"{path}.{key}", item) for key, item in value.items()]
    else:
        items = [(f"{path}[{i}]", item) for i, item in enumerate(value)]
    for where, item in items:
        found = _find(item, where, seen)
        if found:
            return found
    seen.discard(id(value))
    return None


def first_batch(reports: List[Report]) -> List[Report]:
    """The reports that go in the next request: at most 1,000 and about ``MAX_BATCH_BYTES`` (a larger report
    goes alone), and a report marked ``alone`` by itself."""
    size = 0
    for i, report in enumerate(reports):
        size += len(report.encoded) + 1
        if report.alone:
            return reports[: max(i, 1)]
        if i == MAX_ITEMS_SENT or (i > 0 and size > MAX_BATCH_BYTES):
            return reports[:i]
    return list(reports)


def report_body(worker: str, batch: List[Report], types: List[str], want: int) -> bytes:
    """The body of ``POST /v1/tasks/report``; with ``want`` above zero it asks for that many next tasks."""
    nxt = f',"next":{json.dumps({"task_types": types, "max": want})}' if want > 0 else ""
    reports = ",".join(r.encoded for r in batch)
    return f'{{"worker":{json.dumps(worker)},"reports":[{reports}]{nxt}}}'.encode()


def _stack(error: BaseException) -> str:
    try:
        return "".join(traceback.format_exception(type(error), error, error.__traceback__))
    except Exception:  # a traceback that cannot be formatted must not keep the task from failing
        return ""


def _text(error: BaseException) -> str:
    try:
        return str(error)
    except Exception:  # an exception whose __str__ fails still fails its task, by its type's name
        return ""
