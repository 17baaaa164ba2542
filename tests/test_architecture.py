"""The architecture as rules the suite checks: import layers, short files, short functions."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("models", "retrieval", "train", "eval", "benchmarks", "experiments", "ctbls")
MAX_FILE_LINES = 400
MAX_FUNCTION_LINES = 80


def _sources() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (REPO / pkg).rglob("*.py"))


def test_import_contracts_hold():
    """``lint-imports`` over pyproject's contracts: layers one way, no cycles inside retrieval/'s sub-packages or
    among the commands' modules (eval/, train/, benchmarks/, experiments/)."""
    lint = Path(sys.executable).with_name("lint-imports")
    if not lint.exists():
        pytest.fail("import-linter is not installed (it is a dev dependency: make setup)")
    done = subprocess.run([str(lint), "--no-cache"], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]


def test_no_source_file_over_the_limit():
    long = {str(p.relative_to(REPO)): n for p in _sources() if (n := len(p.read_text().splitlines())) > MAX_FILE_LINES}
    assert not long, f"files over {MAX_FILE_LINES} lines: {long}"


def test_no_function_over_the_limit():
    long = []
    for path in _sources():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(REPO)}:{node.lineno} {node.name} ({n} lines)")
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines: {long}"


def _lint_with(tmp_path, files: dict[str, str]) -> subprocess.CompletedProcess:
    """``lint-imports`` over a copy of the packages with ``files`` (path -> source) added."""
    import shutil

    copy = tmp_path / "repo"
    for name in (*PACKAGES, "pyproject.toml"):
        src = REPO / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, copy / name)
    for path, source in files.items():
        (copy / path).write_text(source)
    lint = Path(sys.executable).with_name("lint-imports")
    return subprocess.run([str(lint), "--no-cache"], cwd=copy, capture_output=True, text=True,
                          env={"PYTHONPATH": str(copy), "PATH": ""})


def test_contract_catches_a_back_edge(tmp_path):
    """The layers contract is not vacuous: a models/ module importing retrieval/ breaks it."""
    done = _lint_with(tmp_path, {"models/back_edge.py": "import retrieval.data.types  # noqa: F401\n"})
    assert done.returncode != 0 and "models.back_edge -> retrieval.data.types" in done.stdout


def test_contract_catches_a_cycle_among_the_commands(tmp_path):
    """The commands' no-cycle contract is not vacuous: two eval/ modules importing each other break it."""
    done = _lint_with(tmp_path, {"eval/cycle_a.py": "import eval.cycle_b  # noqa: F401\n",
                                 "eval/cycle_b.py": "import eval.cycle_a  # noqa: F401\n"})
    assert done.returncode != 0 and "No cycles are allowed in eval" in done.stdout and ".cycle_a" in done.stdout
