"""The walkthrough notebook runs end to end (tiny models, a fake LLM, tiny data), so it never rots."""

from pathlib import Path

import nbformat
from ctbls_fixtures import write_checkpoints, write_tiny_ottqa
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "walkthrough.ipynb"

# Replaces the notebook's parameters cell: tiny checkpoints and data, and a fake LLM defined in place.
PARAMETERS = '''
from retrieval.llm import GenerationResult

class EchoLLM:
    name, identity = "fake", "fake:echo"
    def count_tokens(self, text):
        return len(text.split())
    def generate(self, conversations, **kwargs):
        return [GenerationResult("answer from: " + c[-1]["content"].splitlines()[-1], True, None, 0.0, "fake", "fake")
                for c in conversations]

DTR, TRACKER, LLM, DATA, SPLIT, TURNS, K = {dtr!r}, {tracker!r}, EchoLLM(), {data!r}, "test", 2, 2
CACHE_DIR = {cache!r}
'''


def test_walkthrough_notebook_executes(tiny_backbone, tmp_path):
    data = write_tiny_ottqa(tmp_path / "ottqa")
    dtr, tracker = write_checkpoints(tiny_backbone, tmp_path)
    nb = nbformat.read(NOTEBOOK, as_version=4)
    params = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(params) == 1, "the notebook needs exactly one cell tagged 'parameters'"
    sys_path = f"import sys; sys.path.insert(0, {str(NOTEBOOK.parents[1])!r})\n"
    params[0].source = sys_path + PARAMETERS.format(dtr=str(dtr), tracker=str(tracker), data=str(data),
                                                      cache=str(tmp_path / "cache"))
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    out = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
    assert "--- turn 2" in out and "answer from: Query:" in out and "[user]" in out
