"""The errors the SDK raises, and the one a handler raises to fail its task for good."""

from __future__ import annotations

from typing import Any, Optional


class TerminalError(Exception):
    """Raise this from a handler to fail the task without retrying it (a declined card, an invalid order).

    Any other exception fails the attempt, and Weft retries the task by the node's retry policy.
    ``details`` (any JSON value) is recorded with the failure.
    """

    def __init__(self, message: str, details: Any = None) -> None:
        super().__init__(message)
        self.details = details


class WeftError(Exception):
    """A problem the SDK reports, with a stable ``code`` and a message that says what to do."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class WeftConnectionError(WeftError):
    """The server could not be reached: nothing listens there, the name does not resolve, TLS failed, or
    the request timed out."""

    def __init__(self, message: str, cause: Optional[BaseException] = None) -> None:
        super().__init__("unreachable", message)
        self.cause = cause


class WeftApiError(WeftError):
    """The server answered with an error: ``status`` is the HTTP status, ``code`` the server's error code."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(code, message)
        self.status = status


class IdempotencyKeyMissing(WeftError):
    """The server did not send ``idempotency_key`` with the task.

    A handler reading ``ctx.idempotency_key`` gets this instead of a made-up key. It is an ordinary
    (retryable) error: during a rolling upgrade the next attempt may be leased from a server that sends it.
    """

    def __init__(self, task_id: str) -> None:
        super().__init__(
            "idempotency_key_missing",
            f"the Weft server did not send idempotency_key with task {task_id}: upgrade the server to a "
            "version that sends it; until then there is no stable key to hand to a payment provider",
        )
