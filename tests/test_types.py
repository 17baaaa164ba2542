"""The type check the suite runs: mypy over models/ and retrieval/ with pyproject's ``[tool.mypy]`` settings finds
nothing. Its incremental cache (``runs/mypy_cache``) keeps a rerun to about a second; a cold run takes about 30 s."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None,
                    reason="mypy is not installed (a dev dependency: pip install -e '.[dev]')")
def test_models_and_retrieval_type_check():
    done = subprocess.run([sys.executable, "-m", "mypy"], cwd=REPO, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
