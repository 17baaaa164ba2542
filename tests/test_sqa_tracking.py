"""SQA through the same tracker machinery: training with history and several positives, evaluation by position."""

from __future__ import annotations

import dataclasses
import json

import pytest
from accelerate.state import AcceleratorState
from ctbls_fixtures import FakeLLM
from sqa_fixtures import sqa_folder

from eval import answer_accuracy, answer_llm, state_tracking
from retrieval.ctbls.cell_selector import SelectionRule
from retrieval.ctbls.state_rerank import StateReranker
from retrieval.ctbls.state_tracker import CellStateTracker, dialogue_turns
from retrieval.data.conversation_sets import load_conversation_set
from train import state_rerank as train_state_rerank
from train import state_tracker as train_st


@pytest.fixture(scope="module")
def sqa_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("data")
    sqa_folder(root / "sqa")
    return root


def _train(tiny_backbone, root, out, *extra) -> dict:
    AcceleratorState._reset_state(True)
    return train_st.main(["--dataset", "sqa", "--data-dir", str(root), "--output-dir", str(out),
                          "--model-name-or-path", tiny_backbone, "--per-device-train-batch-size", "2",
                          "--max-train-steps", "2", "--learning-rate", "1e-3", "--num-warmup-steps", "1",
                          "--max-document-length", "32", "--max-query-length", "48", "--cache-dir", "none",
                          "--no-use-passages", "--row-context", "row", "--hard-negatives", "1",
                          "--row-col-negatives", "1", "--random-negatives", "0", *extra])


@pytest.fixture(scope="module")
def trackers(tiny_backbone, sqa_root, tmp_path_factory):
    out = tmp_path_factory.mktemp("runs")
    _train(tiny_backbone, sqa_root, out / "history", "--positives-per-turn", "2")
    _train(tiny_backbone, sqa_root, out / "nohistory", "--history-turns", "0")
    return out


def test_sqa_training_makes_an_example_per_positive(trackers):
    with_history = json.loads((trackers / "history" / "training_data.json").read_text())
    # the train table's 4 turns: answer sets of 3, 2, 1 (one more cell outside the table) and 1 cells
    assert with_history["examples"] == 2 + 2 + 1 + 1
    assert json.loads((trackers / "nohistory" / "training_data.json").read_text())["examples"] == 4
    assert CellStateTracker.from_pretrained(trackers / "nohistory").settings.history_turns == 0
    card = (trackers / "history" / "README.md").read_text()
    assert "SQA" in card and "OTT-QA" not in card
    results = json.loads((trackers / "history" / "all_results.json").read_text())
    assert results["epochs"][-1]["n"] == 4  # validation: the dev table's 4 turns


def test_history_anchor_holds_earlier_questions_and_answers(tiny_backbone, sqa_root):
    data = load_conversation_set("sqa", "train", sqa_root)
    previous, turn = dialogue_turns(data.conversations[0])[1]
    assert previous == [("what are the venues?", 'The Dome, "Garden" Arena, Stadium')]
    assert turn.query == "which of those were in atlanta?"


def test_sqa_evaluation_rows_by_position(tiny_backbone, sqa_root, trackers, tmp_path):
    results = state_tracking.main([
        "--dataset", "sqa", "--data-dir", str(sqa_root), "--tracker", str(trackers / "history"),
        "--tracker-without-history", str(trackers / "nohistory"), "--baseline", tiny_backbone, "--cache-dir", "",
        "--output", str(tmp_path / "eval.json")])
    rows = results["gold_table"]
    assert {"bm25", "bm25 (query only)", "untuned", "tracker (no history)", "tracker"} <= set(rows)
    data = results["_data"]
    assert data["dataset"] == "sqa" and data["split"] == "validation" and data["turns_scored"] == 4
    for name in ("bm25", "tracker", "tracker (no history)"):
        r = rows[name]
        assert r["n"] == 4 and 0 <= r["recall@10"] <= 1 and r["top1"] <= r["top3"] <= r["top10"]
        assert r["recall@10"] <= r["top10"]  # all of the answer set within 10 needs one of it within 10
        assert sorted(r["by_turn"]) == ["turn1", "turn2", "turn3"] and r["by_turn"]["turn1"]["n"] == 2
        assert r["from_turn2"]["n"] == 2
    # a table of 9 cells: every answer cell is within the top 10 of any method
    assert rows["bm25"]["recall@10"] == 1.0
    assert data["settings_by_method"]["tracker (no history)"]["history_turns"] == 0


def test_sqa_questions_file_and_split_are_checked(tiny_backbone, sqa_root, tmp_path, capsys):
    with pytest.raises(SystemExit):
        state_tracking.run_cli(lambda: state_tracking.main(
            ["--dataset", "sqa", "--data-dir", str(sqa_root), "--split", "test", "--baseline", tiny_backbone]))
    assert "sqa: no split 'test'; its splits are train, dev, validation" in capsys.readouterr().err
    other = tmp_path / "mine.tsv"
    other.write_text((sqa_root / "sqa" / "train.tsv").read_text().splitlines(keepends=True)[0])
    with pytest.raises(SystemExit):
        state_tracking.run_cli(lambda: state_tracking.main(
            ["--dataset", "sqa", "--data-dir", str(sqa_root), "--questions", str(other), "--baseline",
             tiny_backbone]))
    assert "mine.tsv: no sequence over a table of split validation" in capsys.readouterr().err


def test_answer_accuracy_counts_questions_and_whole_sequences(sqa_root):
    data = load_conversation_set("sqa", "validation", sqa_root)
    gold = {t.turn_id: [(c.table_id, r, col) for r, col in t.targets] for c in data.conversations for t in c.turns}
    scores = answer_accuracy.accuracy(data, gold)
    # the gold cells are right except the turn whose answer names a cell outside the table ('x')
    assert scores["all"] == 3 / 4 and scores["seq"] == 1 / 2 and scores["turn3"] == 0.0 and scores["turn1"] == 1.0
    wrong_first = {**gold, "nt-2_0_0": gold["nt-2_0_0"][:1]}
    assert answer_accuracy.accuracy(data, wrong_first)["turn1"] == 1 / 2


def test_answer_accuracy_command(tiny_backbone, sqa_root, trackers, tmp_path, capsys):
    results = answer_accuracy.main(["--tracker", str(trackers / "history"), "--data-dir", str(sqa_root),
                                    "--cache-dir", "", "--show-sequences", "1",
                                    "--output", str(tmp_path / "answers.json")])
    shown = capsys.readouterr().out
    assert "--- sequence nt-2_0" in shown and "Q: which of those were in atlanta?" in shown
    assert "gold: ['The Dome', 'Stadium']" in shown and "DynSP (published, SQA test)" in shown
    rows = results["answer_accuracy"]
    assert set(rows) >= {"extractive, predicted history", "extractive, gold history"} | set(answer_accuracy.PUBLISHED)
    for name in ("extractive, predicted history", "extractive, gold history"):
        assert rows[name]["n"] == 4 and rows[name]["sequences"] == 2 and rows[name]["seq"] <= rows[name]["all"]
    rule = results["_rule"]
    assert rule["chosen_on"] == "dev" and rule["grid_all"][rule["name"]] == max(rule["grid_all"].values())
    with pytest.raises(SystemExit):
        answer_accuracy.main(["--tracker", str(trackers / "history"), "--split", "dev"])


def test_the_llm_path_maps_its_answer_back_to_cells(sqa_root, trackers, monkeypatch, tmp_path):
    llm = FakeLLM()  # answers with the value of the first cell it is shown
    monkeypatch.setattr(answer_accuracy, "load_backend", lambda spec, cache=None: llm)
    results = answer_accuracy.main(["--tracker", str(trackers / "history"), "--data-dir", str(sqa_root),
                                    "--cache-dir", "", "--llm", "smollm2", "--llm-sequences", "1", "--cache", ""])
    rows = results["answer_accuracy"]
    fake = rows["LLM (fake) given the top 3 cells, first 1 sequences"]
    assert fake["n"] == 3 and rows["extractive, gold history, first 1 sequences"]["n"] == 3
    summary = results["_llm"]
    assert summary["failed"] == 0 and summary["named_no_cell"] == 0 and 0 <= summary["rouge1_p"] <= 1
    assert len(llm.calls[0]) == 3 and "[1] " in llm.calls[0][0][-1]["content"]
    # the answer (the first cell's value) maps back to that cell: right exactly when the tracker's top cell is
    # the whole gold set
    data = load_conversation_set("sqa", "validation", sqa_root)
    tracker = CellStateTracker.from_pretrained(trackers / "history")
    tracker.index_tables(data.tables.values())
    part = dataclasses.replace(data, conversations=data.conversations[:1])
    said, _ = answer_llm.llm_answers(tracker, part, FakeLLM(), 3)
    top = answer_accuracy.rank_turns(tracker, part, [SelectionRule("top", "absolute", 0.0)], "gold")
    assert said == next(iter(top.values()))


def test_state_reranker_is_fitted_on_train_chosen_on_dev_and_used_by_both_evaluations(
        tiny_backbone, sqa_root, trackers, tmp_path, capsys):
    out = tmp_path / "rerank.json"
    report = train_state_rerank.main(["--tracker", str(trackers / "history"), "--data-dir", str(sqa_root),
                                      "--cache-dir", "", "--output", str(out)])
    assert report["train_tables"] == 1 and report["dev_tables"] == 1 and report["chosen_on"] == "dev"
    assert report["train_turns"] == 4 and report["dev_turns"] == 4 and 0 < report["train_positives"] < report[
        "train_rows"]
    dev = report["dev_scores"]
    best = max(dev[n]["from_turn2"]["top3"] for n in dev if n != "tracker alone")
    assert dev[report["chosen"]]["from_turn2"]["top3"] == best
    assert (tmp_path / "rerank.config.yaml").is_file()  # beside its output, not over the tracker's config
    assert StateReranker.load(out).report["chosen"] == report["chosen"]
    results = state_tracking.main([
        "--dataset", "sqa", "--data-dir", str(sqa_root), "--tracker", str(trackers / "history"), "--baseline",
        tiny_backbone, "--cache-dir", "", "--state-rerank", str(out)])
    rows = results["gold_table"]
    assert {"tracker", state_tracking.RERANKED} <= set(rows) and results["_data"]["state_rerank"] == report["chosen"]
    r = rows[state_tracking.RERANKED]
    assert r["n"] == 4 and r["from_turn2"]["n"] == 2 and sorted(r["by_turn"]) == ["turn1", "turn2", "turn3"]
    assert "tracker with history + state re-ranking, turn by turn" in capsys.readouterr().out
    plain = state_tracking.main(["--dataset", "sqa", "--data-dir", str(sqa_root), "--tracker",
                                 str(trackers / "history"), "--baseline", tiny_backbone, "--cache-dir", ""])
    assert state_tracking.RERANKED not in plain["gold_table"]  # the tracker folder has none: auto is off
    answers = answer_accuracy.main(["--tracker", str(trackers / "history"), "--data-dir", str(sqa_root),
                                    "--cache-dir", "", "--state-rerank", str(out)])
    rows = answers["answer_accuracy"]
    for name in ("extractive + state re-ranking, predicted history", "extractive + state re-ranking, gold history",
                 "extractive, predicted history"):
        assert rows[name]["n"] == 4 and rows[name]["sequences"] == 2
    assert answers["_rule_state_rerank"]["chosen_on"] == "dev" and answers["_data"]["state_rerank"]


def test_rules_are_chosen_over_the_dev_tables_cells(sqa_root, trackers, monkeypatch):
    seen = []
    choose = answer_accuracy.choose_rule

    def spy(tracker, dev, *args):
        seen.append(set(dev.tables) <= set(tracker.cells_of))  # the dev tables are the ones indexed
        return choose(tracker, dev, *args)

    monkeypatch.setattr(answer_accuracy, "choose_rule", spy)
    answer_accuracy.main(["--tracker", str(trackers / "history"), "--data-dir", str(sqa_root), "--cache-dir", ""])
    assert seen == [True]
