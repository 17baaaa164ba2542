"""An answer whose evidence the relevance model finds more likely not evidence says so first, with the probability;
a hand-tuned memory, whose scores are no probabilities, says nothing of the kind."""

from __future__ import annotations

import math
from datetime import datetime, timezone

import pandas as pd
import pytest
from test_train_dialogue_retriever import sample

from models.dual_encoder import load_encoder
from retrieval.data.locomo_qa import sample_utterances
from retrieval.memory.conversation_table import ConversationTable
from retrieval.memory.relevance.confidence import WEAK_EVIDENCE, weak_evidence_note, with_probabilities
from retrieval.memory.relevance.features import FEATURES
from retrieval.memory.relevance.model import RelevanceModel
from retrieval.memory.relevance.rerank import Reranker
from retrieval.memory.result_print import print_result
from retrieval.memory.table_ops import Execution
from retrieval.memory.temporal_memory import TemporalMemory
from retrieval.memory.when_answer import WhenAnswer
from retrieval.memory.when_between import answer_between
from retrieval.memory.when_support import PROBABILITY


def constant(p: float) -> Reranker:
    """A relevance model that gives every candidate probability ``p``."""
    n = len(FEATURES)
    return Reranker(RelevanceModel([0.0] * n, [1.0] * n, [0.0] * n, math.log(p / (1 - p)), 0.5, "threshold"))


@pytest.fixture(scope="module")
def table(tiny_backbone):
    return ConversationTable.from_utterances(sample_utterances(sample("conv-1", ("Gus", "Hal"))),
                                             load_encoder(tiny_backbone), turns=True)


def weak(result) -> list[str]:
    return [w for w in result.warnings if w.startswith("weak evidence:")]


def test_a_when_answer_from_unlikely_evidence_says_so_first(table, capsys):
    result = TemporalMemory(table, relevance=constant(0.2), evidence_rule="top").ask(
        "When did Gus spend the week on chess?")
    print_result(result, as_json=False)
    out = capsys.readouterr().out.splitlines()
    assert out[1].startswith("warning: weak evidence:")  # right after the question
    assert any(line.startswith("answer: ") and "evidence probability 0.20" in line for line in out)
    assert result.answer is not None and result.answer.answer
    assert result.answer.probability == pytest.approx(0.2)
    assert result.warnings[0].startswith("weak evidence:") and "0.20" in result.warnings[0]
    assert result.to_dict()["answer"]["probability"] == pytest.approx(0.2)
    sure = TemporalMemory(table, relevance=constant(0.8), evidence_rule="top").ask(
        "When did Gus spend the week on chess?")
    assert sure.answer.probability == pytest.approx(0.8) and not weak(sure)


def test_rows_none_of_which_is_likely_evidence_say_so(table):
    result = TemporalMemory(table, relevance=constant(0.3)).ask("What did Hal spend the week on, surfing?")
    assert result.ids and weak(result) and "no row shown" in weak(result)[0]
    assert not weak(TemporalMemory(table, relevance=constant(0.9)).ask("What did Hal spend the week on, surfing?"))


def test_the_hand_tuned_ranking_has_no_probability_to_warn_with(table):
    memory = TemporalMemory(table)
    for question in ("When did Gus spend the week on chess?", "What did Hal spend the week on, surfing?"):
        result = memory.ask(question)
        assert not weak(result)
        assert result.answer is None or result.answer.probability is None
    assert PROBABILITY not in memory.when_evidence("When did Gus spend the week on chess?")


def test_probabilities_join_the_rows_only_for_a_relevance_model():
    rows = pd.DataFrame({"text": ["a", "b"]}, index=[4, 7])
    execution = Execution(rows=rows, scores={4: 0.9, 7: 0.1})
    assert with_probabilities(execution, constant(0.5))[PROBABILITY].tolist() == [0.9, 0.1]
    assert PROBABILITY not in with_probabilities(execution, None)


def test_the_note_reads_the_answer_first_then_the_rows():
    at = datetime(2024, 5, 1, tzinfo=timezone.utc)
    rows = pd.DataFrame({PROBABILITY: [0.2, 0.1]})
    assert weak_evidence_note(WhenAnswer("when", "1 May 2024", at, at, probability=0.9), rows) is None
    assert weak_evidence_note(WhenAnswer("when", "1 May 2024", at, at, probability=WEAK_EVIDENCE - 0.01), rows)
    assert weak_evidence_note(WhenAnswer("when", None), rows) is None  # no answer: other notes say why
    assert "0.20" in weak_evidence_note(None, rows)
    assert weak_evidence_note(None, pd.DataFrame({"text": ["a"]})) is None


def test_a_length_between_two_events_needs_both_rows_to_be_evidence():
    stamp = [pd.Timestamp("2024-05-01T10:00", tz="UTC"), pd.Timestamp("2024-05-11T10:00", tz="UTC")]
    rows = [pd.DataFrame({"speaker": ["A"], "text": ["x"], "timestamp": [s], "event_start": [pd.NaT],
                          PROBABILITY: [p]}, index=[n]) for n, (s, p) in enumerate(zip(stamp, (0.9, 0.5)))]
    answer = answer_between(*rows)
    assert answer.duration == (10, 10, "day") and answer.probability == pytest.approx(0.45)


def test_reliability_bins_compare_probability_with_the_share_of_evidence():
    import numpy as np

    from eval.relevance_calibration import reliability, warnings_by_source
    from retrieval.memory.relevance.example import Example

    p = np.array([0.01, 0.02, 0.6, 0.6, 0.8])
    y = np.array([0.0, 0.0, 1.0, 0.0, 1.0])
    got = reliability(p, y, (0.0, 0.5, 1.0))
    assert [b["rows"] for b in got["bins"]] == [2, 3]
    assert got["bins"][1]["evidence_share"] == pytest.approx(2 / 3, abs=1e-4)
    assert got["ece"] == pytest.approx(2 * 0.015 / 5, abs=1e-4)  # the second bin is right on
    sure = Example("1", "s", "q", [1, 2], np.zeros((2, 1)), frozenset({1}), 2, cut=False, asks_when=False)
    unsure = Example("1", "s", "q2", [3, 4], np.zeros((2, 1)), frozenset({9}), 2, cut=False, asks_when=False)
    counts = warnings_by_source([sure, unsure], [np.array([0.9, 0.1]), np.array([0.3, 0.2])])
    assert counts["s"] == {"questions": 2, "misses": 1, "misses_warned": 1, "hits": 1, "hits_warned": 0}


def test_cutting_an_uncut_plan_is_scored_as_the_trial_scores_rows():
    import numpy as np

    from eval.relevance_calibration import uncut_alternatives, uncut_kept
    from eval.user_trial import turns_verdict
    from retrieval.memory.relevance.example import Example

    assert turns_verdict({1}, [1, 2, 3, 4]) == "right" and turns_verdict({1}, [1, *range(2, 7)]) == "partly"
    assert turns_verdict({1, 2}, [1]) == "partly" and turns_verdict({1}, [5]) == "wrong"
    p = np.array([0.05, 0.6, 0.3, 0.05])
    assert uncut_kept(p, 4, "best_k").tolist() == [1, 2, 0, 3]
    assert uncut_kept(p, 4, "mass_0.8").tolist() == [1, 2]  # 0.9 of the 1.0 held by the first two
    assert uncut_kept(p, 4, "mass_0.7").tolist() == [1, 2] and uncut_kept(p, 4, "mass_0.9").tolist() == [1, 2]
    assert uncut_kept(np.array([0.9, 0.01, 0.01]), 3, "expected_f2").tolist() == [0]
    many = Example("1", "s", "q", list(range(8)), np.zeros((8, 1)), frozenset({1}), 8, cut=False, asks_when=False)
    lost = Example("1", "s", "q2", [1, 2], np.zeros((2, 1)), frozenset({2}), 2, cut=False, asks_when=False)
    cut = Example("1", "s", "q3", [1, 2], np.zeros((2, 1)), frozenset({1}), 2, cut=True, asks_when=False)
    ranked = [np.array([0.1, 0.9, *[0.01] * 6]), np.array([0.8, 0.1]), np.array([0.9, 0.1])]
    got = uncut_alternatives([many, lost, cut], ranked)  # the plan that cuts is not counted
    assert got["best_k"] == {"questions": 2, "mean_rows": 5.0, "right": 50.0, "partly": 50.0, "wrong": 0.0,
                             "silent wrong": 0.0}  # eight rows for one wanted turn: partly
    assert got["expected_f2"] == {"questions": 2, "mean_rows": 1.0, "right": 50.0, "partly": 0.0, "wrong": 50.0,
                                  "silent wrong": 50.0}


def test_the_calibration_command_reports_and_draws(tmp_path, tiny_backbone, capsys):
    import json

    from test_train_dialogue_retriever import sample

    from eval.relevance_calibration import main

    locomo = tmp_path / "locomo.json"
    locomo.write_text(json.dumps([sample(f"conv-{n}", pair) for n, pair in
                                  zip((1, 2, 3), (("Ann", "Bob"), ("Cy", "Di"), ("Eve", "Fay")))]))
    out = tmp_path / "calibration.json"
    assert main(["--locomo", str(locomo), "--zyphra-dir", "", "--folds", "3", "--encoder", tiny_backbone,
                 "--cache-dir", "", "--output", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["folds"] == 3 and sum(b["rows"] for b in report["reliability"]["bins"]) == report["rows"] > 0
    assert set(report["warnings"]) <= {"locomo/1", "locomo/2", "locomo/3", "locomo/4"}
    assert set(report["uncut"]) == {"best_k", "expected_f2", "mass_0.7", "mass_0.8", "mass_0.9"}
    assert out.with_suffix(".png").stat().st_size > 0 and "ECE" in capsys.readouterr().out


def test_the_calibration_command_refuses_too_few_folds_at_once(capsys):
    from eval.relevance_calibration import main

    assert main(["--folds", "1", "--locomo", "/no/such.json", "--zyphra-dir", ""]) == 2
    assert "--folds 1" in capsys.readouterr().err
