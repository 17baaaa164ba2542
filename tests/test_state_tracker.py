"""The cell state tracker: ranking within one table, save/load, training end to end, evaluation."""

import json
import random
from pathlib import Path

import pytest
from accelerate.state import AcceleratorState
from card_checks import check_card, epoch_records
from ctbls_fixtures import split_uids

from eval import state_tracking
from models.dual_encoder import DualEncoder
from retrieval.ctbls.cell_text import CellTextSettings
from retrieval.ctbls.state_tracker import CellStateTracker
from retrieval.data.synthetic import pseudo_cell_queries
from retrieval.data.types import Cell, Table
from train import state_tracker as train_st

FIXTURES = Path(__file__).parent / "fixtures"


def _table(uid: str, k: int) -> dict:
    rows = [[[f"player{k}_{r}", [f"/wiki/P{k}_{r}"]], [f"club{r}", []], [str(r + k), []]] for r in range(4)]
    rows[1][1] = ["", []]  # an empty cell
    rows[2].append(["note", []])  # a ragged row
    return {"uid": uid, "title": f"{uid} squad", "section_title": "", "section_text": "", "intro": "",
            "header": [["Player", []], ["Club", []], ["Goals", []]], "data": rows}


@pytest.fixture(scope="module")
def tiny_ottqa(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("data")
    (root / "ottqa").mkdir()
    tables, questions, passages = [], [], []
    for split, n in (("train", 6), ("val", 2), ("test", 2)):
        for k, uid in enumerate(split_uids(n, split)):
            tables.append(_table(uid, k))
            passages.append({"table_id": uid, "passages": {f"/wiki/P{k}_{r}": f"player{k}_{r} is a striker"
                                                           for r in range(4)}})
            for r in range(3):
                questions.append({"question_id": f"{uid}_{r}", "question": f"how many goals did player{k}_{r} score",
                                  "table_id": uid, "answer-text": str(r + k),
                                  "answer-node": [[str(r + k), [r, 2], None, "table"]]})
            # An answer node outside the table: counted, never a crash.
            questions.append({"question_id": f"{uid}_out", "question": "who is missing", "table_id": uid,
                              "answer-text": "x", "answer-node": [["x", [99, 0], None, "table"]]})
    for name, rows in (("tables.jsonl", tables), ("passages_dev.jsonl", passages)):
        (root / "ottqa" / name).write_text("".join(json.dumps(x) + "\n" for x in rows))
    (root / "ottqa" / "questions_dev.json").write_text(json.dumps(questions))
    return root


def _tables() -> list[Table]:
    return [Table("a", "A", ["Name", "Team"], [[Cell("ann"), Cell("reds")], [Cell("bob"), Cell("blues")]]),
            Table("b", "B", ["Name", "Team"], [[Cell("cy"), Cell("")], [Cell("dee")]])]


def test_rank_searches_only_the_given_table(tiny_backbone, tmp_path):
    tracker = CellStateTracker(DualEncoder.from_backbone(tiny_backbone), CellTextSettings(history_turns=1))
    stats = tracker.index_tables(_tables(), cache_dir=tmp_path / "cache")
    assert (stats.tables, stats.cells, stats.empty_cells, stats.ragged_tables) == (2, 7, 1, 1)
    ranked = tracker.rank([("who plays for reds", "ann")], "which team", "b", k=10)
    assert sorted(i for i, _ in ranked) == [("b", 0, 0), ("b", 0, 1), ("b", 1, 0)]
    assert [s for _, s in ranked] == sorted((s for _, s in ranked), reverse=True)
    assert tracker.rank([], "q", "unknown table") == []

    tracker.save_pretrained(tmp_path / "ckpt")
    tracker.save_index(tmp_path / "index")
    loaded = CellStateTracker.from_pretrained(tmp_path / "ckpt")
    assert loaded.settings == tracker.settings
    loaded.load_index(tmp_path / "index", _tables())
    again = loaded.rank([("who plays for reds", "ann")], "which team", "b", k=10)
    assert [i for i, _ in again] == [i for i, _ in ranked]
    assert [s for _, s in again] == pytest.approx([s for _, s in ranked], abs=1e-5)


def _train(tiny_backbone, data, out, *extra):
    AcceleratorState._reset_state(True)
    return train_st.main(["--data-dir", str(data), "--output-dir", str(out), "--model-name-or-path", tiny_backbone,
                          "--per-device-train-batch-size", "4", "--max-train-steps", "4", "--learning-rate", "1e-3",
                          "--num-warmup-steps", "1", "--max-document-length", "32", "--max-query-length", "32",
                          "--cache-dir", "none", *extra])


@pytest.mark.parametrize("loss", ["contrastive", pytest.param("triplet", marks=pytest.mark.slow)])
def test_training_writes_results_and_a_loadable_tracker(tiny_backbone, tiny_ottqa, tmp_path, loss):
    out = tmp_path / "run"
    results = _train(tiny_backbone, tiny_ottqa, out, "--loss", loss, "--row-context", "row")
    written = json.loads((out / "all_results.json").read_text())
    assert results["steps"] == written["steps"] == 4 and "mrr@10" in written["epochs"][-1]
    data = json.loads((out / "training_data.json").read_text())
    assert data["examples"] == 18 and data["turns_without_answer_cell"] == 6
    assert data["cells_empty_cells"] == 6 and data["cells_ragged_tables"] == 6
    tracker = CellStateTracker.from_pretrained(out)
    assert tracker.settings.row_context == "row"
    assert CellStateTracker.from_pretrained(out / "last").settings == tracker.settings
    best, last = epoch_records(out)
    for folder, record in ((out, best), (out / "last", last)):  # each with its card; the snippets run as written
        check_card(folder, tmp_path, record, ["OTT-QA"])
    assert "`state_tracker.json`" in (out / "README.md").read_text() and "the rest of the row" in (
        out / "README.md").read_text()


def test_pseudo_cell_queries_hide_the_target_and_use_its_page():
    table = Table("t", "T", ["Name", "Team"], [[Cell("ann", ("/wiki/Ann",)), Cell("reds")], [Cell("bob"), Cell("")]])
    passages = {"/wiki/Ann": "Ann is a striker born in Leeds who joined the reds in 1999"}
    pairs = pseudo_cell_queries(table, 40, random.Random(0), passages)
    assert pairs == pseudo_cell_queries(table, 40, random.Random(0), passages)  # seeded
    assert {t for _, t in pairs} <= {(0, 0), (0, 1), (1, 0)}  # the empty cell is never a target
    for query, (r, c) in pairs:
        assert table.rows[r][c].text not in query.split()
    assert any("striker" in q or "leeds" in q.lower() for q, t in pairs if t == (0, 0))


def test_synthetic_turns_join_the_training_examples(tiny_backbone, tiny_ottqa, tmp_path):
    _train(tiny_backbone, tiny_ottqa, tmp_path / "run", "--synthetic-per-table", "2", "--max-train-steps", "1")
    data = json.loads((tmp_path / "run" / "training_data.json").read_text())
    assert data["examples"] > 18


@pytest.mark.slow
def test_model_mined_negatives(tiny_backbone, tiny_ottqa, tmp_path):
    results = _train(tiny_backbone, tiny_ottqa, tmp_path / "run", "--hard-negative-miner", "model",
                     "--max-train-steps", "1")
    assert results["steps"] == 1


@pytest.fixture(scope="module")
def trained(tiny_backbone, tiny_ottqa, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("trained") / "run"
    _train(tiny_backbone, tiny_ottqa, out)
    return out


@pytest.mark.parametrize("pool", ["all", pytest.param("split", marks=pytest.mark.slow)])
def test_evaluation_compares_methods_in_both_settings(tiny_backbone, tiny_ottqa, trained, tmp_path, pool):
    ottqa = tiny_ottqa / "ottqa"
    results = state_tracking.main([
        "--tracker", str(trained), "--dtr", "untuned", "--dtr-pool", pool, "--baseline", tiny_backbone,
        "--tables", str(ottqa / "tables.jsonl"), "--questions", str(ottqa / "questions_dev.json"),
        "--passages", str(ottqa / "passages_dev.jsonl"), "--cache-dir", str(tmp_path / "cache"),
        "--output", str(tmp_path / "eval.json")])
    assert json.loads((tmp_path / "eval.json").read_text()) == json.loads(json.dumps(results))
    assert (tmp_path / "eval.png").read_bytes().startswith(b"\x89PNG")  # the chart beside the JSON
    data = results["_data"]
    assert (data["conversations"], data["turns"], data["turns_scored"]) == (2, 8, 6)
    assert data["answer_cells_outside_table"] == 2 and data["turns_without_valid_answer_cell"] == 2
    assert data["cells"]["empty_cells"] == 2 and data["cells"]["ragged_tables"] == 2
    for setting in ("gold_table", "dtr_table"):
        assert set(results[setting]) >= {"bm25", "bm25 (query only)", "untuned", "tracker"}
        for m in ("bm25", "untuned", "tracker"):
            r = results[setting][m]
            assert r["n"] == 6
            # top-k is a share of 6 turns, monotone in k, and brackets the MRR
            assert all(abs(r[f] * 6 - round(r[f] * 6)) < 1e-9 for f in ("top1", "top3", "top10"))
            assert r["top1"] <= r["mrr@10"] <= r["top10"] and r["top1"] <= r["top3"] <= r["top10"]
            by_turn = r["by_turn"]  # the per-position figures add up to the overall one
            assert sum(t["n"] for t in by_turn.values()) == 6
            assert sum(t["n"] * t["mrr@10"] for t in by_turn.values()) / 6 == pytest.approx(r["mrr@10"])
    for m in ("bm25", "untuned", "tracker"):  # a missed table is a missed turn
        for metric in ("mrr@10", "top1", "top3", "top10"):
            assert results["dtr_table"][m][metric] <= results["gold_table"][m][metric]
    assert results["gold_table"]["tracker"]["by_turn"]["turn1"]["n"] == 2
    found = results["dtr_table"]["_table_found"]
    if found["conversations_with_table_found"] == 2:  # every table found: the settings coincide
        assert results["dtr_table"]["tracker"]["mrr@10"] == results["gold_table"]["tracker"]["mrr@10"]
    elif found["conversations_with_table_found"] == 0:  # none found: every turn is a miss
        assert all(results["dtr_table"][m]["top10"] == 0 for m in ("bm25", "untuned", "tracker"))
    assert found["pool_tables"] == (10 if pool == "all" else 2)


def test_evaluation_on_hybridialogue_candidates(tiny_backbone, tmp_path):
    results = state_tracking.main(["--hybridialogue", str(FIXTURES / "hybridialogue_small.json"),
                                   "--baseline", tiny_backbone, "--cache-dir", ""])
    rows = results["own_candidates"]
    assert rows["bm25"]["n"] == rows["untuned"]["n"] == 2 and results["_data"]["mean_candidates"] == 3.0
    # Turn 2 ("Who created that series?" after "... Nonso Anozie's TV roles."): BM25 puts the paragraph
    # ("... created by ...") and "Role is Robert" (stem "role") above the answer "Title is Prime Suspect".
    assert rows["bm25"]["by_turn"]["turn2"]["mrr@10"] == pytest.approx(1 / 3)
    assert rows["bm25"]["by_turn"]["turn1"]["mrr@10"] == 1.0  # "Nonso Anozie" names the table among 3 candidates


def test_history_turns_override_parses():
    assert state_tracking._history_turns("saved") == "saved"
    assert state_tracking._history_turns("all") is None and state_tracking._history_turns("0") == 0
