"""A worker SDK for Weft, the durable workflow engine: Python standard library only.

    from weft_worker import Worker

    def charge(input, ctx):
        return {"charged": input["amount"]}

    Worker({"payments.charge": charge}, url="http://127.0.0.1:8080").run()
"""

from .context import TaskContext
from .errors import IdempotencyKeyMissing, TerminalError, WeftApiError, WeftConnectionError, WeftError
from .state import WorkerStats
from .version import __version__
from .worker import Handler, Worker

__all__ = [
    "Handler",
    "IdempotencyKeyMissing",
    "TaskContext",
    "TerminalError",
    "WeftApiError",
    "WeftConnectionError",
    "WeftError",
    "Worker",
    "WorkerStats",
    "__version__",
]
