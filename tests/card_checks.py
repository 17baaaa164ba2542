"""Checks of a model folder's README.md card: its front matter as the hub reads it, and its usage snippets run as
written, their embeddings compared with DualEncoder's.

Imported by the training tests (``from card_checks import check_card``; pytest puts ``tests/`` on the path).
"""

from __future__ import annotations

import json
import os
import re
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import yaml
from huggingface_hub import ModelCard

from models.dual_encoder import DualEncoder


def front_matter(card: str) -> dict:
    """The YAML between the card's opening ``---`` lines."""
    match = re.match(r"---\n(.*?)\n---\n", card, re.S)
    assert match, "the card does not open with YAML front matter"
    return yaml.safe_load(match.group(1))


def python_blocks(card: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", card, re.S)


@contextmanager
def working_directory(path: Path):
    old = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def model_index_metrics(meta: dict) -> dict[str, float]:
    results = meta["model-index"][0]["results"][0]
    assert results["task"]["type"] and results["dataset"]["name"] and results["dataset"]["type"]
    return {m["type"]: m["value"] for m in results["metrics"]}


def check_card(folder: Path, cwd: Path, record: dict | None, datasets: list[str], shared: bool = True) -> dict:
    """Check ``folder``'s card (its model is the one of epoch ``record``) and run its snippets from ``cwd``, the
    folder training ran in; returns the front matter."""
    card = (folder / "README.md").read_text(encoding="utf-8")
    meta = front_matter(card)
    assert meta["library_name"] == "sentence-transformers" and meta["pipeline_tag"] == "sentence-similarity"
    assert {"sentence-transformers", "sentence-similarity", "ctbls"} <= set(meta["tags"])
    assert meta["datasets"] == datasets and meta["language"] == "en"
    if record is not None:
        metrics = model_index_metrics(meta)
        assert metrics == {k: round(v, 4) for k, v in record.items() if isinstance(v, float) and k != "loss"}
        hub = ModelCard(card).data  # the hub's own parser reads the same results
        assert {r.metric_type: r.metric_value for r in hub.eval_results} == metrics
        assert hub.library_name == "sentence-transformers"
        assert f"| {record['epoch'] + 1} (this model) | {record['step']} |" in card
    config = Path(folder.parent if folder.name == "last" else folder, "config.yaml").read_text()
    assert "```yaml\n" + config.strip() + "\n```" in card  # the training config, as the run wrote it

    sentence_transformers, ours = python_blocks(card)
    assert ("query_encoder" in sentence_transformers) != shared
    namespace: dict = {}
    with working_directory(cwd):
        exec(sentence_transformers, namespace)  # as written: the folder by the path the run was given
        st_queries, st_documents = namespace["query_embeddings"], namespace["document_embeddings"]
        exec(ours, namespace)
    encoder = DualEncoder.from_pretrained(folder)
    queries, documents = namespace["queries"], namespace["documents"]
    assert len(documents) >= 2
    np.testing.assert_allclose(st_queries, encoder.encode_queries(queries), atol=1e-5)
    np.testing.assert_allclose(st_documents, encoder.encode_documents(documents), atol=1e-5)
    np.testing.assert_allclose(namespace["query_embeddings"], st_queries, atol=1e-5)
    if not shared:  # the towers differ after training: the snippet must use each on its side
        assert not np.allclose(encoder.encode_documents(queries), encoder.encode_queries(queries), atol=1e-4)
    return meta


def epoch_records(run: Path) -> tuple[dict, dict]:
    """(the kept model's record, the last record) of a finished run."""
    results = json.loads((run / "all_results.json").read_text())
    epochs = results["epochs"]
    best = max(epochs, key=lambda r: r["mrr@10"])
    return best, epochs[-1]
