"""LoCoMo's evidence questions and train/dialogue_retriever.py end to end on a tiny LoCoMo file."""

from __future__ import annotations

import json

import pytest
from accelerate.state import AcceleratorState
from card_checks import check_card

from retrieval.data.jsonio import DataError
from retrieval.data.locomo_qa import evidence_questions, read_samples, sample_utterances
from retrieval.memory.conversation_table import ConversationTable
from retrieval.memory.temporal_memory import TemporalMemory
from train import dialogue_retriever


def conversation(names: tuple[str, str], topics: list[str]) -> dict:
    """Two sessions a week apart; each utterance names a topic, so questions have one right turn."""
    a, b = names
    conv = {"speaker_a": a, "speaker_b": b}
    for s, day in ((1, 5), (2, 12)):
        conv[f"session_{s}_date_time"] = f"9:00 am on {day} May, 2023"
        conv[f"session_{s}"] = [{"speaker": (a, b)[i % 2], "dia_id": f"D{s}:{i + 1}",
                                 "text": f"{(b, a)[i % 2]}, I spent the week on {topic}."}
                                for i, topic in enumerate(topics[(s - 1) * 4:s * 4])]
    return conv


TOPICS = ["pottery", "surfing", "chess", "baking", "violin", "gardening", "hiking", "painting"]


def sample(sid: str, names: tuple[str, str]) -> dict:
    qa = [{"question": f"What did {names[i % 2]} spend the week on, {t}?", "answer": t,
           "evidence": [f"D{1 + i // 4}:{1 + i % 4}"], "category": (4, 1, 3, 2)[i % 4]}
          for i, t in enumerate(TOPICS)]
    qa += [{"question": "Which hobby is unknown?", "evidence": ["D9:9"], "category": 4},  # no such turn: skipped
           {"question": "What did the other one do?", "evidence": ["D1:2"], "category": 5}]
    return {"sample_id": sid, "conversation": conversation(names, TOPICS), "qa": qa}


@pytest.fixture()
def locomo_file(tmp_path):
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([sample("conv-a", ("Ann", "Bob")), sample("conv-b", ("Cy", "Di")),
                                sample("conv-v", ("Eve", "Fay"))]))
    return path


def test_evidence_questions_keep_categories_and_known_turns(locomo_file):
    s = read_samples(locomo_file)[0]
    utterances = sample_utterances(s)
    questions = evidence_questions(s, utterances, categories=(1, 3, 4))
    assert len(questions) == 6  # 8 topics, two of them category 2; the unknown evidence id is dropped
    assert {q.category for q in questions} == {1, 3, 4}
    by_turn = {u.turn_id: u.response_idx for u in utterances}
    assert questions[0].evidence == (by_turn["D1:1"],)
    assert [q.question for q in evidence_questions(s, utterances, categories=(2,))] == [
        "What did Bob spend the week on, baking?", "What did Bob spend the week on, painting?"]


def test_read_samples_rejects_a_sample_without_a_conversation(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps([{"sample_id": "conv-z", "qa": []}]))
    with pytest.raises(DataError, match="conv-z has no 'conversation'"):
        read_samples(path)


def test_pairs_use_the_planner_query_and_negatives_from_the_evidence_day(locomo_file):
    args = dialogue_retriever.DialogueRetrieverArguments(locomo=str(locomo_file), val_samples="conv-v")
    train_samples, val_samples = dialogue_retriever.split_samples(read_samples(locomo_file), args)
    assert [s["sample_id"] for s in train_samples] == ["conv-a", "conv-b"]  # all but the validation samples
    assert [s["sample_id"] for s in val_samples] == ["conv-v"]
    pairs = dialogue_retriever.build_pairs(train_samples[:1], args)
    assert len(pairs) == 2 * 7  # two views of the one evidence turn of each question of categories 1, 3, 4, 5
    first = pairs[0]
    assert "Ann" not in first["query"] and "pottery" in first["query"]  # names go, content stays
    assert first["document"] == "Bob, I spent the week on pottery."
    assert len(first["negatives"]) == 2 and first["document"] not in first["negatives"]
    assert all("week on" in n for n in first["negatives"])
    day_one = {"pottery", "surfing", "chess", "baking"}
    assert all(any(t in n for t in day_one) for n in first["negatives"])  # same day only
    assert first["doc_id"] not in first["negative_ids"]


def test_unknown_or_overlapping_samples_are_errors(locomo_file):
    samples = read_samples(locomo_file)
    args = dialogue_retriever.DialogueRetrieverArguments(locomo=str(locomo_file), train_samples="conv-a,conv-q")
    with pytest.raises(DataError, match="conv-q"):
        dialogue_retriever.split_samples(samples, args)
    args = dialogue_retriever.DialogueRetrieverArguments(locomo=str(locomo_file))  # default val: conv-30
    with pytest.raises(DataError, match=r"no samples \['conv-30'\]"):
        dialogue_retriever.split_samples(samples, args)
    args = dialogue_retriever.DialogueRetrieverArguments(locomo=str(locomo_file), train_samples="conv-a",
                                                         val_samples="conv-a")
    with pytest.raises(DataError, match="both trained on and validated on"):
        dialogue_retriever.split_samples(samples, args)


def test_training_validates_on_held_out_conversations_and_saves_a_loadable_encoder(
        locomo_file, tiny_backbone, tmp_path):
    AcceleratorState._reset_state(True)
    out = tmp_path / "run"
    results = dialogue_retriever.main([
        "--locomo", str(locomo_file), "--model-name-or-path", tiny_backbone, "--output-dir", str(out),
        "--train-samples", "conv-a,conv-b", "--val-samples", "conv-v", "--per-device-train-batch-size", "4",
        "--max-train-steps", "3", "--learning-rate", "1e-3", "--num-warmup-steps", "1",
        "--max-document-length", "32", "--cache-dir", str(tmp_path / "cache")])
    assert results["steps"] == 3 and results["train_examples"] == 28
    record = results["epochs"][0]
    assert record["n"] == 7 and 0.0 <= record["top1"] <= record["top3"] <= record["top10"] <= 1.0
    assert (out / "model.safetensors").is_file() and (out / "config.yaml").is_file()
    meta = check_card(out, tmp_path, record, ["LoCoMo"])  # the card, its snippets run as written
    assert meta["license"] == "cc-by-nc-4.0"  # LoCoMo's terms
    assert "content query" in (out / "README.md").read_text()
    from models.dual_encoder import load_encoder

    encoder = load_encoder(str(out))
    s = read_samples(locomo_file)[2]
    memory = TemporalMemory(ConversationTable.from_utterances(sample_utterances(s), encoder, turns=True))
    ranked = memory.rank_rows("What did Eve spend the week on, chess?", memory.table.frame, 3)
    assert len(ranked) == 3 and set(ranked) <= set(memory.table.frame.index)


def test_missing_locomo_file_is_one_error_line(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        dialogue_retriever.run_cli(lambda: dialogue_retriever.main(["--locomo", str(tmp_path / "nope.json")]))
    assert stop.value.code == 2
    assert "nope.json" in capsys.readouterr().err
