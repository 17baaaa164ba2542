"""The memory's relevance model: its features, its cut, its folds, its training command and its place in the memory."""

from __future__ import annotations

import json

import numpy as np
import pytest
from card_checks import front_matter, python_blocks, working_directory
from test_train_dialogue_retriever import sample

from models.dual_encoder import load_encoder
from retrieval.data.jsonio import DataError
from retrieval.data.locomo_qa import read_samples, sample_utterances
from retrieval.memory.conversation_table import ConversationTable
from retrieval.memory.relevance.example import Example
from retrieval.memory.relevance.features import FEATURES, candidate_features
from retrieval.memory.relevance.folds import assign_folds, choose_cut, fit_with_cut, fold_models
from retrieval.memory.relevance.model import RelevanceModel, kept_positions
from retrieval.memory.relevance.rerank import RELEVANCE_RULE, RankRecorder, Reranker
from retrieval.memory.relevance_examples import conversation_key, examples
from retrieval.memory.temporal_memory import TemporalMemory
from train import memory_relevance


@pytest.fixture(scope="module")
def locomo_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("locomo") / "locomo.json"
    names = (("Ann", "Bob"), ("Cy", "Di"), ("Eve", "Fay"), ("Gus", "Hal"))
    path.write_text(json.dumps([sample(f"conv-{n}", pair) for n, pair in zip((1, 2, 3, 4), names)]))
    return path


@pytest.fixture(scope="module")
def encoder(tiny_backbone):
    return load_encoder(tiny_backbone)


@pytest.fixture(scope="module")
def by_conversation(locomo_file, encoder):
    return examples(encoder, locomo_file, None)


def synthetic(conversation: str, n: int = 6, k: int = 5, seed: int = 0) -> list[Example]:
    """Questions whose one relevant candidate (the first) has a higher first feature than the rest."""
    rng = np.random.default_rng(seed)
    out = []
    for q in range(n):
        x = rng.normal(size=(8, len(FEATURES)))
        x[0, 0] += 3.0
        out.append(Example(conversation, "test", f"q{q}", list(range(100 * q, 100 * q + 8)), x,
                           frozenset({100 * q}), k, cut=True, asks_when=False))
    return out


def test_conversation_keys_join_locomo_and_zyphra():
    assert conversation_key("conv-26") == conversation_key("26") == "26"


def test_examples_are_the_candidates_the_memory_ranks(by_conversation, locomo_file):
    assert sorted(by_conversation) == ["1", "2", "3", "4"]
    got = by_conversation["1"]
    assert {e.source for e in got} == {"locomo/1", "locomo/2", "locomo/3", "locomo/4"}  # category 5 is left out
    s = read_samples(locomo_file)[0]
    by_turn = {u.turn_id: u.response_idx for u in sample_utterances(s)}
    first = next(e for e in got if "pottery" in e.question)
    assert first.relevant == {by_turn["D1:1"]} and first.x.shape == (len(first.ids), len(FEATURES))
    assert set(first.ids) <= set(by_turn.values()) and first.y.sum() == 1  # the evidence is a candidate


def test_features_flag_the_named_speaker_and_a_when_question(encoder, locomo_file):
    s = read_samples(locomo_file)[0]
    table = ConversationTable.from_utterances(sample_utterances(s), encoder, turns=True)
    fused = [(int(i), 1.0 / (n + 1)) for n, i in enumerate(table.frame.index)]
    ann = table.frame.index[table.frame["speaker"] == "Ann"].tolist()
    ids, x = candidate_features(table, "pottery week", fused, ann, asks_when=True)
    col = {f: n for n, f in enumerate(FEATURES)}
    assert ids == [i for i, _ in fused]
    assert [bool(v) for v in x[:, col["named_speaker"]]] == [i in ann for i in ids]
    assert (x[:, col["asks_when"]] == 1).all() and x[0, col["first_stage"]] == 1.0
    assert x[:, col["overlap_text"]].max() == 1.0  # a row holds every content stem of the query
    assert candidate_features(table, "pottery", [], [], False)[1].shape == (0, len(FEATURES))


def test_expected_f2_keeps_one_sure_row_and_more_of_an_unsure_question():
    sure = np.array([0.95, 0.02, 0.02, 0.01])
    assert kept_positions(sure, 10, "expected_f2", 0.5).tolist() == [0]
    unsure = np.array([0.3, 0.28, 0.27, 0.25, 0.01])
    assert len(kept_positions(unsure, 10, "expected_f2", 0.5)) >= 3
    assert kept_positions(unsure, 2, "expected_f2", 0.5).tolist() == [0, 1]  # never more than k
    assert kept_positions(unsure, 10, "threshold", 0.275).tolist() == [0, 1]
    assert kept_positions(unsure, 10, "threshold", 0.9).tolist() == [0]  # the best row always


def test_model_learns_ranks_and_round_trips(tmp_path):
    train = synthetic("a") + synthetic("b", seed=1)
    x = np.concatenate([e.x for e in train])
    model = RelevanceModel.fit(x, np.concatenate([e.y for e in train]))
    p = model.probabilities(train[0].x)
    assert int(np.argmax(p)) == 0 and ((0 <= p) & (p <= 1)).all()
    model.save(tmp_path / "m", card="# card\n")
    again = RelevanceModel.load(tmp_path / "m")
    assert np.allclose(again.probabilities(x), model.probabilities(x)) and again.cut == model.cut


def test_a_broken_model_folder_is_named(tmp_path):
    with pytest.raises(DataError, match="no relevance model here"):
        RelevanceModel.load(tmp_path)
    (tmp_path / "relevance.json").write_text("{not json")
    with pytest.raises(DataError, match="not a relevance model"):
        RelevanceModel.load(tmp_path)
    (tmp_path / "relevance.json").write_text(json.dumps({"format": 1, "mean": [0.0], "scale": [1.0], "coef": [1.0],
                                                          "intercept": 0.0, "threshold": 0.5, "features": ["x"]}))
    with pytest.raises(DataError, match="retrain it"):
        RelevanceModel.load(tmp_path)


def test_folds_never_fit_on_the_conversation_they_score():
    by = {c: synthetic(c, seed=n) for n, c in enumerate("abcd")}
    folds = assign_folds(list(by), 2)
    assert folds == {"a": 0, "b": 1, "c": 0, "d": 1}
    models = fold_models(by, folds, inner_folds=2)
    for c, model in models.items():
        assert c not in model.training["conversations"]
        assert set(model.training["inner_f2_by_cut"]) == {"expected_f2", "threshold"}
    with pytest.raises(DataError, match="need 2 to 4 folds"):
        assign_folds(list(by), 5)


def test_choose_cut_prefers_the_rule_with_the_better_f2():
    ex = synthetic("a")
    sure = [np.eye(8)[0] * 0.98 + 0.001 for _ in ex]  # the relevant row sure, the rest near 0
    rule, _, scores = choose_cut(ex, sure)
    assert scores["expected_f2"] == 100.0 and rule == "expected_f2"


def test_the_second_stage_reorders_and_cuts_the_memory_ranking(by_conversation, encoder, locomo_file):
    model = fit_with_cut([e for c in ("1", "2", "3") for e in by_conversation[c]], inner_folds=3)
    s = read_samples(locomo_file)[3]
    table = ConversationTable.from_utterances(sample_utterances(s), encoder, turns=True)
    recorder = RankRecorder()
    TemporalMemory(table, relevance=recorder).when_evidence("When did Gus spend the week on chess?")
    assert recorder.calls and recorder.calls[0].asks_when  # the when-evidence ranking says it is one
    learned = TemporalMemory(table, relevance=Reranker(model), evidence_rule="top")
    rows = learned.ask("What did Hal spend the week on, surfing?")
    probabilities = [rows.execution.scores[i] for i in rows.ids]
    assert probabilities == sorted(probabilities, reverse=True) and all(0 <= p <= 1 for p in probabilities)
    assert 1 <= len(rows.ids) <= 10


def test_training_command_writes_a_loadable_model_with_its_card_and_resumes(locomo_file, tiny_backbone, tmp_path):
    out = tmp_path / "relevance"
    argv = ["--locomo", str(locomo_file), "--zyphra-dir", "", "--encoder", tiny_backbone, "--output-dir", str(out),
            "--cache-dir", "", "--inner-folds", "2"]
    assert memory_relevance.main(argv) == 0
    model = RelevanceModel.load(out)
    assert model.training["conversations"] == ["1", "2", "3", "4"] and model.training["encoder"]
    assert sorted(p.stem for p in (out / "examples").glob("*.json")) == ["1", "2", "3", "4"]
    card = (out / "README.md").read_text()
    assert front_matter(card)["library_name"] == "ctbls"
    with working_directory(tmp_path):
        for block in python_blocks(card):  # the card's snippet runs as written
            exec(block.replace(str(out), str(out)), {})
    cached = json.loads((out / "examples" / "4.json").read_text())
    (out / "examples" / "4.json").write_text(json.dumps({**cached, "examples": []}))  # resumed: read, not redone
    with pytest.raises(DataError, match=r"conversations \['4'\]"):
        memory_relevance.main(argv)
    (out / "examples" / "4.json").write_text(json.dumps({"key": {}, "examples": []}))  # another version: redone
    assert memory_relevance.main(argv) == 0


def test_memory_commands_take_a_relevance_model(tmp_path, tiny_backbone, capsys):
    from test_live_command import write_log

    from retrieval.memory import live, temporal_memory

    train = synthetic("a") + synthetic("b", seed=1)
    model = RelevanceModel.fit(np.concatenate([e.x for e in train]), np.concatenate([e.y for e in train]))
    folder = model.save(tmp_path / "relevance")
    log, memory_dir = write_log(tmp_path / "log.jsonl"), tmp_path / "memory"
    assert live.main(["import", str(log), "--memory", str(memory_dir), "--encoder", tiny_backbone]) == 0
    capsys.readouterr()
    question = "What did Ann say about the beagle?"
    assert live.main(["ask", "--memory", str(memory_dir), "--relevance", str(folder), question, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert rows and all(0 <= r["score"] <= 1 for r in rows)  # the model's probabilities, not the fused scores
    assert temporal_memory.main(["ask", "--log", str(log), "--encoder", tiny_backbone, "--cache-dir", "",
                                 "--relevance", str(folder), question]) == 0
    assert live.main(["ask", "--memory", str(memory_dir), "--relevance", str(tmp_path / "none"), question]) == 2
    assert "no relevance model here" in capsys.readouterr().err


def test_a_conversation_only_one_source_holds_is_no_error(by_conversation, encoder, locomo_file, data_dir):
    from retrieval.memory.relevance_examples import zyphra_examples

    assert zyphra_examples(data_dir / "zyphra_temporal", encoder, only=["30"]) == {}  # LoCoMo's conv-30: no log


def test_the_service_asks_every_memory_with_its_relevance_model(tmp_path, encoder):
    from retrieval.service.registry import MemoryRegistry

    train = synthetic("a") + synthetic("b", seed=1)
    folder = RelevanceModel.fit(np.concatenate([e.x for e in train]),
                                np.concatenate([e.y for e in train])).save(tmp_path / "relevance")
    registry = MemoryRegistry(tmp_path / "service", encoder, max_open=1, relevance=str(folder))
    first, key = registry.create("a")
    registry.create("b")  # closes the first (one open at a time): it is reopened below with the same settings
    with registry.use(first, key) as memory:
        assert isinstance(memory.relevance, Reranker) and memory.evidence_rule == RELEVANCE_RULE
    registry.close()
    with pytest.raises(DataError, match="no relevance model here"):
        MemoryRegistry(tmp_path / "service2", encoder, relevance=str(tmp_path / "none"))


def test_folds_name_a_source_that_is_missing(tmp_path, encoder, locomo_file):
    from eval.relevance_folds import fold_relevance

    with pytest.raises(DataError, match="--zyphra-dir .*not found"):
        fold_relevance(2, encoder, locomo_file, tmp_path / "no_zyphra")
    models = fold_relevance(2, encoder, locomo_file, "")  # '' leaves the source out
    assert sorted(models) == ["1", "2", "3", "4"]


def test_the_page_asks_with_the_relevance_model(tmp_path, encoder):
    from app_fixtures import write_log

    from retrieval.app.memory_demo import LiveMemory, MemoryDemo

    train = synthetic("a") + synthetic("b", seed=1)
    folder = str(RelevanceModel.fit(np.concatenate([e.x for e in train]),
                                    np.concatenate([e.y for e in train])).save(tmp_path / "relevance"))
    logs = {"log": (write_log(tmp_path / "log.jsonl"), "jsonl", None)}
    demo = MemoryDemo(encoder, logs, relevance=folder)
    memory = demo.memory("log")
    assert isinstance(memory.relevance, Reranker) and memory.evidence_rule == RELEVANCE_RULE
    scores = demo.ask(memory, "What did we say about the dentist?").result.execution.scores
    assert scores and all(0 <= s <= 1 for s in scores.values())  # the model's probabilities
    live = LiveMemory(str(tmp_path / "live"), encoder, demo.relevance, demo.evidence_rule)
    assert isinstance(live.get().relevance, Reranker)
    live.close()
    assert MemoryDemo(encoder, logs).memory("log").relevance is None  # without one: the hand-tuned ranking
    with pytest.raises(DataError, match="no relevance model here"):
        MemoryDemo(encoder, logs, relevance=str(tmp_path / "none"))
