"""The fine stage by span choice: the LLM picks, among candidate spans of the top cells, the one it finds likeliest.

    from retrieval.ctbls.span_choice import choose_span, span_cells
    cells = span_cells(table, [(r, c), ...], passages, settings, passage_words=80)  # knowledge + spans source
    spans = candidate_spans([(c.value, c.passages) for c in cells])
    choice = choose_span(backend, build_span_messages(history, [c.text for c in cells], query), spans)
    choice.text, choice.span.rank, choice.scores[:3]

Fine state tracking is choosing the exact phrase from the ranked cells. A small model that writes
freely answers in sentences and strays from the knowledge; scoring each candidate span as the
assistant's whole answer (``log P(span, end of turn | prompt)``, :mod:`retrieval.llm.likelihood`) keeps
the answer a phrase of the knowledge and lets even SmolLM2-135M decide *which* phrase. ``scoring``:
``total`` (the probability of the answer as a whole), ``mean`` (per token, favouring longer spans) or
``pmi``: the total less the span's log-probability under a *baseline* prompt (the same messages without
the query), so a span counts for what the query adds to it, not for being short or common (a small model
otherwise prefers "1" and "2"; Holtzman et al., 2021, "Surface Form Competition", domain-conditional PMI).

Three fine stages share the same top cells (``FINE_STAGES``): ``free`` (the LLM writes the answer, the
paper's setting, for large models), ``spans`` (this module) and ``extractive`` (no LLM: the top cell's
value). A backend that cannot score (a server without log-probs) makes :func:`choose_span` return the
top-ranked span with ``ok=False`` and the reason, the documented fallback.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from retrieval.ctbls.cell_text import CellTextSettings, cell_text
from retrieval.ctbls.spans import Span, candidate_spans, normalise
from retrieval.data.types import Table
from retrieval.llm.base import Chat, LLMBackend
from retrieval.llm.likelihood import AnswerScore, LikelihoodUnsupported, answer_log_probs

FINE_STAGES = ("free", "spans", "extractive")
SCORINGS = ("total", "mean", "pmi")
DEFAULT_PASSAGE_WORDS = 80  # of each cell's linked pages, in the knowledge and as span source (chosen on train)


@dataclass(frozen=True)
class SpanCell:
    """A ranked cell as the span stage sees it: its prompt text, its value and its linked pages' text (cut)."""

    cell: tuple[int, int]
    text: str
    value: str
    passages: tuple[str, ...]


@dataclass
class SpanChoice:
    """The chosen span (None when there was none to choose), every candidate's score, best first, and why not ok."""

    span: Span | None
    scores: list[tuple[Span, AnswerScore]] = field(default_factory=list)
    ok: bool = True
    error: str | None = None

    @property
    def text(self) -> str:
        return self.span.text if self.span is not None else ""


def span_cells(table: Table, cells: Iterable[tuple[int, int]], passages: Mapping[str, str] | None,
               settings: CellTextSettings, passage_words: int | None = DEFAULT_PASSAGE_WORDS) -> list[SpanCell]:
    """The ranked cells' knowledge texts with their linked pages cut to ``passage_words`` (the tracker's own
    cut is shorter, for its encoder), and the same cut text as the source of passage spans."""
    wider = replace(settings, max_passage_words=passage_words)
    out = []
    for row, col in cells:
        cell = table.at(row, col)
        linked = " ".join(passages[link] for link in cell.links if passages and passages.get(link)) \
            if wider.passages else ""
        linked = " ".join(linked.split()[:passage_words] if passage_words is not None else linked.split())
        out.append(SpanCell((row, col), cell_text(table, row, col, passages, wider), cell.text,
                            (linked,) if linked else ()))
    return out


def cell_spans(cells: Sequence[SpanCell], **kwargs) -> list[Span]:
    """:func:`~retrieval.ctbls.spans.candidate_spans` of ranked :class:`SpanCell`\\ s (``kinds``, ``max_spans``)."""
    return candidate_spans([(c.value, c.passages) for c in cells], **kwargs)


def choose_span(backend: LLMBackend, messages: Chat, spans: Sequence[Span], *, scoring: str = "total",
                baseline: Chat | None = None, batch_tokens: int = 256) -> SpanChoice:
    """The span the model finds likeliest as the whole answer to ``messages``; ties go to the higher-ranked cell.

    ``scoring="pmi"`` needs ``baseline``, the messages without the query (see the module docstring); its
    scores' ``total`` is then the difference. Without spans the choice is None; a backend that cannot score
    falls back to the first (top cell's) span.
    """
    if scoring not in SCORINGS:
        raise ValueError(f"scoring must be one of {SCORINGS}, got {scoring!r}")
    if scoring == "pmi" and baseline is None:
        raise ValueError("scoring='pmi' needs the baseline messages (the prompt without the query)")
    if not spans:
        return SpanChoice(None, ok=True)
    texts = [s.text for s in spans]
    try:
        scored = answer_log_probs(backend, messages, texts, batch_tokens=batch_tokens)
        if scoring == "pmi" and baseline is not None:  # (checked above)
            prior = answer_log_probs(backend, baseline, texts, batch_tokens=batch_tokens)
            scored = [AnswerScore(a.text, a.total - p.total, a.tokens) for a, p in zip(scored, prior, strict=True)]
    except LikelihoodUnsupported as exc:
        return SpanChoice(spans[0], ok=False, error=str(exc))
    order = sorted(range(len(spans)), key=lambda i: (-_score(scored[i], scoring), spans[i].rank, i))
    return SpanChoice(spans[order[0]], [(spans[i], scored[i]) for i in order])


def choose_cells(choice: SpanChoice, cells: Sequence[SpanCell], *, margin: float | None = None,
                 scoring: str = "total") -> list[tuple[int, int]]:
    """The cells an answer names, for answers that are sets of cells (SQA): the cells whose value is the chosen
    span, plus, with ``margin``, every cell of the same column whose value scored within ``margin`` (log-prob)
    of the best. Cell-valued spans only; passage spans name no cell."""
    if choice.span is None:
        return []
    best = normalise(choice.text)
    chosen = [c for c in cells if normalise(c.value) == best]
    if margin is None or not choice.scores or not chosen:
        return [c.cell for c in chosen]
    column = chosen[0].cell[1]
    top = _score(choice.scores[0][1], scoring)
    close = {normalise(s.text) for s, a in choice.scores if _score(a, scoring) >= top - margin}
    return [c.cell for c in cells if c.cell[1] == column and normalise(c.value) in close]


def _score(a: AnswerScore, scoring: str) -> float:
    return a.mean if scoring == "mean" else a.total


def select_examples(turns: Iterable[tuple[Sequence[str], str, str, Sequence[Span]]], *,
                    kinds: Sequence[str] = ("cell", "entity", "number"), max_words: int = 60, per_kind: int = 1
                    ) -> list[tuple[list[str], str, str]]:
    """Few-shot examples by a stated rule: for each of ``kinds`` in turn, the first ``per_kind`` training turns (in
    the order given) whose reference answer is one of their candidate spans, of that kind, with knowledge of at
    most ``max_words`` words, and whose answer and knowledge no earlier pick has (SQA's annotators ask the same
    question of the same cell three times). ``turns``: ``(knowledge, query, answer, spans)``; returns
    ``(knowledge, query, answer)``, kind by kind."""
    picked: dict[str, list[tuple[list[str], str, str]]] = {k: [] for k in kinds}
    for knowledge, query, answer, spans in turns:
        if all(len(v) >= per_kind for v in picked.values()):
            break
        if sum(len(k.split()) for k in knowledge) > max_words:
            continue
        match = next((s for s in spans if normalise(s.text) == normalise(answer)), None)
        seen = [(e[0], normalise(e[2])) for v in picked.values() for e in v]
        if any(k == list(knowledge) or a == normalise(answer) for k, a in seen):
            continue
        if match is not None and match.kind in picked and len(picked[match.kind]) < per_kind:
            picked[match.kind].append((list(knowledge), query, match.text))
    return [example for k in kinds for example in picked[k]]
