"""Each benchmark we build, as plain rows: dicts of strings, integers and lists, one function per benchmark.

    for row in ottqa_conversation_rows("../shared/data", split="test"): ...

:mod:`retrieval.data.hf_datasets` gives every function here its ``datasets`` features and turns its rows into a
``datasets.Dataset``; the columns are documented there. Each function takes the data root (the folder holding
``ottqa/``, ``zyphra_temporal/``, ``locomo/``, ``sqa/``) and, for a benchmark with splits, the split
to keep (None: all), and yields its rows in the readers' order, so two exports of the same data are the same
rows in the same order.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from retrieval.data.conversation_log import Utterance, read_zyphra_log
from retrieval.data.jsonio import DataError
from retrieval.data.locomo_qa import evidence_questions, read_samples, sample_id, sample_utterances
from retrieval.data.ottqa import load_questions, load_tables
from retrieval.data.ottqa_conversations import build_conversations, table_split
from retrieval.data.sqa import load_sqa
from retrieval.data.zyphra_temporal import log_paths, read_questions

LOCOMO_CATEGORIES = (1, 2, 3, 4, 5)


def _folder(data_dir: str | Path, name: str) -> Path:
    folder = Path(data_dir) / name
    if not folder.is_dir():
        raise DataError(f"{folder}: not found; --data-dir must be the data root holding {name}/")
    return folder


def _locomo_file(data_dir: str | Path) -> Path:
    return _folder(data_dir, "locomo") / "locomo_open.json"


def ottqa_conversation_rows(data_dir: str | Path, split: str | None = None) -> Iterator[dict]:
    """One row per turn of the OTT-QA conversations (the questions about one table, in file order)."""
    folder = _folder(data_dir, "ottqa")
    tables = load_tables(folder / "tables.jsonl")
    for conv in build_conversations(load_questions(folder / "questions_dev.json"), tables, split):
        history: list[dict] = []
        for position, turn in enumerate(conv.turns):
            yield {"conversation_id": conv.conv_id, "position": position, "turn_id": turn.turn_id,
                   "table_id": conv.table_id, "split": table_split(conv.table_id), "question": turn.query,
                   "answer": turn.answer, "answer_cells": [{"row": r, "column": c} for r, c in turn.targets],
                   "history": list(history)}
            history.append({"question": turn.query, "answer": turn.answer})


def ottqa_table_rows(data_dir: str | Path, split: str | None = None) -> Iterator[dict]:
    """One row per OTT-QA table, in ``tables.jsonl`` order."""
    for uid, table in load_tables(_folder(data_dir, "ottqa") / "tables.jsonl").items():
        ours = table_split(uid)
        if split is not None and ours != split:
            continue
        yield {"uid": uid, "title": table.title, "section_title": table.section_title,
               "section_text": table.section_text, "intro": table.intro, "header": list(table.header),
               "rows": [[cell.text for cell in row] for row in table.rows],
               "links": [[list(cell.links) for cell in row] for row in table.rows],
               "split": ours, "ottqa_split": table.split}


def zyphra_temporal_rows(data_dir: str | Path, split: str | None = None) -> Iterator[dict]:
    """One row per version of each test question of Zyphra's TemporalMemoryDataset."""
    for q in read_questions(_folder(data_dir, "zyphra_temporal")):
        yield {"log": q.log, "kind": q.kind, "subtype": q.subtype, "item": q.item, "version": q.version,
               "question": q.question,
               "history": [{"speaker": str(t.get("speaker", "")), "text": t["text"]} for t in q.history],
               "relevant": sorted(q.relevant)}


def locomo_qa_rows(data_dir: str | Path, split: str | None = None) -> Iterator[dict]:
    """One row per LoCoMo question (every category) with at least one evidence turn of its conversation."""
    path = _locomo_file(data_dir)
    for i, sample in enumerate(read_samples(path)):
        utterances = sample_utterances(sample, str(path), i)
        turn_id = {u.response_idx: u.turn_id for u in utterances}
        for position, q in enumerate(evidence_questions(sample, utterances, LOCOMO_CATEGORIES)):
            yield {"sample_id": sample_id(sample, i), "position": position, "question": q.question,
                   "category": q.category, "answer": q.answer, "adversarial_answer": q.adversarial_answer,
                   "evidence": list(q.evidence), "evidence_turn_ids": [turn_id[e] for e in q.evidence]}


def sqa_rows(data_dir: str | Path, split: str | None = None) -> Iterator[dict]:
    """One row per turn of SQA's sequences in train.tsv (a sequence is one conversation over one table)."""
    data = load_sqa(_folder(data_dir, "sqa"), split)
    for conv in data.conversations:
        table = data.tables[conv.table_id]
        history: list[dict] = []
        for position, turn in enumerate(conv.turns):
            texts = data.answer_texts[turn.turn_id]
            yield {"conversation_id": conv.conv_id, "position": position, "turn_id": turn.turn_id,
                   "table_id": conv.table_id, "split": table.split, "question": turn.query, "answer_text": texts,
                   "answer_cells": [{"row": r, "column": c} for r, c in turn.targets], "history": list(history)}
            history.append({"question": turn.query, "answer": turn.answer})


def _utterance(source: str, log: str, u: Utterance) -> dict:
    return {"source": source, "log": log, "response_idx": u.response_idx, "session": u.session,
            "speaker": u.speaker, "timestamp": u.timestamp.isoformat(timespec="microseconds"), "text": u.text,
            "turn_id": u.turn_id}


def log_rows(data_dir: str | Path, split: str | None = None) -> Iterator[dict]:
    """One row per utterance of Zyphra's conversation logs, then of LoCoMo's conversations."""
    for log, path in log_paths(_folder(data_dir, "zyphra_temporal")).items():
        for u in read_zyphra_log(path):
            yield _utterance("zyphra", log, u)
    path = _locomo_file(data_dir)
    for i, sample in enumerate(read_samples(path)):
        for u in sample_utterances(sample, str(path), i):
            yield _utterance("locomo", sample_id(sample, i), u)
