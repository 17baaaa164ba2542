"""The user trial's trend questions: counts per period scored against the turns a person marked as on the topic."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pandas as pd
import pytest

from eval.trial_trends import counts_verdict, within
from eval.user_trial import main, read_questions
from retrieval.data.jsonio import DataError

FRAME = pd.DataFrame({"week": ["2025-W14"] * 4 + ["2025-W15"] * 4, "session": [0, 0, 1, 1, 2, 2, 3, 3]})
POSITIONS = {f"t{i}": i for i in range(8)}


def result(counted, period="day", periods=()):
    """A trend result that counted ``counted``, read per ``period`` (not the keys' week: regrouped by the ids)."""
    return SimpleNamespace(counted_ids=lambda: set(counted), topic="the job search", period=period,
                           periods=[SimpleNamespace(period=p, n_relevant=n) for p, n in periods])


def test_a_period_is_within_when_its_count_is_within_fifteen_percent_and_none_means_none():
    assert within(20, 17) and within(20, 23) and not within(20, 16) and not within(4, 5)
    assert within(0, 0) and not within(0, 1)


def test_counts_right_partly_and_wrong_by_the_periods_of_the_key():
    key = {"expect": "counts", "period": "week", "turns": ["t0", "t1", "t4"]}
    v, seen = counts_verdict(key, result({0, 1, 4}), POSITIONS, FRAME)
    assert v == "right" and seen["counts"] == {"2025-W14": [2, 2], "2025-W15": [1, 1]}
    v, seen = counts_verdict(key, result({0, 1, 5, 6}), POSITIONS, FRAME)  # week 15: 2 counted for 1
    assert v == "partly" and seen["counted_not_key"] == 2 and seen["recall"] == pytest.approx(2 / 3, abs=1e-3)
    v, seen = counts_verdict(key, result({2}), POSITIONS, FRAME)  # small talk counted, the topic missed
    assert v == "wrong" and seen["precision"] == 0.0 and seen["periods_within"] == 0.0
    # read per week as the key: the analysis's own counts (a sum of probabilities, rounded)
    v, seen = counts_verdict(key, result({0}, "week", [("2025-W14", 1.8), ("2025-W15", 1.2)]), POSITIONS, FRAME)
    assert v == "right" and seen["counts"] == {"2025-W14": [2, 2], "2025-W15": [1, 1]}
    by_session = {**key, "period": "session"}  # the same turns grouped by session: 0, 0, 2
    v, seen = counts_verdict(by_session, result({0, 1, 4}), POSITIONS, FRAME)
    assert v == "right" and seen["counts"] == {"0": [2, 2], "2": [1, 1]}


def test_a_counts_key_needs_its_turns_and_a_period(tmp_path):
    path = tmp_path / "questions.jsonl"
    path.write_text(json.dumps({"question": "how much did we talk about work?",
                                "key": {"expect": "counts", "turns": ["t0"]}}) + "\n")
    with pytest.raises(DataError, match="period"):
        read_questions(path)


def test_the_trial_asks_a_trend_question_of_both_memories(tmp_path, tiny_backbone):
    texts = ["the job interview went well", "good night", "another interview on monday", "lovely weather today",
             "got the job offer!", "see you", "the cat knocked over a plant", "pizza tonight?", "the train was late",
             "my sister visits on sunday", "new running shoes", "the film was too long"]
    turns = [(f"t{i:02d}", "Ann" if i % 2 else "Bob", text, f"2025-04-{1 + i:02d}T10:00:00+01:00")
             for i, text in enumerate(texts)]
    chat, questions, out = tmp_path / "chat.jsonl", tmp_path / "questions.jsonl", tmp_path / "trial.json"
    chat.write_text("".join(json.dumps({"id": i, "speaker": s, "text": t, "timestamp": ts}) + "\n"
                            for i, s, t, ts in turns))
    questions.write_text(json.dumps({"id": "c1", "question": "how much did we talk about the job search, week by "
                                     "week?", "now": "2025-04-14T12:00:00+01:00", "history": [],
                                     "key": {"expect": "counts", "period": "week",
                                             "turns": ["t00", "t02", "t04"]}}) + "\n")
    assert main(["--chat", str(chat), "--questions", str(questions), "--encoder", tiny_backbone,
                 "--trend-threshold", "null", "--output", str(out)]) == 0
    for engine in json.loads(out.read_text())["engines"].values():
        (answer,) = engine["answers"]
        assert answer["expect"] == "counts" and answer["verdict"] in ("right", "partly", "wrong")
        assert answer["period_read"] == "week" and answer["key_turns"] == 3
        truth = {p: c[0] for p, c in answer["counts"].items() if c[0]}
        assert truth == {"2025-W14": 3}  # 1, 3 and 5 April 2025: one ISO week
        assert answer["silent"] == (answer["verdict"] == "wrong")


def test_figures_count_periods_within_the_error_and_the_level():
    import numpy as np

    from eval.trend_turn_folds import figures

    periods = np.array(["w1", "w1", "w1", "w2", "w2", "w3"])
    truth = np.array([1.0, 1.0, 0.0, 1.0, 0.0, 0.0])
    got = figures(periods, truth, np.array([0.9, 0.8, 0.3, 0.2, 0.1, 0.6]))  # w1 2 for 2, w2 0 for 1, w3 1 for 0
    assert got["within"] == pytest.approx(1 / 3) and got["ratio"] == pytest.approx(2.9 / 3)
    assert got["mae"] == pytest.approx((abs(2 - 2.0) + abs(1 - 0.3) + abs(0 - 0.6)) / 3)


def test_trend_turn_folds_counts_each_chat_with_a_model_of_the_others(tmp_path, tiny_backbone, capsys):
    from eval.trend_turn_folds import FEATURES
    from eval.trend_turn_folds import main as folds_main

    texts = ["the job interview went well", "good night", "another interview on monday", "lovely weather today",
             "got the job offer!", "see you", "the cat knocked over a plant", "pizza tonight?", "the train was late",
             "my sister visits on sunday", "new running shoes", "the film was too long"]
    for n in range(2):
        folder = tmp_path / f"chat{n}"
        folder.mkdir()
        (folder / "chat.jsonl").write_text("".join(
            json.dumps({"id": f"t{i:02d}", "speaker": "Ann" if i % 2 else "Bob", "text": t,
                        "timestamp": f"2025-04-{1 + i:02d}T10:0{n}:00+01:00"}) + "\n" for i, t in enumerate(texts)))
        (folder / "questions.jsonl").write_text(json.dumps({
            "id": f"c{n}", "question": "how often did the job search come up, week by week?",
            "now": "2025-04-14T12:00:00+01:00", "key": {"expect": "counts", "period": "week",
                                                        "turns": ["t00", "t02", "t04"]}}) + "\n")
    out = tmp_path / "folds.json"
    assert folds_main(["--chats", str(tmp_path / "chat0"), str(tmp_path / "chat1"), "--encoder", tiny_backbone,
                       "--output", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["features"] == list(FEATURES) and [q["chat"] for q in report["questions"]] == ["chat0", "chat1"]
    assert set(report["summary"]) == {"learned, expected count", "learned, p >= 0.5", "mixture", "null"}
    assert all(q["topic"] == "job search" and q["key_turns"] == 3 for q in report["questions"])
    assert folds_main(["--chats", str(tmp_path / "chat0"), "--encoder", tiny_backbone]) == 2
    assert "two chats or more" in capsys.readouterr().err
    (tmp_path / "chat1" / "questions.jsonl").write_text(json.dumps({
        "id": "c1", "question": "how often did the job search come up?", "now": "2025-04-14T12:00:00+01:00",
        "key": {"expect": "counts", "period": "week", "turns": ["t99"]}}) + "\n")
    assert folds_main(["--chats", str(tmp_path / "chat0"), str(tmp_path / "chat1"), "--encoder", tiny_backbone]) == 2
    assert "keys name turns the chat does not have: ['t99']" in capsys.readouterr().err
