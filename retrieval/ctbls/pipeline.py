"""The cTBLS inference pipeline: table retrieval, coarse cell ranking, and an LLM answer from the top cells.

    from retrieval.ctbls.pipeline import CTBLSPipeline
    pipe = CTBLSPipeline.from_pretrained("runs/dtr", "runs/state_tracker", llm="smollm2")
    a = pipe.answer([], "who scored the most goals for the 1998 club?")
    a.answer, a.table_id, a.cells      # the answer, the table, [(cell id, text, score), ...]

**Which table a turn uses.** cTBLS retrieves the table once, from the conversation's first query,
and keeps it for every later turn. :meth:`CTBLSPipeline.answer` is stateless and follows the same
rule: the table is the retriever's top table for the *first query of the conversation* (the first
history turn's query, or the current query when the history is empty), so every turn of one
conversation reaches the same table. Pass ``table_id`` to pin another table (a chat's ``/table``
command, or gold tables in an evaluation).

**Without an LLM** (``llm=None``) the answer is extractive: the top-ranked cell's value.
**The fine stage** (``fine_stage``): ``free`` (default; the LLM writes the answer from the top cells, the
paper's setting, for large models), ``spans`` (the LLM chooses among candidate spans of the top cells by
likelihood, :mod:`retrieval.ctbls.span_choice`, after ``span_examples``; what works with the small offline
model) or ``extractive`` (no LLM call).
An LLM failure (timeout, error, empty answer, after the backend's retries) never raises: the
:class:`Answer` carries ``llm_ok=False``, the reason in ``error``, and the extractive answer as a
fallback, so a caller always has something to show.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from models.packaged import is_packaged
from retrieval.ctbls.build_index import (
    build_command,
    cell_index_dir,
    load_cell_index,
    load_table_index,
    table_index_dir,
    use_bf16,
)
from retrieval.ctbls.cell_text import CellId
from retrieval.ctbls.prompts import (
    DEFAULT_KNOWLEDGE_BUDGET,
    RESPONSE_SYSTEM_PROMPT,
    build_response_messages,
    build_span_messages,
)
from retrieval.ctbls.span_choice import FINE_STAGES, cell_spans, choose_span, span_cells
from retrieval.ctbls.state_tracker import CellStateTracker, History
from retrieval.ctbls.table_retriever import DenseTableRetriever
from retrieval.data.ottqa import DEFAULT_DATA_DIR, load_passages, load_tables
from retrieval.data.types import Table
from retrieval.llm import LLMBackend, load_backend
from retrieval.search.bm25 import BM25Retriever

DEFAULT_MAX_NEW_TOKENS = 32  # OTT-QA answers are short spans; a sentence fits


@dataclass
class RankedCell:
    """One cell the tracker ranked: its id (table uid, row, col), value, prompt text and score."""

    cell_id: CellId
    value: str
    text: str
    score: float


@dataclass
class Answer:
    """One answered turn, with everything it was made from.

    ``cells`` are the top-k ranked cells as (cell id, prompt text, score), best first; ``prompt`` the
    chat messages sent to the LLM (empty without one). ``llm_ok`` is False when the LLM failed; then
    ``error`` says why and ``answer`` falls back to the top cell's value.
    """

    answer: str
    table_id: str
    table_title: str
    table_score: float | None
    cells: list[tuple[CellId, str, float]]
    prompt: list[dict[str, str]] = field(default_factory=list)
    llm_ok: bool = True
    error: str | None = None
    extractive: str = ""

    def as_dict(self) -> dict:
        d = asdict(self)
        d["cells"] = [{"cell_id": list(i), "text": t, "score": s} for i, t, s in self.cells]
        return d


def response_messages(history: History, knowledge: Sequence[str], query: str, *,
                      knowledge_budget: int | None = DEFAULT_KNOWLEDGE_BUDGET, count_tokens=None,
                      system_prompt: str | None = RESPONSE_SYSTEM_PROMPT) -> list[dict[str, str]]:
    """The cTBLS response prompt for one turn; ``history`` answers that are None are written as empty."""
    kwargs = {"count_tokens": count_tokens} if count_tokens is not None else {}
    return build_response_messages([(q, a or "") for q, a in history], list(knowledge), query,
                                   knowledge_budget=knowledge_budget, system_prompt=system_prompt, **kwargs)


def conversation_query(history: History, query: str) -> str:
    """The query a conversation's table is retrieved with: its first query (see the module docstring)."""
    return history[0][0] if history else query


def _as_tables(tables: str | Path | Mapping[str, Table] | Iterable[Table] | None) -> dict[str, Table]:
    if tables is None:
        tables = DEFAULT_DATA_DIR / "tables.jsonl"
    if isinstance(tables, str | Path):
        return load_tables(tables)
    if isinstance(tables, Mapping):
        return dict(tables)
    return {t.uid: t for t in tables}


def _as_passages(passages: str | Path | Mapping[str, str] | None) -> dict[str, str]:
    if passages is None:
        return {}
    if isinstance(passages, str | Path):
        return load_passages(passages)  # a file that is not there is an error, never silently none
    return dict(passages)


class CTBLSPipeline:
    """DTR (or BM25) → coarse cell state tracker → LLM, over a pool of tables.

    ``tables``: the candidate tables; ``passages``: linked-page intros added to cell texts (as the
    tracker was trained). The table index is loaded from ``table_index`` (a folder written by
    ``python -m retrieval.ctbls.build_index``) when one fits these tables, else the tables are encoded
    when the pipeline is made (cached in ``cache_dir``); the cells come from ``cell_index`` when one
    fits, else a table's cells are encoded the first time a conversation reaches it.
    ``require_index``: a missing or unfitting table index, or an unfitting cell index, is an error
    instead. ``index_hint``: the build command suggested when the tables are encoded.
    ``table_retrieval="bm25"`` swaps the DTR for BM25 over the same table texts.
    """

    def __init__(self, retriever: DenseTableRetriever, tracker: CellStateTracker, tables: Mapping[str, Table],
                 passages: Mapping[str, str] | None = None, llm: LLMBackend | None = None, *, k: int = 3,
                 table_retrieval: str = "dtr", knowledge_budget: int | None = DEFAULT_KNOWLEDGE_BUDGET,
                 max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS, temperature: float = 0.0,
                 system_prompt: str | None = RESPONSE_SYSTEM_PROMPT, cache_dir: str | Path | None = None,
                 batch_size: int = 64, table_index: str | Path | None = None, cell_index: str | Path | None = None,
                 require_index: bool = False, index_hint: str | None = None, fine_stage: str = "free",
                 span_examples: Sequence[tuple[Sequence[str], str, str]] = (), span_scoring: str = "pmi"):
        if fine_stage not in FINE_STAGES:
            raise ValueError(f"fine_stage must be one of {FINE_STAGES}, got {fine_stage!r}")
        self.fine_stage, self.span_examples, self.span_scoring = fine_stage, list(span_examples), span_scoring
        if table_retrieval not in ("dtr", "bm25"):
            raise ValueError(f"table_retrieval must be 'dtr' or 'bm25', got {table_retrieval!r}")
        if not tables:
            raise ValueError("the pipeline needs at least one table")
        self.retriever, self.tracker, self.llm = retriever, tracker, llm
        self.tables, self.passages = dict(tables), dict(passages or {})
        self.k, self.table_retrieval = k, table_retrieval
        self.knowledge_budget, self.max_new_tokens, self.temperature = knowledge_budget, max_new_tokens, temperature
        self.system_prompt, self.cache_dir, self.batch_size = system_prompt, cache_dir, batch_size
        uids = sorted(self.tables)
        if table_retrieval == "bm25":
            self.bm25 = BM25Retriever([retriever.settings.text(self.tables[u]) for u in uids], uids)
        else:
            load_table_index(retriever, [self.tables[u] for u in uids], table_index, required=require_index,
                              cache_dir=cache_dir, batch_size=batch_size, hint=index_hint)
        if cell_index is not None:
            load_cell_index(tracker, cell_index, [self.tables[u] for u in uids], self.passages,
                             required=require_index)
        self._retrieve_one = functools.lru_cache(maxsize=1024)(self._retrieve_uncached)

    @classmethod
    def from_pretrained(cls, dtr_path: str | Path, tracker_path: str | Path,
                        llm: str | Mapping | LLMBackend | None = "smollm2",
                        tables: str | Path | Mapping[str, Table] | Iterable[Table] | None = None,
                        passages: str | Path | Mapping[str, str] | None = DEFAULT_DATA_DIR / "passages_dev.jsonl",
                        *, bf16: bool = False, index_dir: str | Path | None = None, **kwargs) -> CTBLSPipeline:
        """Load the two checkpoints, their saved indices, the tables (default: OTT-QA's ``tables.jsonl``), the
        passages (a file, a mapping, or None for none) and an LLM.

        ``llm`` is a backend, a spec for :func:`retrieval.llm.load_backend` (``"smollm2"``,
        ``"openai:MODEL"``, a mapping, which may name a ``cache``), or None for extractive answers.
        The saved indices are looked for in ``DTR/index/tables`` and ``TRACKER/index/cells`` (used when they
        fit, else encoded afresh with a line saying why), or in ``index_dir``'s ``tables`` and ``cells``
        (required to fit). ``bf16``: both encoders run under bf16 autocast (an index saved with
        ``build_index --bf16`` fits only such a run, and one saved without it only a run without).
        """
        backend = load_backend(llm) if isinstance(llm, str | Mapping) else llm
        retriever = DenseTableRetriever.from_pretrained(dtr_path)
        tracker = CellStateTracker.from_pretrained(tracker_path)
        use_bf16(retriever, tracker, bf16=bf16)
        given = DEFAULT_DATA_DIR / "tables.jsonl" if tables is None else tables
        tables_file = given if isinstance(given, str | Path) else None
        saved = not is_packaged(dtr_path)  # the packaged MiniLM stands in untuned: no folder, no saved index
        kwargs.setdefault("index_hint", build_command(dtr_path, tables_file, bf16) if tables_file and saved else None)
        kwargs.setdefault("table_index", table_index_dir(dtr_path, index_dir) if saved or index_dir else None)
        kwargs.setdefault("cell_index", cell_index_dir(tracker_path, index_dir)
                          if not is_packaged(tracker_path) or index_dir else None)
        kwargs.setdefault("require_index", index_dir is not None)
        return cls(retriever, tracker, _as_tables(tables), _as_passages(passages), backend, **kwargs)

    # ---- stage 1: the table ------------------------------------------------------------------
    def retrieve_tables(self, query: str, k: int = 5) -> list[tuple[str, float]]:
        """Top-k (table uid, score) for a query (the first query of a conversation)."""
        return list(self._retrieve_one(query, k))

    def _retrieve_uncached(self, query: str, k: int) -> tuple[tuple[str, float], ...]:
        if self.table_retrieval == "bm25":
            return tuple(self.bm25.search([query], k)[0])
        return tuple(self.retriever.retrieve([query], k)[0])

    def choose_table(self, history: History, query: str) -> tuple[str, float]:
        """The conversation's table and its score, by the first-query rule of the module docstring."""
        found = self.retrieve_tables(conversation_query(history, query), k=1)
        if not found:
            raise RuntimeError("table retrieval returned nothing")
        return found[0]

    # ---- stage 2: the cells ------------------------------------------------------------------
    def ensure_cells_indexed(self, table_ids: Iterable[str]) -> None:
        """Encode the cells of any of ``table_ids`` the tracker has not indexed yet (each table cached apart)."""
        new = [self.tables[u] for u in dict.fromkeys(table_ids) if u not in self.tracker.cells_of]
        if new:
            self.tracker.add_tables(new, self.passages, batch_size=self.batch_size, cache_dir=self.cache_dir,
                                    show_progress_bar=len(new) > 10)

    def rank_cells(self, history: History, query: str, table_id: str, k: int | None = None) -> list[RankedCell]:
        """The tracker's top-k cells of ``table_id`` for this turn, with their values and prompt texts."""
        self.ensure_cells_indexed([table_id])
        table = self.tables[table_id]
        ranked = self.tracker.rank(history, query, table_id, k or self.k)
        texts = dict(zip(*self.tracker.cells([table], self.passages)[:2]))
        return [RankedCell(i, table.at(i[1], i[2]).text, texts[i], s) for i, s in ranked]

    # ---- stage 3: the answer -----------------------------------------------------------------
    def messages(self, history: History, query: str, cells: Sequence[RankedCell]) -> list[dict[str, str]]:
        """The chat messages the LLM gets for this turn."""
        count = self.llm.count_tokens if self.llm is not None else None
        return response_messages(history, [c.text for c in cells], query, knowledge_budget=self.knowledge_budget,
                                 count_tokens=count, system_prompt=self.system_prompt)

    def answer(self, history: History, query: str, table_id: str | None = None) -> Answer:
        """Answer ``query`` after ``history`` (earlier (query, answer) pairs, oldest first): :meth:`extract`, then
        :meth:`respond`."""
        return self.respond(self.extract(history, query, table_id), history, query)

    def extract(self, history: History, query: str, table_id: str | None = None) -> Answer:
        """The first two stages and the extractive answer (the top cell's value): the table (``table_id``, or
        retrieved) and its top cells, without the LLM."""
        if table_id is None:
            table_id, table_score = self.choose_table(history, query)
        else:
            if table_id not in self.tables:
                raise KeyError(f"unknown table {table_id!r}")
            table_score = None
        cells = self.rank_cells(history, query, table_id)
        extractive = cells[0].value if cells else ""
        return Answer(answer=extractive, table_id=table_id, table_title=self.tables[table_id].title,
                      table_score=table_score, cells=[(c.cell_id, c.text, c.score) for c in cells],
                      extractive=extractive)

    def respond(self, result: Answer, history: History, query: str) -> Answer:
        """The third stage: the LLM's answer from :meth:`extract`'s cells (``result`` itself without an LLM, or with
        the extractive fine stage; the top cell's value kept, with the error, when the LLM fails)."""
        llm = self.llm
        if llm is None or self.fine_stage == "extractive":
            return result
        cells = [RankedCell(i, self.tables[i[0]].at(i[1], i[2]).text, t, s) for i, t, s in result.cells]
        if self.fine_stage == "spans":
            return self._choose_span(llm, result, history, query, result.table_id, cells)
        result.prompt = self.messages(history, query, cells)
        try:
            generation = llm.generate([result.prompt], max_new_tokens=self.max_new_tokens,
                                           temperature=self.temperature)[0]
        except Exception as exc:  # backends report failures in their results; a raising one is a bug, not a crash
            result.llm_ok, result.error = False, f"{type(exc).__name__}: {exc}"
            return result
        result.llm_ok, result.error = generation.ok, generation.error
        if generation.ok:
            result.answer = generation.text
        return result

    def _choose_span(self, llm: LLMBackend, result: Answer, history: History, query: str, table_id: str,
                     cells: Sequence[RankedCell]) -> Answer:
        """The span fine stage: the likeliest candidate span of the top cells; the extractive answer on failure."""
        ranked = span_cells(self.tables[table_id], [c.cell_id[1:] for c in cells], self.passages, self.tracker.settings)
        past = [(q, a or "") for q, a in history]
        knowledge = [c.text for c in ranked]
        result.prompt = build_span_messages(past, knowledge, query, examples=self.span_examples,
                                            knowledge_budget=self.knowledge_budget, count_tokens=llm.count_tokens)
        baseline = build_span_messages(past, knowledge, "", examples=self.span_examples,
                                       knowledge_budget=self.knowledge_budget, count_tokens=llm.count_tokens)
        choice = choose_span(llm, result.prompt, cell_spans(ranked), scoring=self.span_scoring,
                             baseline=baseline)
        result.llm_ok, result.error = choice.ok, choice.error
        if choice.ok and choice.span is not None:
            result.answer = choice.text
        return result
