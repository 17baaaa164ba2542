"""Writes that survive being stopped: files appear whole or not at all, a corrupt cache entry is rebuilt, and a
trend report's folder is replaced whole."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

import retrieval.trends.report as trend_report
from models.dual_encoder import DualEncoder
from retrieval import atomic
from retrieval.data.jsonio import DataError
from retrieval.search import dense_index
from retrieval.search.dense_index import DenseIndex
from retrieval.search.embedding_cache import cache_path, cached_document_embeddings

TEXTS = ["a table about rivers", "a table about films", "football squads"]


def leftovers(folder: Path) -> list[str]:
    """Temporary and staging names left in ``folder``."""
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


# ---- one file --------------------------------------------------------------------------------------------
def test_a_write_stopped_midway_leaves_the_old_file(tmp_path):
    path = atomic.write_text(tmp_path / "report.json", '{"old": 1}')

    def stopped(partial: Path) -> None:
        partial.write_text('{"new": ')
        raise KeyboardInterrupt  # a kill between the first bytes and the last

    with pytest.raises(KeyboardInterrupt):
        atomic.save_with(stopped, path)
    assert path.read_text() == '{"old": 1}' and not leftovers(tmp_path)
    atomic.write_json(path, {"new": 2}, indent=2)
    assert path.read_text() == '{\n  "new": 2\n}' and not leftovers(tmp_path)


def test_a_library_writer_gets_a_name_with_the_suffix(tmp_path):
    path = atomic.save_with(lambda partial: np.save(partial, np.arange(3)), tmp_path / "sub" / "x.npy")
    assert np.array_equal(np.load(path), np.arange(3)) and [p.name for p in path.parent.iterdir()] == ["x.npy"]


# ---- the embedding cache ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def encoder(tiny_backbone):
    return DualEncoder.from_backbone(tiny_backbone)


@pytest.mark.parametrize("damage", ["truncated", "empty", "wrong shape"])
def test_a_corrupt_cache_entry_is_rebuilt(encoder, tmp_path, caplog, damage):
    fresh = cached_document_embeddings(encoder, TEXTS, tmp_path, show_progress_bar=False)
    path = cache_path(encoder, TEXTS, tmp_path)
    if damage == "wrong shape":
        np.save(path, fresh[:2])
    else:
        path.write_bytes(path.read_bytes()[: 0 if damage == "empty" else 100])  # a run killed mid-write
    with caplog.at_level(logging.WARNING, logger="retrieval.search.embedding_cache"):
        again = cached_document_embeddings(encoder, TEXTS, tmp_path, show_progress_bar=False)
    assert np.array_equal(again, fresh)  # the same numbers as without the cache
    assert f"{path}: " in caplog.text and "discarding it and encoding again" in caplog.text
    assert np.array_equal(np.load(path), fresh) and not leftovers(tmp_path)  # rebuilt in place
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        cached_document_embeddings(encoder, TEXTS, tmp_path, show_progress_bar=False)
    assert not caplog.text  # the rebuilt entry is read without complaint


def test_an_empty_cache_dir_means_no_cache(encoder, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # '' once meant the working directory: --cache-dir '' filled it with entries
    cached_document_embeddings(encoder, TEXTS, "", show_progress_bar=False)
    assert not list(tmp_path.iterdir())


def test_an_index_save_stopped_midway_does_not_load(tmp_path, monkeypatch):
    old = DenseIndex.build(np.eye(3, 4, dtype=np.float32), ["a", "b", "c"], encoder_id="old")
    old.save(tmp_path / "ix")
    new = DenseIndex.build(np.eye(2, 4, dtype=np.float32), ["x", "y"], encoder_id="new")

    def stopped(*_, **__):
        raise KeyboardInterrupt

    monkeypatch.setattr(dense_index, "write_json", stopped)  # killed after the vectors, before the ids
    with pytest.raises(KeyboardInterrupt):
        new.save(tmp_path / "ix")
    monkeypatch.undo()
    with pytest.raises(FileNotFoundError, match="index.json: missing"):  # never new vectors under old ids
        DenseIndex.load(tmp_path / "ix")
    new.save(tmp_path / "ix")
    assert DenseIndex.load(tmp_path / "ix", encoder_id="new").ids == ["x", "y"]


# ---- a folder of outputs ---------------------------------------------------------------------------------
DOCS = ("text,timestamp\nelectric cars are great,2023-01-05\nI bought an electric car,2023-03-02\n"
        "pasta recipes,2023-02-10\nelectric cars everywhere,2023-03-20\n")


@pytest.fixture
def trend(tmp_path):
    from retrieval.trends.analysis import analyse_trend, load_corpus
    from tests.test_trends import FIXED, BagOfWordsEncoder

    docs = tmp_path / "docs.csv"
    docs.write_text(DOCS)
    return analyse_trend(load_corpus(docs, BagOfWordsEncoder()), "electric cars?", FIXED)


def test_a_trend_report_is_replaced_whole_or_not_at_all(trend, tmp_path, monkeypatch):
    from tests.test_trends import FIXED

    out = tmp_path / "out"
    trend_report.write_trend_outputs(trend, out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert set(before) == {"volume.png", "report.md", "trend.json"}

    def stopped(*_, **__):
        raise KeyboardInterrupt

    monkeypatch.setattr(trend_report, "write_json", stopped)  # killed after the new plot and report
    with pytest.raises(KeyboardInterrupt):
        trend_report.write_trend_outputs(trend, out, config=FIXED)
    monkeypatch.undo()
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before and not leftovers(tmp_path)
    paths = trend_report.write_trend_outputs(trend, out, config=FIXED)
    assert '"config"' in paths["json"].read_text() and not leftovers(tmp_path)


def test_a_folder_holding_other_files_is_refused(trend, tmp_path, capsys):
    from retrieval.trends.analysis import main

    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("my own notes")
    with pytest.raises(DataError, match=r"mine: holds \['notes.txt'\] besides a trend report"):
        trend_report.write_trend_outputs(trend, out)
    assert main(["ask", "--docs", str(tmp_path / "docs.csv"), "electric cars?", "--llm", "none",
                 "--cache-dir", "", "--output-dir", str(out)]) == 2  # refused before the work
    assert "mine: holds ['notes.txt'] besides a trend report" in capsys.readouterr().err
    assert (out / "notes.txt").read_text() == "my own notes"
