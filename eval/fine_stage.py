"""The span fine stage over an evaluation's turns, shared by the OTT-QA and SQA response evaluations.

For each turn: the tracker's top-``k`` cells become :class:`~retrieval.ctbls.span_choice.SpanCell`\\ s
(knowledge text with linked pages cut to ``passage_words``), their candidate spans are scored by the LLM
after the few-shot examples, and the likeliest span is the answer (:mod:`retrieval.ctbls.span_choice`).
Few-shot examples come from *training* turns by :func:`~retrieval.ctbls.span_choice.select_examples`'s rule,
never from the evaluated ones. ``exact_match`` is the share of answers equal to their reference after
:func:`~retrieval.ctbls.spans.normalise` (case and spacing).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from tqdm.auto import tqdm

from retrieval.ctbls.cell_text import CellTextSettings
from retrieval.ctbls.prompts import build_span_messages
from retrieval.ctbls.span_choice import (
    DEFAULT_PASSAGE_WORDS,
    SpanCell,
    SpanChoice,
    cell_spans,
    choose_span,
    select_examples,
    span_cells,
)
from retrieval.ctbls.spans import KINDS, normalise
from retrieval.ctbls.state_tracker import History
from retrieval.data.types import Conversation, Table


@dataclass(frozen=True)
class SpanStage:
    """The span stage's settings (each chosen on training/validation turns; see the README)."""

    k: int = 3  # top cells whose spans are candidates (and which are the knowledge)
    scoring: str = "pmi"
    shots: int = 3  # few-shot examples (0-3), one per kind: a cell value, an entity, a number of a linked page
    passage_words: int = DEFAULT_PASSAGE_WORDS
    kinds: tuple[str, ...] = KINDS
    example_words: int = 60  # the longest knowledge a few-shot example may have
    batch_tokens: int = 256  # answer tokens per scoring pass


def exact_match(predictions: Sequence[str], references: Sequence[str]) -> float:
    """Share of predictions equal to their reference, ignoring case and spacing."""
    pairs = list(zip(predictions, references, strict=True))
    return sum(normalise(p) == normalise(r) for p, r in pairs) / len(pairs) if pairs else 0.0


def training_examples(conversations: Iterable[Conversation], tables: Mapping[str, Table],
                      passages: Mapping[str, str], settings: CellTextSettings, stage: SpanStage, *,
                      kinds: Sequence[str] = ("cell", "entity", "number"), per_kind: int = 1
                      ) -> list[tuple[list[str], str, str]]:
    """``stage.shots`` few-shot examples from training conversations: each turn's own (first) answer cell as
    knowledge, chosen by :func:`~retrieval.ctbls.span_choice.select_examples` (``kinds``, ``per_kind``)."""
    if stage.shots == 0:
        return []

    def turns():
        for conv in conversations:
            for turn in conv.turns:
                if turn.targets and (turn.answer or "").strip():
                    cells = span_cells(tables[conv.table_id], turn.targets[:1], passages, settings,
                                       passage_words=stage.example_words // 2)
                    yield [c.text for c in cells], turn.query, turn.answer, cell_spans(cells, kinds=stage.kinds)

    return select_examples(turns(), kinds=kinds, per_kind=per_kind, max_words=stage.example_words)[:stage.shots]


def choose_spans(llm, turns: Sequence[tuple[History, str]], cells: Sequence[Sequence[SpanCell]],
                 examples: Sequence[tuple[list[str], str, str]], stage: SpanStage, *,
                 knowledge_budget: int | None, desc: str = "span choice") -> list[SpanChoice]:
    """One :class:`SpanChoice` per turn (``(history, query)``), from that turn's ranked span cells."""
    history = [[(q, a or "") for q, a in h] for h, _ in turns]
    choices = []
    for past, (_, query), ranked in tqdm(list(zip(history, turns, cells, strict=True)), desc=desc):
        ranked = list(ranked)[:stage.k]
        knowledge = [c.text for c in ranked]
        messages = build_span_messages(past, knowledge, query, examples=examples, knowledge_budget=knowledge_budget,
                                       count_tokens=llm.count_tokens)
        baseline = build_span_messages(past, knowledge, "", examples=examples, knowledge_budget=knowledge_budget,
                                       count_tokens=llm.count_tokens)
        choices.append(choose_span(llm, messages, cell_spans(ranked, kinds=stage.kinds), scoring=stage.scoring,
                                   baseline=baseline, batch_tokens=stage.batch_tokens))
    return choices
