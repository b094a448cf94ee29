"""A worker process for tests/test_process.py: its handler says when it starts, then holds its task until
the file named by RELEASE exists or the task is cancelled. No logging set up: Python's defaults apply."""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

from weft_worker import Worker  # noqa: E402


def held(input, ctx):
    print(f"started {ctx.task_id}", flush=True)
    end = time.monotonic() + 60
    while not os.path.exists(os.environ["RELEASE"]) and time.monotonic() < end:
        if ctx.cancelled.wait(0.02):
            return {"released": False, "reason": ctx.cancel_reason}
    return {"released": True}


Worker({os.environ["TASK_TYPE"]: held}, stop_timeout=float(os.environ.get("STOP_TIMEOUT", "30"))).run()
print("exited cleanly", flush=True)
