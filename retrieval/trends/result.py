"""What a trend analysis counts: per period, its documents, the relevant ones and samples of them."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from retrieval.memory.answer_notes import WARNINGS
from retrieval.trends.relevance import Threshold

SKIPPED_NOTE = "skipped:"  # documents read but not counted (no usable timestamp)
# the notes a trend answer says first: the memory's own warnings (a question not read as English, a window start
# read from weak or conflicting evidence, or none found) and documents skipped
TREND_WARNINGS = (*WARNINGS, SKIPPED_NOTE)


@dataclass
class PeriodCount:
    """One period: its documents, the relevant ones (an expected count under LLM confirmation), samples, and the
    ids (response_idx) of the documents counted (weight 0.5 or more), best first."""

    period: str
    n_docs: int
    n_relevant: float
    samples: list[dict] = field(default_factory=list)
    counted: list[int] = field(default_factory=list)

    @property
    def share(self) -> float:
        return self.n_relevant / self.n_docs if self.n_docs else 0.0


@dataclass
class TrendResult:
    """Counts per period and everything needed to trace them."""

    question: str
    topic: str
    period: str
    start: str | None
    end: str | None
    now: str
    threshold: Threshold
    periods: list[PeriodCount]
    n_window: int
    skipped: list[dict]
    n_read: int
    source: str = ""
    confirmation: dict | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def n_relevant(self) -> float:
        return sum(p.n_relevant for p in self.periods)

    def counts(self) -> dict[str, float]:
        return {str(p.period): p.n_relevant for p in self.periods}

    @property
    def warnings(self) -> list[str]:
        """What the answer says first: documents it could not count, a question not read as English, a window
        start the memory could not date or dated from weak evidence (:data:`TREND_WARNINGS`)."""
        return [n for n in self.notes if n.startswith(TREND_WARNINGS)]

    def counted_ids(self) -> set[int]:
        return {i for p in self.periods for i in p.counted}

    def sample_ids(self) -> set[int]:
        return {s["id"] for p in self.periods for s in p.samples}

    def to_dict(self) -> dict:
        d = asdict(self)
        d["threshold"] = self.threshold.to_dict()
        d["n_relevant"] = self.n_relevant
        for p, pd_ in zip(self.periods, d["periods"]):
            pd_["period"] = str(p.period)
            pd_["share"] = p.share
        return d

