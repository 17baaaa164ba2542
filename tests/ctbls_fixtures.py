"""Helpers for the pipeline, response-evaluation and notebook tests: tiny OTT-QA files and fake LLMs.

Imported by test modules (``from ctbls_fixtures import ...``; pytest puts ``tests/`` on the path).
"""

from __future__ import annotations

import json
from pathlib import Path

from models.dual_encoder import DualEncoder
from retrieval.ctbls.state_tracker import CellStateTracker
from retrieval.ctbls.table_retriever import DenseTableRetriever
from retrieval.data.ottqa_conversations import table_split
from retrieval.llm import GenerationResult

# Three tables with disjoint vocabularies, so BM25 finds each from its first question.
TOPICS = [
    ("Kishore Kumar songs", ["Song", "Film", "Year"],
     [["Main Pyaasa Tum", "Faraar", "1975"], ["O Saathi Re", "Muqaddar", "1978"],
      ["Zindagi Ek Safar", "Andaz", "1971"]]),
    ("Football club squad", ["Player", "Club", "Goals"],
     [["Rob Davison", "Shandong Luneng", "12"], ["José Duarte", "Istanbul", "7"], ["Ann Lee", "Reds", "3"]]),
    ("Longest rivers", ["River", "Country", "Length"],
     [["Nile", "Egypt", "6650"], ["Amazon", "Brazil", "6400"], ["Yangtze", "China", "6300"]]),
]
QUESTIONS = [
    [("Which Kishore Kumar song was in the film Faraar?", "Main Pyaasa Tum", (0, 0)),
     ("In what year was the song O Saathi Re released?", "1978", (1, 2))],
    [("How many goals did Rob Davison score for the football club?", "12", (0, 2)),
     ("Which club does José Duarte play for?", "Istanbul", (1, 1))],
    [("Which river flows through Egypt?", "Nile", (0, 0)),
     ("How long is the Amazon river?", "6400", (1, 2))],
]


def split_uids(n: int, split: str = "test") -> list[str]:
    """The first ``n`` uids ``tiny_<i>`` whose hash puts them in ``split``."""
    out, i = [], 0
    while len(out) < n:
        if table_split(f"tiny_{i}") == split:
            out.append(f"tiny_{i}")
        i += 1
    return out


def write_tiny_ottqa(root: Path) -> Path:
    """Write ``tables.jsonl``, ``passages_dev.jsonl`` and ``questions_dev.json`` under ``root``; returns ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    tables, passages, questions = [], [], []
    for uid, (title, header, rows), qs in zip(split_uids(len(TOPICS)), TOPICS, QUESTIONS):
        data = [[[v, [f"/wiki/{v.replace(' ', '_')}"] if c == 0 else []] for c, v in enumerate(row)] for row in rows]
        tables.append({"uid": uid, "title": title, "section_title": "", "section_text": "", "intro": title,
                       "header": [[h, []] for h in header], "data": data})
        passages.append({"table_id": uid, "passages": {f"/wiki/{r[0].replace(' ', '_')}": f"{r[0]} is in {title}"
                                                       for r in rows}})
        for j, (q, answer, (r, c)) in enumerate(qs):
            questions.append({"question_id": f"{uid}_{j}", "question": q, "table_id": uid, "answer-text": answer,
                              "answer-node": [[answer, [r, c], None, "table"]]})
    (root / "tables.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tables))
    (root / "passages_dev.jsonl").write_text("".join(json.dumps(p) + "\n" for p in passages))
    (root / "questions_dev.json").write_text(json.dumps(questions))
    return root


def write_checkpoints(backbone: str, root: Path) -> tuple[Path, Path]:
    """An (untrained) DTR and tracker checkpoint from a tiny backbone: (dtr folder, tracker folder)."""
    dtr, tracker = root / "dtr", root / "tracker"
    DenseTableRetriever(DualEncoder.from_backbone(backbone, max_query_length=32, max_document_length=64)
                        ).save_pretrained(dtr)
    CellStateTracker(DualEncoder.from_backbone(backbone, max_query_length=64, max_document_length=64)
                     ).save_pretrained(tracker)
    return dtr, tracker


def tiny_response_setup(backbone: str, root: Path) -> dict:
    """The tiny OTT-QA data under ``root``, untrained checkpoints, and what a response evaluation reads: the
    tables, passages and test conversations."""
    from retrieval.data.ottqa import load_passages, load_questions, load_tables
    from retrieval.data.ottqa_conversations import build_conversations

    data = write_tiny_ottqa(root / "ottqa")
    dtr, tracker = write_checkpoints(backbone, root)
    tables = load_tables(data / "tables.jsonl")
    return {"root": root, "data": data, "dtr": dtr, "tracker": tracker, "tables": tables,
            "passages": load_passages(data / "passages_dev.jsonl"),
            "conversations": build_conversations(load_questions(data / "questions_dev.json"), tables, "test")}


class FakeLLM:
    """A backend stand-in: answers with the first knowledge line's value, or ``answer`` when set.

    ``fail_when`` (a substring): prompts containing it fail with ``ok=False``; ``raise_error``: generate raises.
    Every call's conversations are kept in ``calls``.
    """

    name = "fake"
    identity = "fake:llm"

    def __init__(self, answer: str | None = None, fail_when: str | None = None, raise_error: bool = False):
        self.answer, self.fail_when, self.raise_error = answer, fail_when, raise_error
        self.calls: list[list] = []

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def _text(self, conversation: list[dict]) -> str:
        if self.answer is not None:
            return self.answer
        prompt = conversation[-1]["content"]
        if "[1] " in prompt:  # "[1] Header : value . ..." -> value
            first = prompt.split("[1] ", 1)[1].split("\n", 1)[0]
            return first.split(" . ", 1)[0].split(" : ", 1)[-1]
        return "I do not know"

    def generate(self, conversations, *, max_new_tokens=32, temperature=0.0, stop=None):
        self.calls.append(list(conversations))
        if self.raise_error:
            raise ConnectionError("server unreachable")
        out = []
        for c in conversations:
            if self.fail_when and self.fail_when in c[-1]["content"]:
                out.append(GenerationResult("", False, "timed out after 60s", 0.0, self.name, self.identity, 3))
            else:
                out.append(GenerationResult(self._text(c), True, None, 0.0, self.name, self.identity))
        return out
