"""Reader for Microsoft's Sequential Question Answering (SQA) in its official layout.

    data = load_sqa("../shared/data/sqa")                       # train.tsv, every table it names
    data = load_sqa("../shared/data/sqa", split="validation")   # only the sequences over validation tables
    data = load_sqa("../shared/data/sqa", questions="my.tsv")   # any TSV in SQA's format (its tables beside it)

Files (see ``../shared/data/sqa/SOURCE.md``): a questions TSV (``id``, ``annotator``, ``position``, ``question``,
``table_file``, ``answer_coordinates``, ``answer_text``; fields holding quotes are CSV-quoted), ``table_csv/*.csv``
(first line the header) and ``tables_meta.jsonl`` (``{"table_file", "title", "url"}``). A *sequence* (``id``,
``annotator``) ordered by ``position`` is one :class:`Conversation` over one :class:`Table`; each turn's targets are
its answer cells (row 0 = the first data row) and its ``answer`` the answer texts joined by ``", "``.
``answer_coordinates`` and ``answer_text`` are Python literals, read with :func:`ast.literal_eval` (never ``eval``).
A malformed row is a :class:`DataError` naming the file and line.

**Cells outside the table.** A cell holding a line break (245 of the 982 tables) is one cell to a CSV reader; SQA's
own coordinates were computed by a reader that sometimes split such a row in two, so in train.tsv 37 of 14,541
questions name a cell below the last row we read (and a few others name a shifted row). Those cells are dropped
from the turn's targets and counted in :attr:`SQAData.report` (a turn left with none keeps its gold answer texts),
rather than reading the table wrongly for the other 99.7 %.

**Our table split of train.tsv.** The official test set is withheld; train.tsv's tables are divided by a hash of
the table file's name (:func:`table_split`): 80 % ``train`` (the tracker learns on them), 10 % ``dev`` (every rule,
threshold and setting is chosen there) and 10 % ``validation`` (figures are reported there, nothing chosen). A table
and all its sequences fall in one split, so no evaluated table was seen in training. (The release's own
``random-split-1-*`` files share 44 tables between train and dev, which is why we do not use them.)
"""

from __future__ import annotations

import ast
import csv
import hashlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from retrieval.data.jsonio import DataError, iter_jsonl
from retrieval.data.types import Cell, Conversation, Table, Turn

SPLITS = ("train", "dev", "validation")
SPLIT_BOUNDS = {"train": (0, 80), "dev": (80, 90), "validation": (90, 100)}  # percent of tables
QUESTION_COLUMNS = ("id", "annotator", "position", "question", "table_file", "answer_coordinates", "answer_text")
QUESTIONS_FILE = "train.tsv"
TABLES_META = "tables_meta.jsonl"


def table_split(table_file: str) -> str:
    """Our split of a table (train, dev or validation): sha1 of its file name (``203_149.csv``), mod 100."""
    name = Path(table_file).name
    bucket = int(hashlib.sha1(name.encode("utf-8")).hexdigest()[:8], 16) % 100
    for split, (lo, hi) in SPLIT_BOUNDS.items():
        if lo <= bucket < hi:
            return split
    raise AssertionError(bucket)


def table_id(table_file: str) -> str:
    """A table's uid: its file name without the folder and ``.csv`` (``table_csv/203_149.csv`` -> ``203_149``)."""
    return Path(table_file).stem


@dataclass
class SQARow:
    """One row of a questions TSV, parsed."""

    where: str  # "file:line", for messages
    seq_id: str
    annotator: int
    position: int
    question: str
    table_file: str
    coordinates: list[tuple[int, int]]
    answer_text: list[str]


@dataclass
class SQAData:
    """Conversations (one a sequence), their tables by uid, and each turn's gold answer texts by turn id."""

    conversations: list[Conversation]
    tables: dict[str, Table]
    answer_texts: dict[str, list[str]] = field(default_factory=dict)
    report: Counter = field(default_factory=Counter)  # answer_cells_outside_table, turns_without_answer_cell


def _literal_list(text: str, column: str, where: str) -> list:
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError) as e:
        raise DataError(f"{where}: {column} is not a Python literal ({type(e).__name__}): {text[:80]!r}") from e
    if not isinstance(value, list | tuple):
        raise DataError(f"{where}: {column} must be a list, got {type(value).__name__}")
    return list(value)


def _coordinate(item: object, where: str) -> tuple[int, int]:
    try:
        value = ast.literal_eval(item) if isinstance(item, str) else item
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        value = None
    if (not isinstance(value, tuple | list) or len(value) != 2
            or not all(isinstance(v, int) and v >= 0 for v in value)):
        raise DataError(f"{where}: answer coordinate {item!r} is not '(row, col)' with non-negative integers")
    return int(value[0]), int(value[1])


def _parse_row(raw: dict, where: str) -> SQARow:
    missing = [c for c in QUESTION_COLUMNS if raw.get(c) is None]
    if missing:
        raise DataError(f"{where}: missing column(s) {', '.join(missing)}")
    try:
        annotator, position = int(raw["annotator"]), int(raw["position"])
    except ValueError as e:
        raise DataError(f"{where}: annotator and position must be integers ({e})") from e
    coords = [_coordinate(c, where) for c in _literal_list(raw["answer_coordinates"], "answer_coordinates", where)]
    texts = [str(t) for t in _literal_list(raw["answer_text"], "answer_text", where)]
    return SQARow(where, raw["id"], annotator, position, raw["question"], raw["table_file"], coords, texts)


def read_questions(path: str | Path) -> Iterator[SQARow]:
    """The rows of a questions TSV in file order; a malformed row is a DataError naming ``file:line``."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: file not found")
    with path.open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f, delimiter="\t")
        absent = [c for c in QUESTION_COLUMNS if c not in (reader.fieldnames or [])]
        if absent:
            raise DataError(f"{path}:1: header lacks column(s) {', '.join(absent)}")
        for raw in reader:
            yield _parse_row(raw, f"{path}:{reader.line_num}")


def read_table(path: str | Path, title: str = "") -> Table:
    """One ``table_csv`` file: the first line is the header, every further line a row of plain-text cells.

    WikiTableQuestions' CSVs quote every field and escape a quote inside one as ``\\"`` (not ``""``).
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: file not found")
    with path.open(encoding="utf-8", newline="") as f:
        lines = list(csv.reader(f, escapechar="\\", doublequote=False))  # WikiTableQuestions writes \" for "
    if len(lines) < 2:
        raise DataError(f"{path}: a table needs a header line and at least one row")
    return Table(uid=table_id(path.name), title=title, header=lines[0],
                 rows=[[Cell(text) for text in line] for line in lines[1:]], split=table_split(path.name))


def read_titles(path: str | Path) -> dict[str, str]:
    """``tables_meta.jsonl``: each table's page title by table uid (an absent file: no titles)."""
    path = Path(path)
    if not path.is_file():
        return {}
    titles = {}
    for lineno, obj in iter_jsonl(path):
        if not isinstance(obj.get("table_file"), str):
            raise DataError(f"{path}:{lineno}: expected a 'table_file'")
        titles[table_id(obj["table_file"])] = str(obj.get("title") or "")
    return titles


def _sequences(rows: list[SQARow]) -> dict[tuple[str, int], list[SQARow]]:
    by_seq: dict[tuple[str, int], list[SQARow]] = {}
    for row in rows:
        by_seq.setdefault((row.seq_id, row.annotator), []).append(row)
    for key, seq in by_seq.items():
        seq.sort(key=lambda r: r.position)
        if [r.position for r in seq] != list(range(len(seq))):
            raise DataError(f"{seq[0].where}: sequence {key[0]} (annotator {key[1]}) has positions "
                            f"{[r.position for r in seq]}; expected 0..{len(seq) - 1}")
        if len({r.table_file for r in seq}) != 1:
            raise DataError(f"{seq[-1].where}: sequence {key[0]} (annotator {key[1]}) names more than one table")
    return by_seq


def _turn(row: SQARow, table: Table, report: Counter) -> Turn:
    targets = [(r, c) for r, c in dict.fromkeys(row.coordinates) if table.cell(r, c) is not None]
    report["answer_cells_outside_table"] += len(dict.fromkeys(row.coordinates)) - len(targets)
    report["turns_without_answer_cell"] += not targets
    return Turn(turn_id=f"{row.seq_id}_{row.annotator}_{row.position}", query=row.question,
                answer=", ".join(row.answer_text), table_id=table.uid, targets=targets)


def load_sqa(data_dir: str | Path, split: str | None = None, questions: str | Path | None = None) -> SQAData:
    """SQA's sequences (of our ``split`` of the tables, when given) as conversations, with their tables.

    ``questions`` defaults to ``data_dir/train.tsv``; its ``table_file`` paths are read relative to ``data_dir``.
    """
    if split is not None and split not in SPLITS:
        raise DataError(f"sqa: no split {split!r}; its splits are {', '.join(SPLITS)}")
    data_dir = Path(data_dir)
    if not data_dir.is_dir():
        raise DataError(f"{data_dir}: not found; expected SQA's folder (train.tsv, table_csv/, tables_meta.jsonl)")
    rows = [r for r in read_questions(questions or data_dir / QUESTIONS_FILE)
            if split is None or table_split(r.table_file) == split]
    titles = read_titles(data_dir / TABLES_META)
    data = SQAData([], {})
    for (seq_id, annotator), seq in _sequences(rows).items():
        uid = table_id(seq[0].table_file)
        if uid not in data.tables:
            data.tables[uid] = read_table(data_dir / seq[0].table_file, titles.get(uid, ""))
        turns = [_turn(r, data.tables[uid], data.report) for r in seq]
        data.conversations.append(Conversation(conv_id=f"{seq_id}_{annotator}", table_id=uid, turns=turns))
        data.answer_texts.update({t.turn_id: list(r.answer_text) for t, r in zip(turns, seq, strict=True)})
    return data
