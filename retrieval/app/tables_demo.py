"""What the page's Tables tab shows for one turn: the tables the DTR ranks beside BM25's, the chosen table's top
cells (the tracker's, and the state re-ranker's on SQA), the extractive answer, then the LLM's.

A turn is answered in two steps so the page shows something at once: :meth:`TablesDemo.extract` (table, cells,
the top cell's value: tens of milliseconds on the packaged MiniLM) and :meth:`TablesDemo.respond` (the LLM, seconds
on a CPU). Conversations to replay are OTT-QA's test conversations (the table found by retrieval, as in the
paper's setting) and SQA's sequences (the table given, as SQA gives it); a typed question starts a new
conversation over the same tables, or follows the one on the page.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from retrieval.ctbls.cell_text import CellId
from retrieval.ctbls.pipeline import Answer, CTBLSPipeline, conversation_query
from retrieval.ctbls.state_features import TurnState
from retrieval.ctbls.state_rerank import StateReranker, find_reranker, whole_table_rankings
from retrieval.ctbls.state_tracker import CellStateTracker
from retrieval.ctbls.table_retriever import DenseTableRetriever
from retrieval.data.ottqa import load_passages, load_questions, load_tables
from retrieval.data.ottqa_conversations import build_conversations, table_split
from retrieval.data.sqa import load_sqa
from retrieval.data.types import Conversation, Table
from retrieval.search.bm25 import BM25Retriever

SHOWN_TABLES = 5  # tables listed per ranker


@dataclass
class TableTurn:
    """One answered turn, as the tab shows it."""

    query: str
    answer: Answer
    dtr: list[tuple[str, float]]  # the DTR's ranking of the tables (uid, score), best first
    bm25: list[tuple[str, float]]  # BM25's, over the same table texts
    reranked: list[tuple[CellId, float]] | None = None  # the state re-ranker's top cells, on SQA
    gold: list[tuple[int, int]] = field(default_factory=list)  # the reference answer's cells, when replayed
    reference: str | None = None  # the reference answer, when replayed


@dataclass
class Dialogue:
    """A conversation on the page: where it comes from (a dataset's, or typed) and the turns answered so far."""

    source: str = "typed"  # "typed", "ottqa" or "sqa"
    conversation: Conversation | None = None
    turns: list[TableTurn] = field(default_factory=list)

    @property
    def history(self) -> list[tuple[str, str]]:
        return [(t.query, t.answer.answer) for t in self.turns]

    @property
    def pinned(self) -> str | None:
        """SQA's sequences come with their table; every other conversation finds its table by retrieval."""
        return self.conversation.table_id if self.source == "sqa" and self.conversation else None


class TablesDemo:
    """A pipeline per source of tables (OTT-QA's, found by retrieval; SQA's, given with their sequence), BM25
    over OTT-QA's table texts, and conversations to replay."""

    def __init__(self, pipeline: CTBLSPipeline, conversations: Mapping[str, tuple[str, Conversation]],
                 sqa_pipeline: CTBLSPipeline | None = None, reranker: StateReranker | None = None,
                 notes: Sequence[str] = ()):
        self.pipes = {"ottqa": pipeline, "typed": pipeline} | ({"sqa": sqa_pipeline} if sqa_pipeline else {})
        self.reranker, self.notes = reranker, list(notes)
        self.conversations = dict(conversations)  # label -> (source, conversation)
        uids = sorted(pipeline.tables)
        self.bm25 = BM25Retriever([pipeline.retriever.settings.text(pipeline.tables[u]) for u in uids], uids)

    @classmethod
    def load(cls, ottqa_dir: str | Path, sqa_dir: str | Path | None, dtr: str | None, tracker: str | None,
             sqa_tracker: str | None, llm=None, split: str = "test", max_conversations: int = 50,
             cache_dir: str | None = None, sqa_split: str = "validation") -> TablesDemo:
        """OTT-QA's tables of ``split`` and its conversations over them, and SQA's sequences of ``sqa_split`` when
        ``sqa_dir`` holds them; the trained checkpoints when given, else the packaged MiniLM untuned (said in
        :attr:`notes`)."""
        from models.dual_encoder import load_encoder

        notes = []
        ottqa_dir = Path(ottqa_dir)
        tables = {u: t for u, t in load_tables(ottqa_dir / "tables.jsonl").items() if table_split(u) == split}
        passages_file = ottqa_dir / "passages_dev.jsonl"
        passages = load_passages(passages_file) if passages_file.is_file() else {}
        conversations: dict[str, tuple[str, Conversation]] = {}
        for c in build_conversations(load_questions(ottqa_dir / "questions_dev.json"), tables, split):
            if len(conversations) < max_conversations:
                conversations[f"OTT-QA {c.conv_id}: {c.turns[0].query[:70]}"] = ("ottqa", c)
        untuned = [name for name, given in (("DTR", dtr), ("tracker", tracker)) if not given]
        if untuned:
            notes.append(f"untuned: the packaged MiniLM stands in for the {' and '.join(untuned)} (train them with "
                         "`make demo`, then pass --dtr / --tracker)")
        retriever = DenseTableRetriever.from_pretrained(dtr) if dtr else DenseTableRetriever(load_encoder())
        cell_tracker = CellStateTracker.from_pretrained(tracker) if tracker else CellStateTracker(load_encoder())
        pipe = CTBLSPipeline(retriever, cell_tracker, tables, passages, llm, cache_dir=cache_dir)
        sqa_pipe, reranker = None, None
        if sqa_dir is not None and Path(sqa_dir).is_dir():
            sqa = load_sqa(sqa_dir, sqa_split)
            n = 0
            for c in sqa.conversations:
                if n < max_conversations:
                    conversations[f"SQA {c.conv_id}: {c.turns[0].query[:70]}"] = ("sqa", c)
                    n += 1
            sqa_cells = CellStateTracker.from_pretrained(sqa_tracker) if sqa_tracker else cell_tracker
            # SQA gives each sequence its table: no dense table index to build (BM25's is a few ms)
            sqa_pipe = CTBLSPipeline(retriever, sqa_cells, sqa.tables, None, llm, cache_dir=cache_dir,
                                     table_retrieval="bm25")
            reranker = find_reranker("auto", sqa_tracker)
            if reranker is None:
                notes.append("SQA: no state re-ranker (`make demo` fits one in runs/demo/state_tracker_sqa; pass "
                             "--sqa-tracker): the tracker's cells only")
        demo = cls(pipe, conversations, sqa_pipe, reranker, notes)
        demo.index_replayed_tables()
        return demo

    def index_replayed_tables(self) -> None:
        """Encode the cells of the replayable conversations' tables now (each table cached apart in the embedding
        cache, so only a first start pays it): replaying one then answers at once. A typed question that lands on
        another table encodes its cells then (about a second for 60 cells with the packaged MiniLM here)."""
        for source in ("ottqa", "sqa"):
            pipe = self.pipes.get(source)
            if pipe is not None:
                pipe.ensure_cells_indexed([c.table_id for s, c in self.conversations.values() if s == source])

    def pipe(self, dialogue: Dialogue) -> CTBLSPipeline:
        pipe = self.pipes.get(dialogue.source)
        if pipe is None:
            raise ValueError(f"no {dialogue.source} tables were loaded")
        return pipe

    def table(self, dialogue: Dialogue, uid: str) -> Table:
        return self.pipe(dialogue).tables[uid]

    # ---- a turn ----------------------------------------------------------------------------------------------
    def extract(self, dialogue: Dialogue, query: str, reference: tuple[str | None, list] | None = None) -> TableTurn:
        """The table, its top cells and the extractive answer for ``query`` after the dialogue's turns."""
        query = query.strip()
        if not query:
            raise ValueError("the question is empty: ask about a table ('which river flows through Egypt?')")
        pipe, history = self.pipe(dialogue), dialogue.history
        answer = pipe.extract(history, query, dialogue.pinned)
        first = conversation_query(history, query)
        dtr = [] if dialogue.pinned else pipe.retrieve_tables(first, SHOWN_TABLES)
        bm25 = [] if dialogue.pinned else self.bm25.search([first], SHOWN_TABLES)[0]
        turn = TableTurn(query, answer, dtr, bm25)
        if reference is not None:
            turn.reference, turn.gold = reference[0], list(reference[1])
        if dialogue.source == "sqa" and self.reranker is not None:
            turn.reranked = self._rerank(self.reranker, pipe, dialogue, query, answer.table_id)
        return turn

    def respond(self, dialogue: Dialogue, turn: TableTurn) -> TableTurn:
        """The LLM's answer from the turn's cells (unchanged without an LLM)."""
        turn.answer = self.pipe(dialogue).respond(turn.answer, dialogue.history, turn.query)
        return turn

    def _rerank(self, reranker: StateReranker, pipe: CTBLSPipeline, dialogue: Dialogue, query: str, table_id: str
                ) -> list[tuple[CellId, float]]:
        """The state re-ranker's top cells; the previous answer it reads is the one the page gave (its top cell)."""
        anchor = pipe.tracker.history(dialogue.history, query)
        ranked = whole_table_rankings(pipe.tracker, [anchor], [table_id])[0]
        last = dialogue.turns[-1] if dialogue.turns else None
        previous = frozenset((i[1], i[2]) for i, _ in (last.reranked or [])[:1]) if last else frozenset()
        state = TurnState(query, len(dialogue.turns), previous, last.query if last else "")
        return reranker.rerank(ranked, pipe.tables[table_id], state)[:pipe.k]

    def next_reference(self, dialogue: Dialogue) -> tuple[str, str | None, list] | None:
        """The replayed conversation's next turn (query, reference answer, answer cells), or None at its end."""
        if dialogue.conversation is None or len(dialogue.turns) >= len(dialogue.conversation.turns):
            return None
        t = dialogue.conversation.turns[len(dialogue.turns)]
        return t.query, t.answer, t.targets
