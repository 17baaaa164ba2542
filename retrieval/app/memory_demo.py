"""What the page's Memory and Live tabs show for a question: how it was read, the plan as steps, the rows it selected
(with the semantic-only baseline's rows beside them) and, for a when-question, the computed date with its evidence.

Logs are the shipped ones (Zyphra's conversation logs and LoCoMo's samples, under the data folder), any file the
log readers take (Zyphra, LoCoMo or JSONL, :func:`~retrieval.data.conversation_log.load_log`), or a living memory's
folder. Each is read and embedded once and kept for the page's lifetime.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pandas as pd

from models.dual_encoder import DualEncoder
from retrieval.data.jsonio import DataError, read_json
from retrieval.memory.relevance.rerank import Reranker, second_stage
from retrieval.memory.temporal_memory import TemporalMemory
from retrieval.memory.temporal_result import TemporalResult
from retrieval.memory.when_answer import EVIDENCE_RULE

SEMANTIC_K = 10  # the semantic-only baseline's rows (the paper's semantic@10)
LIVE_LABEL = "living memory (the Live tab's)"


def shipped_logs(data_dir: str | Path) -> dict[str, tuple[Path, str, str | None]]:
    """The logs under ``data_dir``: label -> (file, format, LoCoMo sample id); none where a folder is missing."""
    data_dir = Path(data_dir)
    logs: dict[str, tuple[Path, str, str | None]] = {}
    for path in sorted((data_dir / "zyphra_temporal" / "ConversationData").glob("*.json"),
                       key=lambda p: (len(p.stem), p.stem)):
        logs[f"Zyphra log {path.stem}"] = (path, "zyphra", None)
    locomo = data_dir / "locomo" / "locomo_open.json"
    if locomo.is_file():
        samples = read_json(locomo)
        if not isinstance(samples, list):
            raise DataError(f"{locomo}: expected LoCoMo's list of samples")
        for sample in samples:
            sid = sample.get("sample_id") if isinstance(sample, dict) else None
            if sid:
                logs[f"LoCoMo {sid}"] = (locomo, "locomo", str(sid))
    return logs


@dataclass
class MemoryAnswer:
    """A question's result, the semantic-only baseline's rows, and the frame both index into."""

    result: TemporalResult
    semantic: pd.DataFrame  # the baseline's rows, best first, with a "score" column
    frame: pd.DataFrame  # every row of the log (the timeline)

    def reading_rows(self) -> list[list[str]]:
        """How the question was read: who / when / what, then each time expression with its interval(s) and the
        readings it chose between (with their reasons)."""
        rows = [[k, json.dumps(v, default=str) if not isinstance(v, str) else v]
                for k, v in self.result.plan.reading.items() if v not in (None, "", [], {})]
        for e in self.result.plan.expressions:
            spans = "; ".join(f"{a} .. {b}" for a, b in e.get("intervals", [])) or e.get("unresolved", "unresolved")
            choices = "; ".join(map(str, e.get("choices", [])))
            rows.append([f"time: {e.get('text', '?')!r}", spans + (f"  (reading: {choices})" if choices else "")])
        if self.result.plan.zone:
            rows.append(["zone", self.result.plan.zone])
        return rows

    def plan_steps(self) -> list[str]:
        """The plan as numbered steps, then its notes and the execution's trace."""
        steps = [f"{n}. {_op_text(op)}" for n, op in enumerate(self.result.plan.ops, 1)] or ["(no operations)"]
        return steps + [f"note: {n}" for n in self.result.plan.notes + self.result.execution.trace]


def _ranges(ranges) -> str:
    return " or ".join(f"[{a}, {b})" for a, b in ranges)


def _op_text(op: dict) -> str:
    """One table operation (:mod:`retrieval.memory.table_ops`) in words."""
    kind = op.get("op")
    soft = " (skipped if it leaves nothing)" if op.get("soft") else ""
    if kind == "filter":
        text = f"keep rows whose {op.get('column')} {op.get('cmp')} {op.get('value')}"
    elif kind == "between":
        text = f"keep rows with {op.get('column', 'timestamp')} in {_ranges(op.get('ranges', []))}"
    elif kind == "overlaps":
        text = f"keep rows whose event time overlaps {_ranges(op.get('ranges', []))}"
    elif kind == "nth":
        text = f"keep the {op.get('group')}s at positions {op.get('start')}..{op.get('end')} (negative: from the end)"
    elif kind == "shift":
        anchor = "; ".join(_op_text(a) for a in op.get("anchor", []))
        text = f"keep the {op.get('group')}s {op.get('start')}..{op.get('end')} from those where: {anchor}"
    elif kind == "first_nonempty":
        text = "the first reading that keeps rows: " + " | ".join(
            f"({n}) " + "; ".join(_op_text(o) for o in option) for n, option in enumerate(op.get("options", []), 1))
    elif kind == "rank":
        prefer = op.get("prefer")
        who = f", {prefer.get('value')}'s rows first" if isinstance(prefer, dict) else ""
        cut = f", within {op['margin']} of the score spread of the best" if op.get("margin") is not None else ""
        text = f"rank by content {op.get('query')!r}, up to {op.get('k')}{who}{cut}"
    elif kind == "order":
        text = f"order by {op.get('by')} {'ascending' if op.get('ascending', True) else 'descending'}"
    elif kind == "head":
        text = f"keep the first {op.get('n')}"
    elif kind == "count":
        text = f"count rows by {op.get('by')}"
    else:
        text = json.dumps(op, default=str)
    return text + soft


def rows_table(rows: pd.DataFrame, scores: dict | None = None) -> pd.DataFrame:
    """Rows as the page lists them: id, session, when said, speaker, text (whole: the page's table cuts it at
    :data:`~retrieval.app.render.ROW_CHARS` and shows the rest on a click) and the score (empty for rows in time
    order)."""
    out = pd.DataFrame({"id": rows.index.astype(int), "session": rows["session"].astype(int),
                        "when": [f"{d} {t[:5]}" for d, t in zip(rows["date"], rows["time"])],
                        "speaker": rows["speaker"], "text": list(rows["text"])})
    if scores:
        out["score"] = [round(float(scores[i]), 3) if i in scores else None for i in rows.index]
    elif "score" in rows:
        out["score"] = rows["score"].round(3).to_numpy()
    else:
        out["score"] = None
    return out.reset_index(drop=True)


class MemoryDemo:
    """Memories by label (shipped logs, uploads, living memories), each built once, and questions to them."""

    def __init__(self, encoder: DualEncoder, logs: dict[str, tuple[Path, str, str | None]],
                 cache_dir: str | None = None, relevance: str | None = None):
        self.encoder, self.logs, self.cache_dir = encoder, dict(logs), cache_dir
        self.memories: dict[str, TemporalMemory] = {}
        # A relevance model folder: every memory re-ranks and cuts with it (retrieval.memory.relevance); None: the
        # hand-tuned ranking. Loaded now, so a folder that is no model is said at start, not at the first question.
        self.relevance, self.evidence_rule = second_stage(relevance, EVIDENCE_RULE, encoder.identity)

    def memory(self, label: str) -> TemporalMemory:
        """The memory of a shipped or uploaded log (read and embedded on first use)."""
        if label not in self.memories:
            if label not in self.logs:
                raise ValueError(f"no log {label!r}; pick one of the list or upload one")
            path, fmt, sample = self.logs[label]
            self.memories[label] = TemporalMemory.from_file(path, encoder=self.encoder, fmt=fmt, sample=sample,
                                                            cache_dir=self.cache_dir,
                                                            relevance=self.relevance, evidence_rule=self.evidence_rule)
        return self.memories[label]

    def upload(self, path: str | Path, name: str | None = None) -> str:
        """Read an uploaded log (any format the readers take); its label. A file that does not read is a
        :class:`~retrieval.data.jsonio.DataError` or ValueError naming the file and what is wrong."""
        path = Path(path)
        label = f"uploaded {name or path.name}"
        memory = TemporalMemory.from_file(path, encoder=self.encoder, cache_dir=self.cache_dir,
                                          relevance=self.relevance, evidence_rule=self.evidence_rule)
        self.logs[label] = (path, "auto", None)
        self.memories[label] = memory
        return label

    def ask(self, memory: TemporalMemory, question: str, history: Sequence[str] = (),
            now: datetime | str | None = None) -> MemoryAnswer:
        """``question`` put to ``memory`` (the plan's rows and when-answer) and the semantic-only baseline's rows."""
        result = memory.ask(question, history=list(history) or None, now=now or None)
        ranked = memory.table.rank(question, SEMANTIC_K)
        semantic = memory.table.frame.loc[[i for i, _ in ranked]].assign(score=[s for _, s in ranked])
        return MemoryAnswer(result, semantic, memory.table.frame)


class LiveMemory:
    """The page's living memory: the folder (None: no Live tab), opened on first use (created when new, with the
    page's encoder) and held, one writer, until :meth:`close` writes its snapshot and releases it."""

    def __init__(self, folder: str | None, encoder: DualEncoder, relevance: Reranker | None = None,
                 evidence_rule: str = EVIDENCE_RULE):
        self.folder, self.encoder, self.relevance, self.evidence_rule = folder, encoder, relevance, evidence_rule
        self.memory: TemporalMemory | None = None

    def get(self) -> TemporalMemory:
        if self.folder is None:
            raise ValueError("no living memory: start the page with --live FOLDER")
        if self.memory is None:
            self.memory = TemporalMemory.open(self.folder, encoder=self.encoder, create=True, relevance=self.relevance,
                                              evidence_rule=self.evidence_rule)
        return self.memory

    def close(self) -> None:
        if self.memory is not None:
            self.memory.close()
            self.memory = None
