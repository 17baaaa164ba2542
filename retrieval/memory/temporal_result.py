"""What a question put to the temporal memory comes back with: the rows it selected, the plan and its execution,
the rewrite, and for a question that asks when, the answer."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from retrieval.memory.answer_notes import warnings
from retrieval.memory.query_rewrite import Rewrite
from retrieval.memory.table_ops import Execution, Plan
from retrieval.memory.when_answer import WhenAnswer


@dataclass
class TemporalResult:
    """The rows a question selected (time order, or best first when ranked), and how they were selected."""

    question: str
    rows: pd.DataFrame
    plan: Plan
    execution: Execution
    rewrite: Rewrite | None = None
    notes: list[str] = field(default_factory=list)
    answer: WhenAnswer | None = None  # for a question that asks when (retrieval.memory.when_answer)

    @property
    def ids(self) -> list[int]:
        return self.rows.index.tolist()

    @property
    def warnings(self) -> list[str]:
        """What the answer says first: words of the question not read, or nothing found (and where it looked)."""
        return warnings(self.plan.notes + self.execution.trace)

    def to_dict(self, max_text: int | None = None) -> dict:
        rows = [{"response_idx": int(i), "session": int(r["session"]), "timestamp": r["timestamp"].isoformat(),
                 "speaker": r["speaker"], "text": r["text"][:max_text] if max_text else r["text"],
                 **({"score": self.execution.scores[i]} if i in self.execution.scores else {})}
                for i, r in self.rows.iterrows()]
        return {"question": self.question, "warnings": self.warnings, "plan": self.plan.to_dict(),
                "trace": self.execution.trace,
                "counts": self.execution.counts, "rewrite": self.rewrite.to_dict() if self.rewrite else None,
                "rows": rows, **({"answer": self.answer.to_dict()} if self.answer else {})}
