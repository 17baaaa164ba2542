"""The trend analysis's per-turn topic model: chats a person marked, its features, its training command, and
``--threshold turns`` counting the expected number of turns about a topic."""

from __future__ import annotations

import json
import random
from dataclasses import replace

import numpy as np
import pytest

from models.dual_encoder import load_encoder
from retrieval.data.jsonio import DataError
from retrieval.trends.analysis import TrendConfig, analyse_trend
from retrieval.trends.corpus import load_corpus
from retrieval.trends.topic_labels import labelled_topics
from retrieval.trends.topic_turns import FEATURES, PACKAGED_TOPIC_MODEL, TopicTurnModel, turn_features

TEXTS = ["the job interview went well", "fingers crossed for you", "another interview on monday",
         "lovely weather today", "got the job offer!", "see you", "the cat knocked over a plant", "pizza tonight?",
         "the train was late", "my sister visits on sunday", "new running shoes", "the film was too long"]
ABOUT = ["t00", "t01", "t02", "t04"]


def write_chat(folder, questions=None, minute=0):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "chat.jsonl").write_text("".join(
        json.dumps({"id": f"t{i:02d}", "speaker": "Ann" if i % 2 else "Bob", "text": t,
                    "timestamp": f"2025-04-{1 + i // 2:02d}T10:{minute + i % 2:02d}:00+01:00"}) + "\n"
        for i, t in enumerate(TEXTS)))
    questions = questions if questions is not None else [{
        "id": "c1", "question": "how often did the job search come up, week by week?",
        "now": "2025-04-14T12:00:00+01:00", "key": {"expect": "counts", "period": "week", "turns": ABOUT}}]
    (folder / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions))
    return folder


def test_labelled_topics_read_the_marked_turns_and_the_topic_as_the_analysis_reads_it(tmp_path, tiny_backbone):
    (topic,) = labelled_topics(write_chat(tmp_path / "chat"), load_encoder(tiny_backbone))
    assert topic.chat == "chat" and topic.topic == "job search" and topic.period == "week"
    assert topic.about.tolist() == [1.0, 1.0, 1.0, 0.0, 1.0] + [0.0] * 7
    x = turn_features(topic.corpus.table, topic.topic)
    assert x.shape == (12, len(FEATURES)) and np.isfinite(x).all()
    stems, distance = x[:, FEATURES.index("stems")], x[:, FEATURES.index("seed_distance")]
    assert stems[0] > 0 and stems[3] == 0  # "the job interview" names the topic; the weather does not
    assert distance[0] == 0 and distance[1] == pytest.approx(0.1)  # one turn from a turn that names it


@pytest.mark.parametrize("questions, message", [
    ([], "no trend questions"),
    ([{"question": "how much work?", "now": "2025-04-14T12:00:00+01:00", "key": {"expect": "counts",
                                                                               "turns": ["t00"]}}], "period"),
    ([{"question": "how much work?", "now": "2025-04-14T12:00:00+01:00", "key": {"expect": "counts",
                                                                               "period": "week", "turns": ["t77"]}}],
     "keys name turns the chat does not have: ['t77']"),
])
def test_a_chat_without_usable_labels_is_refused_by_name(tmp_path, tiny_backbone, questions, message):
    with pytest.raises(DataError, match=message.replace("[", r"\[").replace("]", r"\]")):
        labelled_topics(write_chat(tmp_path / "chat", questions), load_encoder(tiny_backbone))


def test_the_training_command_writes_a_model_that_counts_a_trend(tmp_path, tiny_backbone):
    from train.topic_turns import main

    chats = [write_chat(tmp_path / f"chat{n}", minute=10 * n) for n in range(2)]
    assert main(["--chats", *map(str, chats), "--encoder", tiny_backbone, "--output-dir", str(tmp_path / "model"),
                 "--planted-log", ""]) == 0
    model = TopicTurnModel.load(tmp_path / "model")
    assert model.features == FEATURES and model.training["about"] == 8 and model.training["topics"] == 2
    assert (tmp_path / "model" / "README.md").read_text().startswith("---")
    corpus = load_corpus(chats[0] / "chat.jsonl", load_encoder(tiny_backbone))
    config = TrendConfig(now="2025-04-14T12:00:00+01:00", threshold="turns", topic_model=str(tmp_path / "model"))
    result = analyse_trend(corpus, "how often did the job search come up, week by week?", config)
    p = model.probabilities(turn_features(corpus.table, "job search"))
    assert result.threshold.method == "turns" and result.n_relevant == pytest.approx(p.sum())  # the expected count
    assert result.counted_ids() == set(np.flatnonzero(p >= 0.5).tolist())
    # the default (auto) counts a conversation by the topic model when it was trained with the corpus's encoder
    auto = analyse_trend(corpus, "how often did the job search come up?", replace(config, threshold="auto"))
    assert auto.threshold.method == "turns" and auto.n_relevant == pytest.approx(p.sum())
    assert any(n.startswith("counted by the per-turn topic model") for n in auto.notes)


def test_auto_counts_by_the_mixture_where_the_topic_model_does_not_apply(tmp_path, tiny_backbone):
    encoder = load_encoder(tiny_backbone)
    chat = load_corpus(write_chat(tmp_path / "chat") / "chat.jsonl", encoder)  # the packaged model: another encoder
    result = analyse_trend(chat, "how often did the job search come up?", TrendConfig(now="2025-04-14T12:00:00+01:00"))
    assert result.threshold.method == "mixture"
    assert "counted by the cosine scores' mixture (the topic model was trained with another encoder)" in result.notes
    notes = tmp_path / "notes.jsonl"  # one writer's notes: no conversation
    notes.write_text("".join(json.dumps({"text": t, "timestamp": f"2025-04-{1 + i:02d}T10:00:00+01:00"}) + "\n"
                             for i, t in enumerate(TEXTS)))
    config = TrendConfig(now="2025-04-14T12:00:00+01:00", topic_model=str(tmp_path / "none"))  # never loaded
    result = analyse_trend(load_corpus(notes, encoder), "how often did the job search come up?", config)
    assert "counted by the cosine scores' mixture (the documents are no conversation)" in result.notes


def test_a_planted_log_gives_the_topic_model_rows_to_learn_from(tiny_backbone):
    from retrieval.data.conversation_log import load_log
    from retrieval.data.paths import ZYPHRA_DIR
    from retrieval.trends.planted import CALIBRATION_FRAMES, PLANTED_LOG, TOPICS, plant_topics, planted_turn_rows

    if not (ZYPHRA_DIR / "ConversationData" / f"{PLANTED_LOG}.json").is_file():
        pytest.skip("the Zyphra data is not beside the repository")
    x, y = planted_turn_rows(ZYPHRA_DIR, PLANTED_LOG, load_encoder(tiny_backbone), None)
    utterances, truth, _ = plant_topics(load_log(ZYPHRA_DIR / "ConversationData" / f"{PLANTED_LOG}.json"),
                                        CALIBRATION_FRAMES, random.Random(f"0:{PLANTED_LOG}"))
    assert x.shape == (len(TOPICS) * len(utterances), len(FEATURES)) and np.isfinite(x).all()
    assert y.sum() == sum(label in TOPICS for label in truth.values())  # planted turns; near misses are not


def test_the_packaged_model_loads_and_refuses_another_encoders_corpus(tmp_path, tiny_backbone):
    model = TopicTurnModel.load(PACKAGED_TOPIC_MODEL)
    assert model.features == FEATURES and model.training["chats"] == ["trial", "trial_dev2", "trial_dev3",
                                                                       "trial_dev4", "trial_dev5"]
    corpus = load_corpus(write_chat(tmp_path / "chat") / "chat.jsonl", load_encoder(tiny_backbone))
    with pytest.raises(DataError, match="trained with the encoder"):
        analyse_trend(corpus, "how much did we talk about the job?", TrendConfig(threshold="turns"))
    with pytest.raises(DataError, match="train.topic_turns"):  # a relevance model's folder is not one
        TopicTurnModel.load(tmp_path)


@pytest.mark.slow
def test_training_again_on_the_development_chats_gives_the_packaged_weights(tmp_path):
    from train.topic_turns import main

    chats = ["eval/trial", "eval/trial_dev2", "eval/trial_dev3", "eval/trial_dev4", "eval/trial_dev5"]
    assert main(["--chats", *chats, "--output-dir", str(tmp_path / "model")]) == 0
    again, packaged = TopicTurnModel.load(tmp_path / "model"), TopicTurnModel.load(PACKAGED_TOPIC_MODEL)
    assert np.allclose(again.coef, packaged.coef, atol=1e-6) and again.training == packaged.training
