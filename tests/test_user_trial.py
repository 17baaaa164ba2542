"""The user trial's command: a chat and keyed questions asked of both memories, each answer judged by its key."""

from __future__ import annotations

import json

from eval.user_trial import main

CHAT = [("t000", "Ann", "The dentist is on the 14th, at nine", "2025-04-02T10:00:00+02:00"),
        ("t001", "Bob", "Good luck with it", "2025-04-02T10:01:00+02:00"),
        ("t002", "Ann", "We adopted a cat called Miso yesterday", "2025-04-05T18:00:00+02:00"),
        ("t003", "Bob", "Miso! What a name for a cat", "2025-04-05T18:02:00+02:00"),
        ("t004", "Ann", "The concert was amazing", "2025-04-09T22:00:00+02:00")]
NOW = "2025-04-20T12:00:00+02:00"
QUESTIONS = [
    {"id": "q1", "question": "What did we talk about on April 5th?",
     "key": {"expect": "turns", "turns": ["t002", "t003"]}},
    {"id": "q2", "question": "What did we talk about on April 7th?", "key": {"expect": "none", "start": "2025-04-07",
                                                                          "end": "2025-04-07"}},
    {"id": "q3", "question": "When did Ann adopt the cat?", "key": {"expect": "date", "start": "2025-04-04",
                                                                   "end": "2025-04-04"}},
    {"id": "q4", "question": "What did we discuss on April 9th?", "key": {"expect": "turns", "turns": ["t000"]}},
]


def test_the_trial_asks_both_memories_and_judges_each_answer_by_its_key(tmp_path, tiny_backbone):
    chat, questions, out = tmp_path / "chat.jsonl", tmp_path / "questions.jsonl", tmp_path / "trial.json"
    chat.write_text("".join(json.dumps({"id": i, "speaker": s, "text": t, "timestamp": ts}) + "\n"
                            for i, s, t, ts in CHAT))
    questions.write_text("".join(json.dumps({**q, "now": NOW, "history": []}) + "\n" for q in QUESTIONS))
    assert main(["--chat", str(chat), "--questions", str(questions), "--encoder", tiny_backbone,
                 "--output", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["turns"] == 5 and set(report["engines"]) == {"file", "living"}
    for engine in report["engines"].values():
        verdicts = {a["id"]: a for a in engine["answers"]}
        assert verdicts["q1"]["verdict"] == "right" and verdicts["q1"]["found"] == [2, 3]  # the day's two turns
        assert verdicts["q2"]["verdict"] == "right"  # nothing on the 7th, and nothing offered
        assert verdicts["q3"]["verdict"] == "right"  # "yesterday", said on the 5th
        # a key that names a turn of another day: the 9th's row comes back, the key's does not; and nothing warns
        assert verdicts["q4"]["verdict"] == "wrong" and verdicts["q4"]["silent"]
        assert engine["summary"]["all"]["silent wrong"] == 1 and engine["summary"]["n"] == 4


def test_a_key_naming_a_turn_the_chat_lacks_is_refused(tmp_path, tiny_backbone, capsys):
    chat, questions = tmp_path / "chat.jsonl", tmp_path / "questions.jsonl"
    chat.write_text(json.dumps({"id": "t000", "speaker": "Ann", "text": "hi", "timestamp": NOW}) + "\n")
    questions.write_text(json.dumps({"question": "What did Ann say?", "key": {"expect": "turns", "turns": ["t9"]}})
                         + "\n")
    assert main(["--chat", str(chat), "--questions", str(questions), "--encoder", tiny_backbone]) == 2
    assert "t9" in capsys.readouterr().err


def test_with_a_relevance_model_the_hand_tuned_memory_is_the_baseline_and_warnings_are_counted(tmp_path,
                                                                                             tiny_backbone):
    import math

    from eval.user_trial import HAND_TUNED, headline
    from retrieval.memory.relevance.features import FEATURES
    from retrieval.memory.relevance.model import RelevanceModel

    n = len(FEATURES)  # a model unsure of every row: every answer it ranks says its evidence is weak
    model = RelevanceModel([0.0] * n, [1.0] * n, [0.0] * n, math.log(0.2 / 0.8), 0.5).save(tmp_path / "model")
    chat, questions, out = tmp_path / "chat.jsonl", tmp_path / "questions.jsonl", tmp_path / "trial.json"
    chat.write_text("".join(json.dumps({"id": i, "speaker": s, "text": t, "timestamp": ts}) + "\n"
                            for i, s, t, ts in CHAT))
    questions.write_text(json.dumps({**QUESTIONS[2], "now": NOW, "history": []}) + "\n")
    assert main(["--chat", str(chat), "--questions", str(questions), "--encoder", tiny_backbone,
                 "--relevance", str(model), "--output", str(out)]) == 0
    report = json.loads(out.read_text())
    assert set(report["engines"]) == {"file", "living", HAND_TUNED}
    learned, hand = report["engines"]["living"], report["engines"][HAND_TUNED]
    assert learned["answers"][0]["verdict"] == "right" and learned["summary"]["all"]["warned right"] == 1
    assert learned["answers"][0]["warnings"][0].startswith("weak evidence:")
    assert hand["answers"][0]["verdict"] == "right" and not hand["answers"][0]["warnings"]
    rows = {h.metric: h for h in headline(report)}
    assert rows["right, with a warning"].ours == 1
    assert rows["right, with a warning"].baselines["hand-tuned ranking (no relevance model)"] == 0
