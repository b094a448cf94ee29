"""The SDK is a package of its own that needs nothing beyond Python's standard library."""

from __future__ import annotations

import ast
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import unittest
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(ROOT, "weft_worker")


def setuptools_major() -> int:
    """The installed setuptools' major version, 0 when there is none."""
    try:
        from importlib.metadata import version

        return int(version("setuptools").split(".")[0])
    except Exception:
        return 0


# pyproject.toml's [project] table needs setuptools 61 or later (the build backend it names).
HAS_SETUPTOOLS = setuptools_major() >= 61
HAS_WHEEL = importlib.util.find_spec("wheel") is not None


def standard(name: str) -> bool:
    """Whether a top-level module comes with Python itself."""
    spec = importlib.util.find_spec(name)
    if spec is None:
        return False
    if spec.origin in (None, "built-in", "frozen"):
        return True
    paths = sysconfig.get_paths()
    where = os.path.realpath(spec.origin)
    inside = [os.path.realpath(paths[k]) for k in ("stdlib", "platstdlib")]
    return any(where.startswith(p + os.sep) for p in inside) and "site-packages" not in where


class PackagingTest(unittest.TestCase):
    def test_every_import_is_of_the_standard_library_or_the_package_itself(self) -> None:
        outside = []
        for file in sorted(os.listdir(PACKAGE)):
            if not file.endswith(".py"):
                continue
            with open(os.path.join(PACKAGE, file)) as f:
                tree = ast.parse(f.read(), file, feature_version=(3, 9))
            for node in ast.walk(tree):
                names = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0:
                    names = [node.module or ""]
                outside += [
                    f"{file}: {n}" for n in names if n != "__future__" and not standard(n.split(".")[0])
                ]
        self.assertEqual(outside, [])

    def test_the_sources_parse_as_python_3_9(self) -> None:
        for folder in (PACKAGE, os.path.join(ROOT, "tests"), os.path.join(ROOT, "examples")):
            for file in sorted(os.listdir(folder)):
                if file.endswith(".py"):
                    with open(os.path.join(folder, file)) as f:
                        ast.parse(f.read(), file, feature_version=(3, 9))

    @unittest.skipUnless(
        HAS_SETUPTOOLS, "needs setuptools 61 or later (the build backend pyproject.toml names) to build"
    )
    def test_the_source_distribution_declares_no_dependencies(self) -> None:
        work = tempfile.mkdtemp(prefix="weft-sdist-")
        try:
            source = os.path.join(work, "src")
            shutil.copytree(
                ROOT, source, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "dist")
            )
            out = os.path.join(work, "out")
            os.mkdir(out)
            # Each build in a process of its own (as a build frontend runs them), and what it made found by
            # name: a build may print its progress on stdout too.
            names = []
            for kind, suffix in (("sdist", ".tar.gz"), ("wheel", ".whl")):
                if kind == "wheel" and not HAS_WHEEL:
                    continue
                build = f"import sys; from setuptools import build_meta as b; b.build_{kind}(sys.argv[1])"
                done = subprocess.run(
                    [sys.executable, "-c", build, out], cwd=source, capture_output=True, text=True
                )
                self.assertEqual(done.returncode, 0, done.stderr)
                made = [n for n in os.listdir(out) if n.endswith(suffix)]
                self.assertEqual(len(made), 1, f"{kind}: {os.listdir(out)}\n{done.stdout[-2000:]}")
                names += made
            with tarfile.open(os.path.join(out, names[0])) as sdist:
                members = sdist.getnames()
                info = sdist.extractfile(next(m for m in members if m.endswith("/PKG-INFO"))).read().decode()
            self.assertIn("Requires-Python: >=3.9", info)
            self.assertNotIn("Requires-Dist", info)
            self.assertIn("Name: weft-worker", info)
            for module in ("worker.py", "wire.py", "py.typed"):
                self.assertTrue(any(m.endswith(f"weft_worker/{module}") for m in members), module)
            if HAS_WHEEL:
                with zipfile.ZipFile(os.path.join(out, names[1])) as wheel:
                    self.assertIn("weft_worker/py.typed", wheel.namelist())
                    self.assertFalse(any(n.startswith("tests/") for n in wheel.namelist()))
        finally:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
