"""The conversational benchmarks the state tracker trains and is evaluated on, behind one switch.

    train = load_conversation_set("sqa", "train", "../shared/data")
    dev = load_conversation_set("sqa", selection_split("sqa"), "../shared/data")  # where settings are chosen

A dataset differs only in its reader: ``ottqa`` builds conversations from OTT-QA's questions grouped by table
(:mod:`retrieval.data.ottqa_conversations`: splits train / val / test), ``sqa`` reads SQA's question sequences
(:mod:`retrieval.data.sqa`: our table split of train.tsv into train / dev / validation). Both give the shared types
(:class:`Conversation` over :class:`Table`), so the tracker, its losses, the training loop, the index and the
evaluation are the same code for both.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from retrieval.data.jsonio import DataError
from retrieval.data.ottqa import load_passages, load_questions, load_tables
from retrieval.data.ottqa_conversations import SPLITS as OTTQA_SPLITS
from retrieval.data.ottqa_conversations import BenchmarkReport, build_conversations, require_conversations
from retrieval.data.sqa import QUESTIONS_FILE, load_sqa
from retrieval.data.sqa import SPLITS as SQA_SPLITS
from retrieval.data.types import Conversation, Table

DATASETS = ("ottqa", "sqa")
SPLITS = {"ottqa": OTTQA_SPLITS, "sqa": SQA_SPLITS}
# (train on, choose settings on, report on)
ROLES = {"ottqa": ("train", "val", "test"), "sqa": ("train", "dev", "validation")}
OTTQA_FILES = {"tables": "tables.jsonl", "questions": "questions_dev.json", "passages": "passages_dev.jsonl"}


def selection_split(dataset: str) -> str:
    """The split a dataset's settings are chosen on (the tracker's validation during training)."""
    return ROLES[dataset][1]


def report_split(dataset: str) -> str:
    """The split a dataset's figures are reported on."""
    return ROLES[dataset][2]


@dataclass
class ConversationSet:
    """Conversations of one split with their tables (and OTT-QA's linked passages).

    ``answer_texts``: each turn's gold answer as a set of cell texts (SQA's ``answer_text``; for OTT-QA the one
    answer text). ``report``: what the reader dropped (answer cells outside their table, ...)."""

    dataset: str
    split: str | None
    conversations: list[Conversation]
    tables: dict[str, Table]
    passages: dict[str, str] = field(default_factory=dict)
    answer_texts: dict[str, list[str]] = field(default_factory=dict)
    report: dict[str, int] = field(default_factory=dict)


def _ottqa(split: str | None, data_dir: Path, questions: str | None, tables: str | None,
           passages: str | None, use_passages: bool) -> ConversationSet:
    folder = data_dir / "ottqa"
    tables_path = tables or folder / OTTQA_FILES["tables"]
    questions_path = questions or folder / OTTQA_FILES["questions"]
    all_tables = load_tables(tables_path)
    found = load_passages(passages or folder / OTTQA_FILES["passages"]) if use_passages else {}
    report = BenchmarkReport()
    qs = load_questions(questions_path)
    convs = require_conversations(build_conversations(qs, all_tables, split, report), qs, split, questions_path,
                                  tables_path)
    answers = {t.turn_id: [t.answer] if t.answer else [] for c in convs for t in c.turns}
    return ConversationSet("ottqa", split, convs, all_tables, found, answers, report.as_dict())


def load_conversation_set(dataset: str, split: str | None, data_dir: str | Path, questions: str | None = None,
                          tables: str | None = None, passages: str | None = None,
                          use_passages: bool = True) -> ConversationSet:
    """The conversations of ``split`` (None: all) of ``dataset``, read from the data root ``data_dir``.

    ``questions`` replaces the default questions file (OTT-QA's questions_dev.json, SQA's train.tsv) with any file
    in the same format; ``tables`` and ``passages`` are OTT-QA's (SQA's tables are the ``table_csv`` files the
    questions name, read relative to ``data_dir/sqa``).
    """
    if dataset not in DATASETS:
        raise DataError(f"unknown dataset {dataset!r}; choose from {', '.join(DATASETS)}")
    if split is not None and split not in SPLITS[dataset]:
        raise DataError(f"{dataset}: no split {split!r}; its splits are {', '.join(SPLITS[dataset])}")
    data_dir = Path(data_dir)
    if dataset == "ottqa":
        return _ottqa(split, data_dir, questions, tables, passages, use_passages)
    data = load_sqa(data_dir / "sqa", split, questions)
    if not data.conversations:
        raise DataError(f"{questions or data_dir / 'sqa' / QUESTIONS_FILE}: no sequence over a table of split "
                        f"{split}")
    return ConversationSet("sqa", split, data.conversations, data.tables, {}, data.answer_texts, dict(data.report))
