"""Saved table and cell indices: built once by retrieval.ctbls.build_index, loaded by chat and the pipeline,
refused in one line when they do not fit (another encoder, precision, text settings or tables)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
import torch
from conftest import tiny_backbone_folder
from ctbls_fixtures import FakeLLM, write_checkpoints, write_tiny_ottqa

from models.dual_encoder import DualEncoder
from retrieval.ctbls import build_index, chat
from retrieval.ctbls.pipeline import CTBLSPipeline
from retrieval.ctbls.state_tracker import CellStateTracker
from retrieval.ctbls.table_retriever import DenseTableRetriever, TableTextSettings
from retrieval.data.jsonio import run_cli
from retrieval.data.ottqa import load_passages, load_tables
from retrieval.search.index_record import IndexMismatchError


@pytest.fixture(scope="module")
def tiny(tiny_backbone, tmp_path_factory):
    root = tmp_path_factory.mktemp("build_index")
    data = write_tiny_ottqa(root / "ottqa")
    dtr, tracker = write_checkpoints(tiny_backbone, root)
    return {"root": root, "data": data, "dtr": dtr, "tracker": tracker, "tables": data / "tables.jsonl",
            "passages": data / "passages_dev.jsonl"}


def _build(tiny, *extra) -> dict:
    return build_index.main(["--dtr", str(tiny["dtr"]), "--tables", str(tiny["tables"]),
                             "--passages", str(tiny["passages"]), "--cache-dir", "", *extra])


def _pipe(tiny, **kw) -> CTBLSPipeline:
    return CTBLSPipeline.from_pretrained(tiny["dtr"], tiny["tracker"], llm=FakeLLM(), tables=tiny["tables"],
                                         passages=tiny["passages"], **kw)


def test_built_index_records_its_sources_and_the_pipeline_loads_it(tiny, tmp_path, capsys):
    out = _build(tiny, "--tracker", str(tiny["tracker"]), "--output-dir", str(tmp_path / "index"))
    assert out == {"tables": tmp_path / "index" / "tables", "cells": tmp_path / "index" / "cells"}
    meta = json.loads((out["tables"] / "index.json").read_text())
    record = meta["built_from"]
    assert record["kind"] == "tables" and record["autocast"] is None and record["encoder_id"] == meta["encoder_id"]
    assert record["settings"] == {"representation": "header", "max_intro_words": 64}
    assert set(record["fingerprints"]) == set(meta["ids"]) and len(meta["ids"]) == 3
    assert record["sources"]["tables"]["path"] == str(tiny["tables"].resolve())
    assert record["sources"]["tables"]["size"] == tiny["tables"].stat().st_size
    cells = json.loads((out["cells"] / "index.json").read_text())["built_from"]
    assert cells["kind"] == "cells" and len(cells["fingerprints"]) == 3
    assert (out["tables"] / "config.yaml").is_file()
    capsys.readouterr()

    loaded = _pipe(tiny, index_dir=tmp_path / "index")
    err = capsys.readouterr().err
    assert "loaded the table index" in err and "loaded the cell index" in err and "encoding" not in err
    fresh = CTBLSPipeline.from_pretrained(tiny["dtr"], tiny["tracker"], llm=FakeLLM(), tables=tiny["tables"],
                                          passages=tiny["passages"], table_index=None, cell_index=None)
    assert "no saved table index" in capsys.readouterr().err
    for query in ("Which river flows through Egypt?", "How long is the Amazon river?"):
        a, b = loaded.answer([], query), fresh.answer([], query)
        assert (a.table_id, [c[0] for c in a.cells]) == (b.table_id, [c[0] for c in b.cells])
        assert a.table_score == pytest.approx(b.table_score, abs=1e-5)


def test_the_default_place_is_beside_the_checkpoint_and_chat_uses_it(tiny, capsys):
    out = _build(tiny)
    assert out == {"tables": tiny["dtr"] / "index" / "tables"}
    capsys.readouterr()
    chat.main(["--dtr", str(tiny["dtr"]), "--tracker", str(tiny["tracker"]), "--llm", "none", "--tables",
               str(tiny["tables"]), "--passages", str(tiny["passages"]), "--cache-dir", "",
               "--once", "Which river flows through Egypt?"])
    captured = capsys.readouterr()
    assert json.loads(captured.out)["answer"]  # stdout holds the JSON alone; the index line goes to stderr
    assert f"loaded the table index {tiny['dtr'] / 'index' / 'tables'}" in captured.err


def _saved(tiny, tmp_path, retriever=None) -> tuple[DenseTableRetriever, list]:
    retriever = retriever or DenseTableRetriever.from_pretrained(tiny["dtr"])
    tables = list(load_tables(tiny["tables"]).values())
    retriever.index_tables(tables, tables_file=tiny["tables"])
    retriever.save_index(tmp_path / "saved")
    return retriever, tables


def test_a_table_index_that_does_not_fit_is_refused_in_one_line(tiny, tmp_path):
    _, tables = _saved(tiny, tmp_path)
    other = DenseTableRetriever(DualEncoder.from_backbone(str(tiny_backbone_folder(tmp_path / "other", seed=1))))
    cases = {
        "encoder": (other, tables),
        "bf16": (DenseTableRetriever.from_pretrained(tiny["dtr"]), tables),
        "settings": (DenseTableRetriever.from_pretrained(tiny["dtr"]), tables),
        "cut": (DenseTableRetriever.from_pretrained(tiny["dtr"]), tables),  # same weights, shorter documents
        "changed": (DenseTableRetriever.from_pretrained(tiny["dtr"]), [replace(tables[0], title="Other")] + tables[1:]),
        "missing": (DenseTableRetriever.from_pretrained(tiny["dtr"]), tables + [replace(tables[0], uid="new")]),
    }
    cases["bf16"][0].encoder.autocast_dtype = torch.bfloat16
    cases["settings"][0].settings = TableTextSettings("paper", 64)
    cases["cut"][0].encoder.config.max_document_length = 16
    expected = {"encoder": "built with encoder",
                "bf16": "encoded in fp32 (no --bf16), and this run encodes in bfloat16 autocast (--bf16)",
                "settings": "text settings", "cut": "its documents were encoded as {'max_length': 64",
                "changed": "1 of its tables read differently now (first: 'tiny_",
                "missing": "1 of these 4 tables are not in it (first: 'new')"}
    for name, (retriever, pool) in cases.items():
        with pytest.raises(IndexMismatchError) as e:
            retriever.load_index(tmp_path / "saved", pool)
        message = str(e.value)
        assert expected[name] in message and "\n" not in message, (name, message)
        assert message.startswith(f"{tmp_path / 'saved'}: the saved table index does not fit: ")
        assert str(tiny["tables"].resolve()) in message or name in ("encoder", "bf16", "settings", "cut")


def test_a_subset_of_the_saved_tables_is_searched_alone(tiny, tmp_path):
    retriever, tables = _saved(tiny, tmp_path)
    full = retriever.retrieve(["Which river flows through Egypt?"], k=3)[0]
    loaded = DenseTableRetriever.from_pretrained(tiny["dtr"])
    loaded.load_index(tmp_path / "saved", tables[1:])
    found = loaded.retrieve(["Which river flows through Egypt?"], k=3)[0]
    assert [u for u, _ in found] == [u for u, _ in full if u != tables[0].uid]


def test_named_index_that_does_not_fit_ends_chat_in_one_line(tiny, tmp_path, capsys):
    _build(tiny, "--output-dir", str(tmp_path / "index"))
    argv = ["--dtr", str(tiny["dtr"]), "--tracker", str(tiny["tracker"]), "--llm", "none", "--tables",
            str(tiny["tables"]), "--passages", str(tiny["passages"]), "--cache-dir", "", "--once", "q"]
    capsys.readouterr()
    for extra, says in ((["--index", str(tmp_path / "index"), "--bf16"], "encoded in fp32 (no --bf16)"),
                        (["--index", str(tmp_path / "none")], "no saved table index there")):
        with pytest.raises(SystemExit) as stop:
            run_cli(lambda extra=extra: chat.main(argv + extra))
        err = [line for line in capsys.readouterr().err.splitlines() if line.strip() and "Loading weights" not in line]
        assert stop.value.code == 2 and len(err) == 1 and err[0].startswith("error: ") and says in err[0], err
        assert "build_index --dtr" in err[0]


def test_an_unfitting_index_at_the_default_place_is_encoded_instead_with_a_line(tiny, capsys):
    _build(tiny, "--bf16")  # DTR/index/tables, encoded under bf16
    capsys.readouterr()
    pipe = _pipe(tiny)  # fp32
    err = capsys.readouterr().err
    assert "does not fit: it was encoded in bfloat16 autocast (--bf16)" in err
    assert "encoding 3 tables; to save an index once: python -m retrieval.ctbls.build_index --dtr" in err
    assert pipe.answer([], "Which river flows through Egypt?").cells
    capsys.readouterr()
    _pipe(tiny, bf16=True)  # the same run under bf16 fits it
    assert "loaded the table index" in capsys.readouterr().err


def test_cells_are_added_table_by_table_to_a_loaded_cell_index(tiny, tmp_path):
    tables = list(load_tables(tiny["tables"]).values())
    passages = load_passages(tiny["passages"])
    builder = CellStateTracker.from_pretrained(tiny["tracker"])
    builder.add_tables(tables[:2], passages, cache_dir=tmp_path / "cache")
    builder.save_index(tmp_path / "cells")

    whole = CellStateTracker.from_pretrained(tiny["tracker"])
    whole.index_tables(tables, passages)
    grown = CellStateTracker.from_pretrained(tiny["tracker"])
    grown.load_index(tmp_path / "cells", tables, passages)
    assert set(grown.cells_of) == {t.uid for t in tables[:2]}
    grown.add_tables(tables, passages, cache_dir=tmp_path / "cache")
    assert set(grown.cells_of) == {t.uid for t in tables}
    for table in tables:
        a, b = grown.rank([], "which river is longest", table.uid, 5), whole.rank([], "which river is longest",
                                                                                   table.uid, 5)
        assert [i for i, _ in a] == [i for i, _ in b]
        assert [s for _, s in a] == pytest.approx([s for _, s in b], abs=1e-5)

    changed = {**passages, next(iter(passages)): "other text"}
    with pytest.raises(IndexMismatchError, match="cells read differently now"):
        CellStateTracker.from_pretrained(tiny["tracker"]).load_index(tmp_path / "cells", tables, changed)
