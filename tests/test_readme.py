"""The examples of README.md and docs/*.md: each has a check in tests/readme_examples.py, and (slow) each runs as
written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import readme_examples as rx

REPO = Path(__file__).resolve().parents[1]


def test_every_readme_example_has_exactly_one_check():
    found = [(e, rx.check_of(e)) for e in rx.all_examples()]
    assert len(found) > 30
    modes = {c.mode for _, c in found}
    assert modes == {"run", "parse", "skip"}
    assert all(c.reason for _, c in found if c.mode != "run")  # nothing is left out without saying why
    assert all(c.verify for _, c in found if c.mode == "run")  # exit code 0 alone is not a check


def test_examples_are_cut_as_a_shell_reads_them():
    text = "```bash\nE=\"python -m eval.x --a 1\"\n$E --b 2   # note\npython -m m \\\n    --c 3 [--d D]\n" \
           "  [--e E]\n```\n```python\nx = 1\ny = 2\n```\n"
    bash = rx.examples(text)
    assert [(e.lang, e.line, e.text) for e in bash] == [
        ("bash", 2, 'E="python -m eval.x --a 1"'), ("bash", 3, "$E --b 2   # note"),
        ("bash", 4, "python -m m --c 3 [--d D]"), ("synopsis", 6, "[--e E]"), ("python", 9, "x = 1\ny = 2")]
    assert bash[1].assignments == ('E="python -m eval.x --a 1"',)
    assert rx.parse_argv(bash[1])[-5:] == ["eval.x", "--a", "1", "--b", "2"]
    assert rx.parse_argv(bash[2])[-3:] == ["m", "--c", "3"]
    assert rx.runnable("python -m eval.retrieval --dtr runs/dtr [--split test] [--bf16] --output o.json") == \
        "python -m eval.retrieval --dtr runs/dtr --output o.json"


@pytest.mark.slow
def test_readme_examples_run_as_written(data_dir):
    """Every runnable README example, on the packaged models (and runs/dtr when trained); tens of minutes."""
    done = subprocess.run([sys.executable, "tests/readme_examples.py"], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    assert " 0 FAILED" in done.stdout
