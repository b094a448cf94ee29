"""Worker processes: signals stop them gracefully (then hard), and problems reach stderr by default."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import unittest

from .support import SERVER, Api, needs_server, unique
from .test_connection import closed_port

HERE = os.path.dirname(__file__)
SCRIPT = os.path.join(HERE, "scripts", "held_worker.py")


def spawn(url: str, task_type: str, release: str, stop_timeout: float = 30) -> subprocess.Popen:
    env = {
        **os.environ,
        "WEFT_URL": url,
        "TASK_TYPE": task_type,
        "RELEASE": release,
        "STOP_TIMEOUT": str(stop_timeout),
    }
    return subprocess.Popen(
        [sys.executable, SCRIPT], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


class ProcessTest(unittest.TestCase):
    def test_a_worker_that_cannot_reach_its_server_exits_with_the_reason(self) -> None:
        url = f"http://127.0.0.1:{closed_port()}"
        env = {**os.environ, "WEFT_URL": url, "TASK_TYPE": "t", "RELEASE": "/nowhere"}
        # connect_timeout is an option, not an environment variable: a wrapper sets it to one second.
        wrapper = (
            "import os, sys; sys.path.insert(0, os.getcwd()); from weft_worker import Worker; "
            "Worker({'t': print}, connect_timeout=1).run()"
        )
        done = subprocess.run(
            [sys.executable, "-c", wrapper],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            cwd=os.path.join(HERE, ".."),
        )
        self.assertNotEqual(done.returncode, 0)
        self.assertIn(
            f"WeftConnectionError: could not reach the Weft server at {url} within 1 s", done.stderr
        )


@needs_server
class SignalsTest(unittest.TestCase):
    def setUp(self) -> None:
        self.api = Api()
        self.name, self.kind = unique("py_proc"), unique("py.proc")
        self.api.deploy(f"name: {self.name}\nnodes:\n  - {{ id: a, task_type: {self.kind} }}\n")
        self.release = os.path.join(tempfile.mkdtemp(prefix="weft-release-"), "go")

    def test_sigterm_lets_the_running_handler_finish_and_delivers_its_report(self) -> None:
        run_id = self.api.start(self.name)
        proc = spawn(SERVER, self.kind, self.release)
        try:
            self.assertTrue(proc.stdout.readline().startswith("started "))
            proc.send_signal(signal.SIGTERM)
            # Logged through Python's default logging, before the stop begins.
            self.assertIn("stopping: 1 handler(s) may finish within 30 s", proc.stderr.readline())
            self.assertIsNone(proc.poll())
            self.assertEqual(self.api.task(run_id, "a")["status"], "running")
            open(self.release, "w").close()
            out, err = proc.communicate(timeout=60)
        finally:
            proc.kill()
        self.assertEqual(proc.returncode, 0, err)
        self.assertIn("exited cleanly", out)
        self.assertEqual(self.api.wait_run(run_id)["output"], {"a": {"released": True}})

    def test_a_second_signal_aborts_the_running_handler(self) -> None:
        run_id = self.api.start(self.name)
        proc = spawn(SERVER, self.kind, self.release)
        try:
            self.assertTrue(proc.stdout.readline().startswith("started "))
            proc.send_signal(signal.SIGTERM)
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=60)
        finally:
            proc.kill()
        self.assertEqual(proc.returncode, 0, err)
        self.assertIn("stopping hard: setting ctx.cancelled of 1 handler(s)", err)
        run = self.api.wait_run(run_id)
        self.assertEqual(run["output"], {"a": {"released": False, "reason": "the worker is stopping"}})


if __name__ == "__main__":
    unittest.main()
