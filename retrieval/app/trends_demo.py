"""What the page's Trends tab shows: a topic's volume per period over a log or a file of documents, the samples per
period and the report, as ``ctbls trends ask`` writes them (:mod:`retrieval.trends`).

Each analysis is written as its own folder under the page's output folder (``trend.json``, ``volume.png``,
``report.md``), so what the page shows can be opened, shared or compared later.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pandas as pd

from models.encoder import Encoder
from retrieval.atomic import write_text
from retrieval.llm.base import LLMBackend
from retrieval.trends.analysis import TrendConfig, analyse_trend
from retrieval.trends.corpus import Corpus, load_corpus
from retrieval.trends.report import write_trend_outputs
from retrieval.trends.result import TrendResult


class TrendsDemo:
    """Corpora by label (shipped logs, uploads), each read and embedded once, and trend questions over them."""

    def __init__(self, encoder: Encoder, sources: dict[str, tuple[Path, str, str | None]], out_dir: str | Path,
                 cache_dir: str | None = None, backend: LLMBackend | None = None):
        self.encoder, self.sources, self.cache_dir, self.backend = encoder, dict(sources), cache_dir, backend
        self.out_dir = Path(out_dir)
        self.corpora: dict[str, Corpus] = {}
        self._runs = itertools.count(1)

    def corpus(self, label: str) -> Corpus:
        if label not in self.corpora:
            if label not in self.sources:
                raise ValueError(f"no source {label!r}; pick one of the list or upload a file")
            path, fmt, sample = self.sources[label]
            fmt = "documents" if fmt == "jsonl" else fmt  # a JSONL log is documents to the trends' reader
            self.corpora[label] = load_corpus(path, self.encoder, fmt, sample=sample, cache_dir=self.cache_dir)
        return self.corpora[label]

    def upload(self, path: str | Path, name: str | None = None) -> str:
        """Read an uploaded CSV / JSONL of documents or a conversation log; its label (a file that does not read
        is a DataError or ValueError naming it)."""
        path = Path(path)
        label = f"uploaded {name or path.name}"
        self.corpora[label] = load_corpus(path, self.encoder, "auto", cache_dir=self.cache_dir)
        self.sources[label] = (path, "auto", None)
        return label

    def analyse(self, label: str, question: str, period: str = "auto", topic: str | None = None
                ) -> tuple[TrendResult, dict[str, Path]]:
        """The trend of ``question`` over the corpus, written as a new folder under :attr:`out_dir`."""
        if not question.strip():
            raise ValueError("the question is empty: ask how a topic evolves ('is the talk about travel growing?')")
        config = TrendConfig(period=period, topic=topic or None)
        result = analyse_trend(self.corpus(label), question, config)
        folder = self.out_dir / f"trend-{next(self._runs):03d}"
        while folder.exists():
            folder = self.out_dir / f"trend-{next(self._runs):03d}"
        paths = write_trend_outputs(result, folder, backend=self.backend, config=config)
        write_text(folder.parent / "latest.txt", str(folder) + "\n")
        return result, paths


def periods_frame(result: TrendResult) -> pd.DataFrame:
    """One row per period: documents, relevant ones, their share, and the closest samples (whole: the page's table
    cuts them and shows the rest on a click)."""
    rows = []
    for p in result.periods:
        samples = " | ".join(f"#{s['id']} {s['text']}" for s in p.samples)
        rows.append({"period": str(p.period), "documents": p.n_docs, "relevant": round(p.n_relevant, 1),
                     "share %": round(100 * p.share, 1), "samples": samples})
    return pd.DataFrame(rows, columns=["period", "documents", "relevant", "share %", "samples"])
