"""BM25 that grows a document at a time: immutable postings segments plus a small open tail.

:class:`~retrieval.search.bm25.BM25Retriever` (``bm25s``) precomputes every document's term weights, which
depend on the collection (document frequencies, average length): adding one document means rebuilding it,
and at a million rows the first build takes minutes. Here the index stores only what does not change when
documents are added (each document's term frequencies and length) and computes BM25 at query time, Lucene's
variant as ``bm25s`` scores it (Kamphuis et al., ECIR 2020)::

    score(d, q) = sum over query tokens t of  idf(t) * tf / (tf + k1 * (1 - b + b * len(d) / avglen))
    idf(t) = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))

so rankings equal ``bm25s``'s on the same tokens (``tests/test_live_memory.py`` checks it). Layout, as in
Lucene: new documents go to an in-memory tail; every ``segment_rows`` documents the tail is sealed into a
segment (term -> postings of document positions and term frequencies, in CSR arrays), and ``merge_factor``
segments of one size are merged into one, so a million rows are a few dozen segments. Sealed segments are
immutable and, with a folder, written once each (``seg-<start>-<end>.npz``, whole-file writes); on load the
segments that cover the documents from 0 are read, and the caller re-adds the documents after them.

Documents are addressed by position (0, 1, 2, ... in the order added); ``search`` returns ``(position, score)``
lists like :class:`~retrieval.search.dense_index.DenseIndex` with ids = positions.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import bm25s
import numpy as np
import pandas as pd

from retrieval.atomic import save_with
from retrieval.search.bm25 import _stemmer

logger = logging.getLogger(__name__)

SEGMENT_NAME = re.compile(r"seg-(\d+)-(\d+)\.npz")
# A subset up to 1/8 of the documents is scored by binary search in the posting lists; a larger one by scoring
# every document (measured at 100k documents: 500 rows 0.2 ms, 20k rows 10 ms by lookup against 5 ms in full)
SUBSET_LOOKUP_FRACTION = 8


@dataclass
class Segment:
    """Postings of the documents ``start <= position < end``: ``terms[t]``'s documents are
    ``docs[indptr[t]:indptr[t + 1]]`` (ascending) with frequencies ``tfs[...]``; ``lengths`` (end - start,)."""

    start: int
    end: int
    terms: np.ndarray  # (T,) str
    indptr: np.ndarray  # (T + 1,) int64
    docs: np.ndarray  # (P,) int64, global positions
    tfs: np.ndarray  # (P,) float32
    lengths: np.ndarray  # (end - start,) float32

    def __post_init__(self) -> None:
        self.term_id = {t: i for i, t in enumerate(self.terms.tolist())}

    @property
    def rows(self) -> int:
        return self.end - self.start

    def postings(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        i = self.term_id.get(term)
        if i is None:
            return None
        lo, hi = self.indptr[i], self.indptr[i + 1]
        return self.docs[lo:hi], self.tfs[lo:hi]

    def df(self, term: str) -> int:
        i = self.term_id.get(term)
        return 0 if i is None else int(self.indptr[i + 1] - self.indptr[i])

    @classmethod
    def from_counts(cls, start: int, counts: Sequence[Counter]) -> Segment:
        """A segment of documents ``start, start + 1, ...`` given each one's term counts."""
        return cls.merge([_coo_segment(start, counts)])

    @classmethod
    def merge(cls, parts: Sequence[Segment]) -> Segment:
        """One segment holding consecutive ``parts`` (each ending where the next starts)."""
        for a, b in zip(parts, parts[1:]):
            if a.end != b.start:
                raise ValueError(f"segments {a.start}-{a.end} and {b.start}-{b.end} are not consecutive")
        terms = np.unique(np.concatenate([p.terms for p in parts])) if parts else np.array([], dtype=str)
        term_ids, docs, tfs = [], [], []
        for p in parts:
            per_term = np.diff(p.indptr)
            global_id = np.searchsorted(terms, p.terms) if len(p.terms) else np.zeros(0, dtype=np.int64)
            term_ids.append(np.repeat(global_id, per_term))
            docs.append(p.docs)
            tfs.append(p.tfs)
        term_of = np.concatenate(term_ids) if term_ids else np.zeros(0, dtype=np.int64)
        order = np.argsort(term_of, kind="stable")  # parts in document order: postings stay ascending
        indptr = np.zeros(len(terms) + 1, dtype=np.int64)
        np.cumsum(np.bincount(term_of, minlength=len(terms)), out=indptr[1:])
        return cls(parts[0].start, parts[-1].end, terms, indptr,
                   np.concatenate(docs)[order].astype(np.int64), np.concatenate(tfs)[order].astype(np.float32),
                   np.concatenate([p.lengths for p in parts]).astype(np.float32))

    def save(self, folder: Path) -> Path:
        path = folder / f"seg-{self.start:010d}-{self.end:010d}.npz"
        save_with(lambda partial: np.savez(partial, terms=self.terms, indptr=self.indptr, docs=self.docs, tfs=self.tfs,
                                           lengths=self.lengths), path)
        return path

    @classmethod
    def load(cls, path: Path) -> Segment:
        m = SEGMENT_NAME.fullmatch(path.name)
        if m is None:
            raise ValueError(f"{path}: not a segment file (seg-<start>-<end>.npz)")
        with np.load(path, allow_pickle=False) as z:
            seg = cls(int(m.group(1)), int(m.group(2)), z["terms"], z["indptr"], z["docs"], z["tfs"], z["lengths"])
        if len(seg.lengths) != seg.rows or seg.indptr[-1] != len(seg.docs):
            raise ValueError(f"{path}: its arrays do not match its {seg.rows} documents")
        return seg


def _coo_segment(start: int, counts: Sequence[Counter]) -> Segment:
    """An unsorted one-term-run-per-posting segment, to be put in CSR order by :meth:`Segment.merge`."""
    terms = sorted({t for c in counts for t in c})
    tid = {t: i for i, t in enumerate(terms)}
    term_of = np.fromiter((tid[t] for c in counts for t in c), dtype=np.int64)
    docs = np.repeat(np.arange(start, start + len(counts), dtype=np.int64), [len(c) for c in counts])
    tfs = np.fromiter((n for c in counts for n in c.values()), dtype=np.float32)
    order = np.argsort(term_of, kind="stable")
    indptr = np.zeros(len(terms) + 1, dtype=np.int64)
    np.cumsum(np.bincount(term_of, minlength=len(terms)), out=indptr[1:])
    lengths = np.array([sum(c.values()) for c in counts], dtype=np.float32)
    return Segment(start, start + len(counts), np.array(terms, dtype=str), indptr, docs[order], tfs[order], lengths)


def sorted_positions(subset: Iterable | None, n: int) -> np.ndarray | None:
    """``subset`` as sorted distinct positions below ``n`` (None: every row). A plan's rows come sorted and
    distinct: checking that costs one comparison a row, and only other subsets pay the sort (np.unique hashes:
    60 ms at 100k rows, against 5 for sort and compare)."""
    if subset is None:
        return None
    rows = np.asarray(subset if isinstance(subset, np.ndarray | pd.Index) else list(subset), dtype=np.int64)
    if len(rows) > 1 and not (rows[1:] > rows[:-1]).all():
        rows = np.sort(rows)
        rows = rows[np.concatenate(([True], rows[1:] != rows[:-1]))]
    return rows[(rows >= 0) & (rows < n)]


class Tokenizer:
    """``bm25s`` tokens (English stop words, stemmed when PyStemmer is there), as :class:`BM25Retriever` has
    them; ``cache`` (texts -> tokens) saves the work for repeated texts within one batch."""

    def __init__(self):
        self.stemmer = _stemmer()

    @property
    def settings(self) -> dict:
        return {"stopwords": "en", "stemmer": self.stemmer is not None}

    def __call__(self, texts: Sequence[str]) -> list[list[str]]:
        unique = list(dict.fromkeys(texts))
        tokens = bm25s.tokenize(unique, stopwords="en", stemmer=self.stemmer, show_progress=False,
                                return_ids=False) if unique else []
        by_text = dict(zip(unique, tokens))
        return [by_text[t] for t in texts]


class SegmentedBM25:
    """Append-only BM25 over documents addressed by position; see the module docstring."""

    def __init__(self, folder: str | Path | None = None, k1: float = 1.5, b: float = 0.75,
                 segment_rows: int = 2048, merge_factor: int = 8):
        self.k1, self.b = k1, b
        self.segment_rows, self.merge_factor = segment_rows, merge_factor
        self.folder = Path(folder) if folder is not None else None
        self.tokenize = Tokenizer()
        self.segments: list[Segment] = []
        self.tail: list[Counter] = []
        self._tail_postings: dict[str, list[tuple[int, int]]] = {}
        self._df: Counter = Counter()
        self.total_length = 0.0
        self._sealed_lengths, self._lengths_end = np.zeros(0, dtype=np.float32), 0

    def __len__(self) -> int:
        return self.sealed + len(self.tail)

    @property
    def sealed(self) -> int:
        return self.segments[-1].end if self.segments else 0

    # ---- growing ------------------------------------------------------------------------------------------
    def add(self, texts: Sequence[str]) -> None:
        """Append documents (positions ``len(self)``, ``len(self) + 1``, ...)."""
        for tokens in self.tokenize(list(texts)):
            counts = Counter(tokens)
            position = len(self)
            self.tail.append(counts)
            for term, n in counts.items():
                self._tail_postings.setdefault(term, []).append((position, n))
            self._df.update(counts.keys())
            self.total_length += len(tokens)
            if len(self.tail) >= self.segment_rows:
                self.seal()

    def seal(self) -> None:
        """Turn the tail into a segment (written when there is a folder), then merge full levels."""
        if not self.tail:
            return
        self.segments.append(Segment.from_counts(self.sealed, self.tail))
        self.tail, self._tail_postings = [], {}
        if self.folder is not None:
            self.segments[-1].save(self.folder)
        self._merge_levels()

    def _merge_levels(self) -> None:
        while len(self.segments) >= self.merge_factor:
            last = self.segments[-self.merge_factor:]
            if len({self._level(s) for s in last}) != 1:
                return
            merged = Segment.merge(last)
            self.segments[-self.merge_factor:] = [merged]
            if self.folder is not None:  # the merged file first, then the parts it replaces
                merged.save(self.folder)
                for s in last:
                    (self.folder / f"seg-{s.start:010d}-{s.end:010d}.npz").unlink(missing_ok=True)

    def _level(self, segment: Segment) -> int:
        level, size = 0, self.segment_rows
        while segment.rows > size:
            size *= self.merge_factor
            level += 1
        return level

    # ---- persistence --------------------------------------------------------------------------------------
    @classmethod
    def load(cls, folder: str | Path, **settings) -> SegmentedBM25:
        """The segments in ``folder`` that cover positions 0, 1, ... without a gap (the longest first where a
        merge left both the merged file and its parts); files outside that chain are removed. The caller adds
        the documents after ``len(index)``."""
        index = cls(folder, **settings)
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        found: dict[int, list[Path]] = {}
        ends: dict[Path, int] = {}
        for path in folder.glob("seg-*.npz"):
            m = SEGMENT_NAME.fullmatch(path.name)
            if m:
                found.setdefault(int(m.group(1)), []).append(path)
                ends[path] = int(m.group(2))
        chain, start = [], 0
        while start in found:
            best = max(found.pop(start), key=ends.__getitem__)
            try:
                chain.append(Segment.load(best))
            except (OSError, ValueError) as e:
                logger.warning("%s: unreadable BM25 segment (%s); its documents are indexed again", best, e)
                best.unlink(missing_ok=True)
                break
            start = chain[-1].end
        for paths in found.values():
            for path in paths:
                path.unlink(missing_ok=True)
        for seg in chain:
            index._add_segment(seg)
        return index

    def _add_segment(self, seg: Segment) -> None:
        if seg.start != self.sealed or self.tail:
            raise ValueError(f"segment {seg.start}-{seg.end} does not follow position {len(self)}")
        self.segments.append(seg)
        self._df.update(dict(zip(seg.terms.tolist(), np.diff(seg.indptr).tolist())))
        self.total_length += float(seg.lengths.sum())

    def truncate_tail(self) -> None:
        """Drop the unsealed documents (to add them again from their source)."""
        for counts in self.tail:
            self._df.subtract(counts.keys())
            self.total_length -= sum(counts.values())
        self.tail, self._tail_postings = [], {}

    # ---- searching ----------------------------------------------------------------------------------------
    def scores(self, query: str, rows: np.ndarray | None = None) -> np.ndarray:
        """BM25 scores for one query: of every document (N,), or of the sorted positions ``rows`` (len(rows),),
        looked up in each posting list by binary search (a day's rows cost what they are, not the index)."""
        n = len(self)
        if rows is not None and len(rows) > n // SUBSET_LOOKUP_FRACTION:  # a large share: score all, then take
            return self.scores(query)[rows]
        out = np.zeros(n if rows is None else len(rows), dtype=np.float32)
        tokens = self.tokenize([query])[0]
        if not n or not tokens or not len(out):
            return out
        avg, lengths = self.total_length / n, self._lengths()
        for term in tokens:
            df = self._df.get(term, 0)
            if df <= 0:
                continue
            idf = np.float32(np.log(1 + (n - df + 0.5) / (df + 0.5)))
            for docs, tfs in self._postings(term, rows):
                if rows is None:
                    at, tf = docs, tfs
                else:  # the rows that hold the term: where they sit in this posting list
                    where = np.minimum(np.searchsorted(docs, rows), len(docs) - 1)
                    hit = docs[where] == rows
                    at, tf = np.flatnonzero(hit), tfs[where[hit]]
                    docs = rows[at]
                norm = self.k1 * (1 - self.b + self.b * lengths[docs] / avg)
                out[at] += idf * tf / (tf + norm)
        return out

    def _postings(self, term: str, rows: np.ndarray | None = None) -> Iterable[tuple[np.ndarray, np.ndarray]]:
        """(positions, term frequencies) of ``term``, per segment (and the tail), skipping the segments that hold
        none of the sorted ``rows``."""
        for seg in self.segments:
            if rows is not None and not (rows[0] < seg.end and rows[-1] >= seg.start):
                continue
            p = seg.postings(term)
            if p is not None:
                yield p
        tail = self._tail_postings.get(term)
        if tail:
            arr = np.array(tail, dtype=np.int64)
            yield arr[:, 0], arr[:, 1].astype(np.float32)

    def _lengths(self) -> np.ndarray:
        if self._lengths_end != self.sealed:  # (positions 0..sealed) are the same documents until more are sealed
            self._sealed_lengths = np.concatenate([s.lengths for s in self.segments])
            self._lengths_end = self.sealed
        tail = np.array([sum(c.values()) for c in self.tail], dtype=np.float32)
        return np.concatenate([self._sealed_lengths, tail]) if len(tail) else self._sealed_lengths

    def search(self, queries: Sequence[str], k: int,
               subset: Iterable | None = None) -> list[list[tuple[int, float]]]:
        """Top-k (position, score) per query, best first; ``subset`` restricts the candidates to those positions."""
        rows = sorted_positions(subset, len(self))
        results: list[list[tuple[int, float]]] = []
        for query in queries:
            if rows is not None and len(rows) == 0 or k <= 0:
                results.append([])
                continue
            cs = self.scores(query, rows)
            cand = rows if rows is not None else np.arange(len(cs))
            if k < len(cand):  # the k best, ties at the k-th score going to the earliest positions
                kth = cs[np.argpartition(-cs, k - 1)[k - 1]]
                above, tied = np.flatnonzero(cs > kth), np.flatnonzero(cs == kth)
                part = np.concatenate([above, tied[:k - len(above)]])
                top = part[np.lexsort((cand[part], -cs[part]))]
            else:
                top = np.lexsort((cand, -cs))
            results.append([(int(cand[j]), float(cs[j])) for j in top])
        return results
