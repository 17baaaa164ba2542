"""The benchmarks we build, as Hugging Face ``datasets.Dataset`` objects with explicit features.

    from retrieval.data.hf_datasets import build, features, write
    turns = build("ottqa-conversations", "../shared/data", split="test")   # a datasets.Dataset, one row a turn
    write(turns, "exports", "ottqa-conversations")    # exports/ottqa-conversations/ (save_to_disk), .jsonl, .parquet

    datasets.load_from_disk("exports/ottqa-conversations")
    datasets.load_dataset("parquet", data_files="exports/ottqa-conversations.parquet", split="train")
    datasets.load_dataset("json", data_files="exports/ottqa-conversations.jsonl", split="train",
                          features=features("ottqa-conversations"))    # JSON has no types: give the features

Every benchmark is one entry of :data:`BENCHMARKS`: its columns (each a ``datasets`` feature and what it holds),
the function that yields its rows (:mod:`retrieval.data.benchmark_rows`), its splits and its licence. The README's
schema tables are :func:`schema_table`'s output. A benchmark with splits gives every row its split (``split``), and
``build(..., split=...)`` keeps one; the others have none. Adding a benchmark is one entry (its reader's rows);
an entry without rows yet is refused in one line (:class:`DataError`).

Integers are ``int64`` and text ``string`` (nullable), so what ``load_dataset("json")`` infers from an export is these
features wherever a column holds values (a column of empty lists or nulls only is inferred as ``null``: pass
``features=``). Timestamps are ISO 8601 text to the microsecond: a JSON reader turns a whole-second ISO string into
a timestamp without its offset, and leaves this one as written. :func:`write` writes each format into a staging
folder beside its place, then renames it there (retrieval/atomic.py).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from datasets import Dataset, DatasetInfo, Features, List, Value
from tqdm.auto import tqdm

from retrieval.atomic import rename_into_place, staging_folder
from retrieval.data import benchmark_rows as rows
from retrieval.data.jsonio import DataError
from retrieval.data.ottqa_conversations import SPLITS as OTTQA_SPLITS
from retrieval.data.sqa import SPLITS as SQA_SPLITS

STRING, INT = Value("string"), Value("int64")
FORMATS = ("disk", "json", "parquet")
LOCOMO_LICENSE = "CC BY-NC 4.0 (LoCoMo; non-commercial use only)"


@dataclass(frozen=True)
class Benchmark:
    """One benchmark: its columns ({name: (feature, what it holds)}), its rows, and what is known of its source."""

    name: str
    description: str
    columns: dict[str, tuple[object, str]] = field(default_factory=dict)
    rows: Callable[[Path, str | None], Iterable[dict]] | None = None  # (data root, split or None) -> rows
    splits: tuple[str, ...] = ()
    license: str = ""
    homepage: str = ""
    unavailable: str = ""  # why it cannot be built yet (no reader)

    @property
    def features(self) -> Features:
        return Features({name: feature for name, (feature, _) in self.columns.items()})

    def read_rows(self, data_dir: Path, split: str | None) -> Iterable[dict]:
        """Its rows read from the data root ``data_dir``; a DataError when it has no reader yet."""
        if self.rows is None:
            raise DataError(f"{self.name}: {self.unavailable}")
        return self.rows(data_dir, split)


BENCHMARKS: dict[str, Benchmark] = {b.name: b for b in (
    Benchmark(
        "ottqa-conversations",
        "OTT-QA's dev questions as conversations: the questions about one table, in file order, one row a turn. "
        "The first turn must find the table, every turn its answer cell given the turns before it.",
        {"conversation_id": (STRING, "the conversation (the uid of its table)"),
         "position": (INT, "0-based turn number in the conversation"),
         "turn_id": (STRING, "OTT-QA's question_id"),
         "table_id": (STRING, "uid of the table the question is about (a row of ottqa-tables)"),
         "split": (STRING, "train, val or test: the table's split, from sha1(uid)"),
         "question": (STRING, "the question"),
         "answer": (STRING, "OTT-QA's answer-text"),
         "answer_cells": (List({"row": INT, "column": INT}),
                          "the answer's cells (row 0 = first data row); cells outside the table are dropped"),
         "history": (List({"question": STRING, "answer": STRING}), "the turns before this one, oldest first")},
        rows.ottqa_conversation_rows, OTTQA_SPLITS, "MIT (OTT-QA)", "https://github.com/wenhuchen/OTT-QA"),
    Benchmark(
        "ottqa-tables",
        "OTT-QA's Wikipedia tables, one row a table, in tables.jsonl order.",
        {"uid": (STRING, "the table's id"),
         "title": (STRING, "the page title"),
         "section_title": (STRING, "the section holding the table"),
         "section_text": (STRING, "the section's text"),
         "intro": (STRING, "the page's first paragraph"),
         "header": (List(STRING), "the column names"),
         "rows": (List(List(STRING)), "the cells' text, row by row (rows may be ragged, as in the source)"),
         "links": (List(List(List(STRING))), "each cell's linked pages (\"/wiki/Page\"), parallel to rows"),
         "split": (STRING, "train, val or test, from sha1(uid) (the conversations' split)"),
         "ottqa_split": (STRING, "OTT-QA's own split of the table (train or dev)")},
        rows.ottqa_table_rows, OTTQA_SPLITS, "MIT (OTT-QA)", "https://github.com/wenhuchen/OTT-QA"),
    Benchmark(
        "zyphra-temporal",
        "Zyphra's TemporalMemoryDataset test questions: one row per version of each item, with the responses of "
        "its log that answer it.",
        {"log": (STRING, "the conversation log (a row of logs with source zyphra)"),
         "kind": (STRING, "time, time+content or ambiguous"),
         "subtype": (STRING, "the test file: dates, rel_session, ... (content for time+content)"),
         "item": (INT, "the item's number in its test file and log"),
         "version": (INT, "the version's number within the item (the same request, reworded)"),
         "question": (STRING, "the request (an ambiguous item's last turn)"),
         "history": (List({"speaker": STRING, "text": STRING}), "an ambiguous item's turns before the request"),
         "relevant": (List(INT), "response_idx of the log's responses that answer it, ascending")},
        rows.zyphra_temporal_rows, (), "none stated (the text is LoCoMo's: " + LOCOMO_LICENSE + ")",
        "https://github.com/Zyphra/TemporalMemoryDataset"),
    Benchmark(
        "locomo-qa",
        "LoCoMo's questions with their evidence turns, every category, one row a question; a question whose "
        "evidence names no turn of its conversation is left out.",
        {"sample_id": (STRING, "the conversation (a row of logs with source locomo)"),
         "position": (INT, "0-based number among the conversation's questions kept here"),
         "question": (STRING, "the question"),
         "category": (INT, "1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial"),
         "answer": (STRING, "the reference answer as text (null where LoCoMo gives none: most of category 5)"),
         "adversarial_answer": (STRING, "category 5's adversarial_answer (null for the other categories)"),
         "evidence": (List(INT), "response_idx of the evidence turns, ascending"),
         "evidence_turn_ids": (List(STRING), "the same turns' LoCoMo ids (\"D3:5\")")},
        rows.locomo_qa_rows, (), LOCOMO_LICENSE, "https://github.com/snap-research/LoCoMo"),
    Benchmark(
        "logs",
        "The long conversation logs the temporal memory answers from, one row an utterance: Zyphra's logs, then "
        "LoCoMo's conversations.",
        {"source": (STRING, "zyphra or locomo"),
         "log": (STRING, "the log: Zyphra's log id (\"26\") or LoCoMo's sample_id (\"conv-26\")"),
         "response_idx": (INT, "0-based position in the log (Zyphra's response_number)"),
         "session": (INT, "the session number (1-based)"),
         "speaker": (STRING, "who speaks"),
         "timestamp": (STRING, "ISO 8601 to the microsecond, with its offset: 2023-05-08T01:56:04.000000+00:00 "
                                "(LoCoMo: the session's time + 1 s per turn)"),
         "text": (STRING, "what is said"),
         "turn_id": (STRING, "the source's turn id (\"D1:3\")")},
        rows.log_rows, (), "CC BY-NC 4.0 (LoCoMo's text; Zyphra's logs state no licence)"),
    Benchmark(
        "sqa",
        "Microsoft's Sequential Question Answering (SQA) over WikiTableQuestions tables: train.tsv's question "
        "sequences, one row a turn; a sequence (id, annotator) is one conversation over one table.",
        {"conversation_id": (STRING, "the sequence: SQA's id and annotator (\"nt-639_1\")"),
         "position": (INT, "SQA's position: 0-based turn number in the sequence"),
         "turn_id": (STRING, "id_annotator_position"),
         "table_id": (STRING, "the table: its table_csv file name without .csv"),
         "split": (STRING, "train, dev or validation: our split of train.tsv's tables, from sha1 of the file name"),
         "question": (STRING, "the question"),
         "answer_text": (List(STRING), "SQA's answer_text: the gold answer cells' text"),
         "answer_cells": (List({"row": INT, "column": INT}),
                          "the answer's cells (row 0 = first data row); cells outside the table are dropped"),
         "history": (List({"question": STRING, "answer": STRING}),
                     "the turns before this one, oldest first (answer: their answer texts joined by \", \")")},
        rows.sqa_rows, SQA_SPLITS, "MS-PL (SQA's questions); CC BY-SA 4.0 (WikiTableQuestions' tables)",
        "https://www.microsoft.com/en-us/download/details.aspx?id=54253"),
)}


def benchmark(name: str, split: str | None = None) -> Benchmark:
    """The benchmark called ``name``; a :class:`DataError` when it is unknown, cannot be built yet, or has no
    such split."""
    spec = BENCHMARKS.get(name)
    if spec is None:
        raise DataError(f"unknown dataset {name!r}; choose from {', '.join(BENCHMARKS)}")
    if spec.rows is None:  # said before any split
        raise DataError(f"{name}: {spec.unavailable}")
    if split is not None and split not in spec.splits:
        has = f"its splits are {', '.join(spec.splits)}" if spec.splits else "it has no splits"
        raise DataError(f"{name}: no split {split!r}; {has}")
    return spec


def features(name: str) -> Features:
    """The ``datasets`` features of a benchmark's rows (give them to ``load_dataset("json", ...)``)."""
    return benchmark(name).features


def build(name: str, data_dir: str | Path, split: str | None = None, max_rows: int | None = None,
          progress: bool = True) -> Dataset:
    """The benchmark's rows (the first ``max_rows``, when given) as a ``datasets.Dataset`` with its features."""
    spec = benchmark(name, split)
    found = iter(spec.read_rows(Path(data_dir), split))
    first = list(itertools.islice(found, 1))  # the readers' errors come before the progress bar
    if max_rows is not None:
        found = itertools.islice(found, max(max_rows - 1, 0))
    rows = first + list(tqdm(found, desc=f"reading {name}", unit=" rows", initial=len(first), disable=not progress))
    info = DatasetInfo(description=spec.description, features=spec.features, license=spec.license,
                       homepage=spec.homepage)
    return Dataset.from_list(rows, features=spec.features, info=info)


def file_name(name: str, fmt: str) -> str:
    """Where format ``fmt`` of ``name`` goes in the output folder."""
    return {"disk": name, "json": f"{name}.jsonl", "parquet": f"{name}.parquet"}[fmt]


def _write_format(dataset: Dataset, path: Path, fmt: str) -> None:
    if fmt == "disk":
        dataset.save_to_disk(str(path))
    elif fmt == "json":
        dataset.to_json(str(path), force_ascii=False)  # JSON lines
    elif fmt == "parquet":
        dataset.to_parquet(str(path))  # the features ride in the schema's metadata
    else:
        raise ValueError(f"unknown format {fmt!r}; choose from {FORMATS}")


def write(dataset: Dataset, output_dir: str | Path, name: str, formats: Sequence[str] = FORMATS,
          also: Callable[[Path], object] | None = None) -> list[Path]:
    """Write ``dataset`` as ``output_dir/name`` in each format (:func:`file_name`); returns the paths written.

    Everything is written into a staging folder in ``output_dir`` first (``also(folder)`` may add files of its
    own there), then each file or folder is renamed over its place (retrieval/atomic.py), so no reader ever sees a
    half-written one, and an export that fails leaves the earlier files as they were.
    """
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise ValueError(f"unknown format {unknown[0]!r}; choose from {FORMATS}")
    out = Path(output_dir)
    with staging_folder(out, name) as staging:
        for fmt in dict.fromkeys(formats):
            _write_format(dataset, staging / file_name(name, fmt), fmt)
        if also is not None:
            also(staging)
        written = []
        for entry in sorted(staging.iterdir()):
            if entry.is_dir():
                rename_into_place(entry, out / entry.name)
            else:
                os.replace(entry, out / entry.name)
            written.append(out / entry.name)
        return written


def _type_text(feature: object) -> str:
    if isinstance(feature, Value):
        return feature.dtype
    if isinstance(feature, List):
        return f"list<{_type_text(feature.feature)}>"
    if isinstance(feature, dict):
        return "{" + ", ".join(f"{k}: {_type_text(v)}" for k, v in feature.items()) + "}"
    return str(feature)


def schema_table(name: str) -> str:
    """A benchmark's columns as a Markdown table (column, type, what it holds): the README's."""
    spec = BENCHMARKS[name]
    lines = ["| column | type | what it holds |", "| --- | --- | --- |"]
    lines += [f"| `{col}` | `{_type_text(feature)}` | {doc} |" for col, (feature, doc) in spec.columns.items()]
    return "\n".join(lines)
