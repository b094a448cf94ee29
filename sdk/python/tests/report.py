"""Runs test modules and prints, as the last line of stdout, a JSON summary another program can read:
``python3 -m tests.report tests.test_runs`` (the Vitest suite runs the SDK's tests this way)."""

from __future__ import annotations

import json
import sys
import unittest


def main(names: list) -> int:
    suite = unittest.defaultTestLoader.loadTestsFromNames(names)
    result = unittest.TextTestRunner(stream=sys.stderr, verbosity=2).run(suite)
    summary = {
        "ran": result.testsRun,
        "skipped": [[test.id(), reason] for test, reason in result.skipped],
        "failed": [[test.id(), trace] for test, trace in result.failures + result.errors],
    }
    print(json.dumps(summary), flush=True)
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
