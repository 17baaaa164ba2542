"""Temporal memory over a long conversation: ask when-questions of a conversation table.

    memory = TemporalMemory.from_file("ConversationData/26.json", encoder=load_encoder())  # models.dual_encoder
    result = memory.ask("What did we discuss 20 sessions ago?")           # now = end of the log
    result = memory.ask("Can you summarize what we discussed?",
                        history=["I see in my calendar that we talked on May 8th."])
    result.rows, result.plan.to_dict()

Command line:
    python -m retrieval.memory.temporal_memory ask --log ../shared/data/zyphra_temporal/ConversationData/26.json \\
        "What did we discuss last Friday?" [--now 2023-10-22T12:00] [--history "..."] [--planner llm --llm smollm2]
    ctbls memory ask --log FILE "..."          # the same, as a command
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import pandas as pd

from models.dual_encoder import DualEncoder
from models.encoder import Encoder
from retrieval.config import option, parse_command
from retrieval.data.conversation_log import load_log
from retrieval.data.paths import default_cache_dir
from retrieval.data.timestamps import instant, read_timestamp, timestamp_problem
from retrieval.data.types import ContextTurn
from retrieval.memory.answer_notes import empty_note, future_note, no_answer_note, plan_note
from retrieval.memory.content_ranking import CUTS, FUSION_DEPTH, cut_content, fuse_content
from retrieval.memory.conversation_table import ConversationTable
from retrieval.memory.language_check import language_note
from retrieval.memory.living_memory import FUTURE_SKEW, Appended, LivingMemory
from retrieval.memory.planner import LLMPlanner, Planner, PlannerConfig, RulePlanner, parse_margin
from retrieval.memory.query_rewrite import LLMRewriter, Rewrite
from retrieval.memory.question import AskedQuestion
from retrieval.memory.relevance.choices import AUTO, RELEVANCE_HELP
from retrieval.memory.relevance.confidence import rival_note, weak_evidence_note, with_probabilities
from retrieval.memory.relevance.rerank import SecondStage, second_stage
from retrieval.memory.result_print import print_result
from retrieval.memory.table_ops import execute
from retrieval.memory.temporal_result import TemporalResult
from retrieval.memory.when_anchor import anchored_answer
from retrieval.memory.when_answer import (
    EVIDENCE_K,
    EVIDENCE_RULE,
    EVIDENCE_RULES,
    WHEN_MARGIN,
    answer_from_evidence,
    question_kind,
    when_ops,
)
from retrieval.memory.when_between import length_between_events
from retrieval.search.fusion import FUSIONS

REWRITES = ("none", "context", "carry", "llm")

RANKERS = ("hybrid", "dense", "bm25")


class TemporalMemory:
    """A conversation table, a planner and a rewrite policy: ``ask(question, history, now)``."""

    def __init__(self, table: ConversationTable, planner: Planner | None = None, rewrite: str = "carry",
                 llm_rewriter: LLMRewriter | None = None, ranker: str = "hybrid", fusion: str = "scores",
                 cut: str = CUTS[0], prior: float | None = None, evidence_rule: str = EVIDENCE_RULE,
                 folder: LivingMemory | None = None, relevance: SecondStage | None = None):
        for name, value, allowed in (("rewrite", rewrite, REWRITES), ("ranker", ranker, RANKERS), ("fusion", fusion,
                                     FUSIONS), ("cut", cut, CUTS), ("evidence_rule", evidence_rule, EVIDENCE_RULES)):
            if value not in allowed:
                raise ValueError(f"{name} must be one of {allowed}")
        # prior: the speaker prior's weight (None: the fusion's, content_ranking.PRIOR_WEIGHTS)
        self.ranker, self.fusion, self.cut, self.prior = ranker, fusion, cut, prior
        if rewrite == "llm" and llm_rewriter is None:
            raise ValueError("rewrite='llm' needs an llm_rewriter")
        self.table, self.rewrite, self.llm_rewriter = table, rewrite, llm_rewriter
        # a living memory's folder or database (retrieval.memory.memory_folder, retrieval.memory.postgres): where
        # appends go; None for a memory read from a log
        self.folder = folder
        self.planner = planner or RulePlanner()
        self.speakers = sorted(table.frame["speaker"].unique())
        self.evidence_rule = evidence_rule  # which ranked row answers a when-question (when_answer.pick_evidence)
        self._evidence_cache: tuple | None = None  # (frame, roles counted, the frame without them): see evidence
        self.relevance = relevance  # re-ranks and cuts the candidates (retrieval.memory.relevance); None: hand-tuned

    @classmethod
    def from_file(cls, path: str | Path, encoder: Encoder | None = None, fmt: str = "auto", tz: str | None = None,
                  sample: str | None = None, session_gap_minutes: float = 30, on_bad_time: str = "error",
                  cache_dir: str | Path | None = None, turns: bool = True, timestamps: str = "strict",
                  **kwargs) -> TemporalMemory:
        """Read a log (Zyphra, LoCoMo or JSONL; ``timestamps`` "strict", "lenient" or a strptime format), embed its
        text (and, with ``turns``, each utterance with the turn it follows) with ``encoder`` (cached), wrap it.
        ``tz``: the zone of the log's calendar (None: the zone its timestamps are written in, else now's, else UTC)."""
        utterances = load_log(path, fmt, tz, sample, timedelta(minutes=session_gap_minutes), on_bad_time, timestamps)
        return cls(ConversationTable.from_utterances(utterances, encoder, cache_dir, turns=turns, tz=tz), **kwargs)

    # ---- a living memory: a folder that turns are appended to (retrieval.memory.living_memory) -------------------
    @classmethod
    def open(cls, path: str | Path, encoder: DualEncoder | None = None, create: bool = False,
             encoder_spec: str | None = None, tz: str | None = None, session_gap_minutes: float = 30,
             turns: bool = True, fsync: bool = False, precision: str = "fp32", store: str | None = None,
             **kwargs) -> TemporalMemory:
        """Reopen the memory kept in the folder ``path`` (``encoder`` None: the one it was built with; another is
        refused), or with ``create`` start an empty one there (``encoder`` None: ``load_encoder(encoder_spec)``;
        ``tz``: its calendar's zone, default UTC; ``precision``: the loaded encoder's, one of
        ``models.dual_encoder.PRECISIONS``, recorded: a reopen loads the encoder in it). Turns are added with
        :meth:`add` / :meth:`add_many`, each one committed when it returns (``fsync``: also through a power cut,
        about 5 ms more). ``store``: a PostgreSQL URL (``postgresql://user:password@host/db``) puts the memory in
        that database (:mod:`retrieval.memory.postgres`), ``path`` then naming it there; None: the folder ``path``."""
        from retrieval.memory.memory_folder import MemoryFolder
        from retrieval.memory.postgres.memory import NoSuchMemory, PostgresMemory, is_database_url

        if store is not None and not is_database_url(store):
            raise ValueError(f"store {store!r}: a PostgreSQL URL (postgresql://...), or None for a folder")
        if store:  # one connection: open, and only when there is no such memory, create
            try:
                return cls.wrap(PostgresMemory.open(store, str(path), encoder), **kwargs)
            except NoSuchMemory:
                if not create:
                    raise
        if not (create and (store or not MemoryFolder.exists(path))):
            return cls.wrap(MemoryFolder.open(path, encoder, fsync), **kwargs)
        if encoder is None:
            from models.dual_encoder import load_encoder

            encoder = load_encoder(encoder_spec, precision)
        gap = timedelta(minutes=session_gap_minutes)
        folder = PostgresMemory.create(store, str(path), encoder, encoder_spec, tz, gap, turns) if store else \
            MemoryFolder.create(path, encoder, encoder_spec, tz, gap, turns, fsync)
        return cls.wrap(folder, **kwargs)

    @classmethod
    def wrap(cls, folder: LivingMemory, **kwargs) -> TemporalMemory:
        """The memory over an opened :class:`~retrieval.memory.memory_folder.MemoryFolder` (or its PostgreSQL
        counterpart), ``kwargs`` as the constructor's."""
        return cls(folder.table, folder=folder, **kwargs)

    def add(self, speaker: str, text: str, timestamp: datetime | str | None = None,
            session: int | None = None) -> int:
        """Record one turn, durable when this returns; its response index. ``timestamp``: now by default (naive:
        the memory's zone), never before the last turn's; ``session``: by the 30-minute gap rule unless given."""
        return self.add_many([{"speaker": speaker, "text": text, "timestamp": timestamp, "session": session}])[0]

    def add_many(self, turns: Sequence[dict], embeddings: dict | None = None, show_progress_bar: bool = False
                 ) -> list[int]:
        """Record turns ({"speaker", "text", "timestamp"?, "session"?}) in one transaction; each one's response
        index (:meth:`append`)."""
        return self.append(turns, embeddings, show_progress_bar).ids

    def append(self, turns: Sequence[dict], embeddings: dict | None = None,
               show_progress_bar: bool = False) -> Appended:
        """Record turns in one transaction: a :class:`~retrieval.memory.living_memory.Appended`, each turn's row and
        the number of exact duplicates skipped (same time, speaker and text as a row already there: an import run
        twice adds nothing). A turn before the last one (not a duplicate), or after this machine's clock by more than
        ``living_memory.FUTURE_SKEW``, is a ValueError naming it, and nothing of the batch is written. A memory made
        without a zone takes the one its first turns are written in."""
        appended = self.living().add_many(turns, embeddings, show_progress_bar)
        self.speakers = sorted(set(self.speakers) | {t["speaker"] for t in turns})
        return appended

    def living(self) -> LivingMemory:
        """The folder or database this memory was opened from; a RuntimeError for a memory read from a log."""
        if self.folder is None:
            raise RuntimeError("this memory was read from a log, not opened from a folder: use "
                               "TemporalMemory.open(path, create=True) and add_many the log's turns to it")
        return self.folder

    def evidence(self, frame: pd.DataFrame, include_asked: bool = False) -> pd.DataFrame:
        """The rows a question may be answered from: without the questions put to the memory and the LLM's answers
        recorded in it (their roles), unless ``include_asked``; a memory without such rows is not copied."""
        roles = self.folder.roles if self.folder is not None else None
        if include_asked or not roles:
            return frame
        cached = self._evidence_cache  # one copy per frame and roles, not one per question
        if cached is None or cached[0] is not frame or cached[1] != len(roles):
            cached = self._evidence_cache = (frame, len(roles), frame.drop(index=list(roles), errors="ignore"))
        return cached[2]

    def close(self) -> None:
        if self.folder is not None:
            self.folder.close()

    def resolve_now(self, now: datetime | str | None) -> datetime:
        """``now`` (None, an ISO 8601 string or a datetime) as a tz-aware datetime: default the end of the log;
        naive values take the log's zone."""
        if now is None:
            return self.table.end.to_pydatetime()
        if isinstance(now, str):
            parsed = read_timestamp(now)
            if parsed is None:
                raise ValueError(f"cannot read the time {now!r}: {timestamp_problem(now)[1]} (ISO 8601, e.g. "
                                 "2023-10-22T12:00)")
            now = parsed
        return now.replace(tzinfo=self.table.tz) if now.tzinfo is None else now

    def read_question(self, question: str, history: Sequence[ContextTurn] | None, now: datetime,
                      mode: str) -> AskedQuestion:
        """``question`` read once (:class:`~retrieval.memory.question.AskedQuestion`), earlier turns used as
        ``mode`` says: "carry" (their time expressions), "context" (joined to it), "llm" (an LLM's rewrite, read
        as the question) or "none"."""
        if history and mode == "llm":
            if self.llm_rewriter is None:
                raise ValueError("rewrite 'llm' needs a memory made with an llm_rewriter")
            rewritten = self.llm_rewriter.rewrite(history, question, now)
            return AskedQuestion.read(rewritten.text, now, self.speakers)._with(rewrite=rewritten)
        return AskedQuestion.read(question, now, self.speakers, history if mode != "none" else None, mode)

    def rewrite_query(self, question: str, history: Sequence[ContextTurn] | None, now: datetime,
                      mode: str) -> Rewrite | None:
        """How earlier turns rewrite ``question`` (None without them): :meth:`read_question`'s rewrite."""
        if not history or mode == "none":
            return None
        return self.read_question(question, history, now, mode).rewrite

    def content_rankings(self, query: str, depth: int, subset: Sequence[int]) -> list[list[tuple[int, float]]]:
        """The lists the content ranking fuses, each the top ``depth`` (id, score) of ``subset``: dense, then BM25
        (``hybrid``, the default; or one ranker only), over every view the table has (the utterance alone, and
        the turn it follows when the table was built with ``turns``)."""
        views = ("text", "turn") if self.table.turn_index is not None else ("text",)
        rankings = []
        if self.ranker in ("hybrid", "dense"):
            rankings += [self.table.rank(query, depth, subset, view) for view in views]
        if self.ranker in ("hybrid", "bm25"):
            rankings += [self.table.rank_sparse(query, depth, subset, view) for view in views]
        return rankings

    def _rank(self, query: str, k: int, subset: Sequence[int], prefer: Sequence[int] = (),
              margin: float | None = None, asks_when: bool = False) -> list[tuple[int, float]]:
        """The plan's content ranking: :meth:`content_rankings` fused (:func:`fuse_content`), best first, at most
        ``k``.
        ``prefer``: rows given a prior (the plan's named speaker; ``self.prior``). ``margin``: keep only the rows
        within ``margin`` times the spread of the fused scores (best minus the last candidate's; ``self.cut``
        "spread": minus the k-th, "top": of one list's top; :func:`cut_content`) of the best: a clear winner
        comes back alone, a close call with its rivals. With a second stage (``relevance``), the fused list is
        its candidates, and it orders and cuts them instead (``asks_when``: for a when-question's evidence)."""
        rankings = self.content_rankings(query, max(k, FUSION_DEPTH), subset)
        fused = fuse_content(rankings, self.fusion, None, prefer, self.prior)
        if self.relevance is not None:
            return self.relevance.rerank(self.table, query, fused, k, prefer, margin, asks_when)
        return cut_content(fused, margin, self.cut, self.fusion, k)

    def _when_rank(self, query: str, k: int, subset: Sequence[int], prefer: Sequence[int] = (),
                   margin: float | None = None) -> list[tuple[int, float]]:
        """:meth:`_rank` for a when-question's evidence."""
        return self._rank(query, k, subset, prefer, margin, asks_when=True)

    def rank_op(self, question: str) -> dict:
        """The content ranking the planner gives ``question`` (its query and speaker prior), with "now" at the
        end of the log; a question that names no content ranks by its whole normalised text."""
        read = AskedQuestion.read(question, self.resolve_now(None), self.speakers)
        return next((op for op in self.planner.plan(read).ops if op["op"] == "rank"),
                    {"op": "rank", "query": read.normalised, "k": PlannerConfig.content_k})

    def rank_rows(self, question: str, rows: pd.DataFrame, k: int) -> list[int]:
        """The top ``k`` of ``rows`` (a slice of the table's frame) for ``question``, by :meth:`rank_op` without
        its margin: a full ranking, for recall@k and MRR."""
        op = {key: v for key, v in self.rank_op(question).items() if key != "margin"}
        ranker = self._when_rank if question_kind(question) else self._rank  # a second stage reads which it is
        return execute([{**op, "k": k}], rows, ranker=ranker).ids

    def ask(self, question: str, history: Sequence[ContextTurn] | None = None, now: datetime | str | None = None,
            rewrite: str | None = None, include_asked: bool = False) -> TemporalResult:
        """Plan and run one question; ``history`` holds earlier turns (strings or {"speaker", "text"}).

        The calendar words mean days in one zone (the log's ``tz``, else the zone its timestamps are written in,
        else the zone of ``now``, else UTC): the plan's ``zone`` and notes say which. An empty question is a
        ValueError; a ``now`` before the log's first utterance is noted in the plan. The questions put to the memory
        and the LLM's answers recorded in it are not evidence unless ``include_asked``."""
        if not isinstance(question, str) or not question.strip():
            raise ValueError("the question is empty: ask about a time ('what did we discuss last Friday?') or a topic")
        if len(self.table) == 0:
            raise ValueError("the memory holds no turns yet: add some before asking about them")
        now_note = ("now is the log's last turn" if now is None else "now as given") + " ({}); " + (
            "pass now (--now) to ask as of another time" if now is None else "the calendar words count from it")
        given = now is not None
        now = self.resolve_now(now)
        zone = self.table.zone_for(now)
        now = instant(now).astimezone(zone.zone)  # via UTC: a wall time the clocks skip becomes a real one
        frame = self.evidence(self.table.frame_in(zone.zone), include_asked)
        if not len(frame):
            raise ValueError("the memory holds only questions put to it and their answers: nothing to answer from "
                             "(include them with include_asked / --include-asked)")
        read = self.read_question(question, history, now, rewrite or self.rewrite)
        asked, rewritten = read.text, read.rewrite
        plan = self.planner.plan(read, now, self.speakers)
        plan.zone = zone.name
        plan.notes += [zone.note, now_note.format(now.isoformat(timespec="minutes"))]
        first = frame["timestamp"].iloc[0]
        if now < first:
            plan.notes.append(f"now ({now.isoformat()}) is before the log's first utterance ({first.isoformat()}): "
                              "nothing had been said yet, so no row can be returned")
        execution = execute(plan.ops, frame, ranker=self._rank)  # rows in time order unless ranked
        kind, answer = read.kind, None
        if kind is not None:  # a question that asks when: the answer from the evidence's event time. The rows stay
            evidence_ops = when_ops(plan, read.normalised, now)  # the plan's (its cut, its period said in)
            evidence = with_probabilities(execute(evidence_ops, frame, ranker=self._when_rank), self.relevance)
            answer = answer_from_evidence(kind, evidence, now, self.evidence_rule, frame, question=asked)
            answer = anchored_answer(answer, lambda q: self.when_evidence(q, now), now, self.evidence_rule, frame)
            plan.notes.append(f"asks when ({kind}): answered from the evidence ranked by content (within the period it "
                              "names, by event time or, without one, by when it was said): "
                              + json.dumps(evidence_ops, default=str))
        if kind == "between":  # two events, each ranked on its own with the question's history (when_between)
            answer = length_between_events(asked, history, lambda part: self.when_evidence(
                part, now, history=history, rewrite=rewrite or self.rewrite), now, self.evidence_rule, frame) or answer
        shown = execution.rows if answer is not None else with_probabilities(execution, self.relevance)
        lead = (no_answer_note(answer), weak_evidence_note(answer, shown), rival_note(answer), plan_note(answer, now),
                language_note(question, any(not e.unresolved for e in read.expressions)),  # rows not in time
                None if len(execution.rows) else empty_note(plan.expressions, frame, now),
                future_note(now, given, FUTURE_SKEW))
        plan.notes[:0] = [n for n in lead if n]  # said first
        return TemporalResult(asked, execution.rows, plan, execution, rewritten, answer=answer)

    def when_evidence(self, question: str, now: datetime | None = None, margin: float | None = WHEN_MARGIN,
                      k: int = EVIDENCE_K, history: Sequence[ContextTurn] | None = None,
                      rewrite: str = "none") -> pd.DataFrame:
        """The evidence rows of a when-question, best first (:func:`~retrieval.memory.when_answer.when_ops`), cut at
        ``margin`` of the fused scores' spread from the best (None: all ``k``); ``now`` defaults to the log's end;
        ``history`` carried as :meth:`ask` carries it when ``rewrite`` is "carry" (an LLM's rewrite is read as is)."""
        now = self.resolve_now(now)
        read = self.read_question(question, history, now, "carry" if rewrite == "carry" else "none")
        ops = when_ops(self.planner.plan(read), read.normalised, now, k=k, margin=margin)
        return with_probabilities(execute(ops, self.evidence(self.table.frame), ranker=self._when_rank), self.relevance)


@dataclass(kw_only=True)
class AskArguments:
    """Ask a question of a conversation log."""

    question: str = option(help="the question", positional=True)
    log: str = option(help="a Zyphra .json, LoCoMo .json or JSONL chat log")
    format: str = option("auto", "the log's format", choices=("auto", "zyphra", "locomo", "jsonl"))
    sample: str | None = option(None, "LoCoMo sample id (default: the first)")
    tz: str | None = option(None, "zone of the log's calendar (default: the zone its timestamps are written in, "
        "else that of --now, else UTC)")
    timestamps: str = option("strict", "how log timestamps are read: strict (ISO 8601 or the dataset's format), "
        "lenient (also relative stamps, against the wall clock) or a strptime format such as '%d.%m.%Y %H:%M'")
    now: str | None = option(None, "the reference time, ISO 8601 (default: the end of the log)")
    history: list[str] = option([], "an earlier turn (repeat, oldest first)", nargs=1)
    rewrite: str = option("carry", "how earlier turns shape the question", choices=REWRITES)
    planner: str = option("rule", "who plans the table operations", choices=("rule", "llm"))
    llm: str | dict = option("smollm2", "LLM spec for --planner llm / --rewrite llm")
    encoder: str | None = option(None, "dual encoder checkpoint folder or backbone (default: packaged MiniLM)")
    cache_dir: str = option(help="embedding cache ('' for none)", default_factory=lambda: default_cache_dir("temporal"))
    content_k: int = option(PlannerConfig.content_k, "rows kept when content is named")
    content_margin: float | None = option(PlannerConfig.content_margin, "keep ranked rows within this share of the "
        "fused scores' spread (best to the last candidate) of the best ('none': all content-k)", parse=parse_margin)
    ranker: str = option("hybrid", "content ranking of the surviving rows", choices=RANKERS)
    fusion: str = option("scores", "content fusion: scores (min-max rescaled, summed) or rrf", choices=FUSIONS)
    content_cut: str = option(CUTS[0], "the margin is of the spread of the fused scores to the last candidate's "
        "(pool), to the k-th (spread: with --content-margin 0.6 --speaker-prior 1, the earlier cut) or of one "
        "list's top (top)", choices=CUTS)
    speaker_prior: float | None = option(None, "the named speaker's prior, in shares of one list's top (default: "
        "the fusion's, retrieval.memory.content_ranking.PRIOR_WEIGHTS)")
    relevance: str = option(AUTO, RELEVANCE_HELP)
    json: bool = option(False, "print the result as JSON")


def main(argv: Sequence[str] | None = None) -> int:
    _, args = parse_command({"ask": (AskArguments, AskArguments.__doc__)}, argv,
                            prog="python -m retrieval.memory.temporal_memory", description=__doc__.split("\n")[0])

    from models.dual_encoder import load_encoder
    from retrieval.data.jsonio import INPUT_ERRORS

    backend = None
    if args.planner == "llm" or args.rewrite == "llm":
        from retrieval.llm import load_backend

        backend = load_backend(args.llm)
    try:
        rule = RulePlanner(PlannerConfig(content_k=args.content_k, content_margin=args.content_margin))
        planner = LLMPlanner(backend, fallback=rule) if backend is not None and args.planner == "llm" else rule
        encoder = load_encoder(args.encoder)
        relevance, evidence_rule = second_stage(args.relevance, EVIDENCE_RULE, encoder.identity)
        memory = TemporalMemory.from_file(args.log, encoder=encoder, fmt=args.format, tz=args.tz,
                                          sample=args.sample, timestamps=args.timestamps,
                                          cache_dir=args.cache_dir or None, planner=planner, rewrite=args.rewrite,
                                          ranker=args.ranker, fusion=args.fusion, cut=args.content_cut,
                                          prior=args.speaker_prior, relevance=relevance,
                                          evidence_rule=evidence_rule,
                                          llm_rewriter=LLMRewriter(backend) if backend is not None and
                                          args.rewrite == "llm" else None)
    except (*INPUT_ERRORS, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        result = memory.ask(args.question, history=args.history, now=args.now)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print_result(result, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
