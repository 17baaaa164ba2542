"""The extractive fine stage: a set of answer cells picked from the coarse state tracker's ranking, no LLM.

SQA's answers are sets of cells, nearly always of one column ("which of those were held in May?" -> the venues
of the May rows). A :class:`SelectionRule` takes the top-ranked cell's column and keeps the cells of that column
whose score lies within a margin of the top cell's:

- ``mode="absolute"``: score >= top - margin (the tracker's similarity scale);
- ``mode="relative"``: score >= top - margin * (top - lowest score in the column), so the margin is a share of
  the column's own spread and 1.0 keeps the whole column;
- ``scope="top"``: the top cell alone.

Which rule and margin: chosen on SQA's dev tables by answer accuracy (eval/answer_accuracy.py), reported on the
validation tables; :func:`candidate_rules` is the grid it chooses from.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from retrieval.ctbls.cell_text import CellId

SCOPES = ("column", "top")
MODES = ("absolute", "relative")
ABSOLUTE_MARGINS = (0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.15, 0.2, 0.3)
RELATIVE_MARGINS = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0)


@dataclass(frozen=True)
class SelectionRule:
    """Which cells of a ranked table make the answer: see the module's description."""

    scope: str = "column"
    mode: str = "relative"
    margin: float = 0.3

    def __post_init__(self) -> None:
        if self.scope not in SCOPES:
            raise ValueError(f"unknown scope {self.scope!r}; choose from {SCOPES}")
        if self.mode not in MODES:
            raise ValueError(f"unknown mode {self.mode!r}; choose from {MODES}")
        if self.margin < 0:
            raise ValueError(f"margin must be non-negative, got {self.margin}")

    @property
    def name(self) -> str:
        return "top cell" if self.scope == "top" else f"column, {self.mode} margin {self.margin:g}"


def candidate_rules() -> list[SelectionRule]:
    """The grid a rule is chosen from: the top cell alone, then each mode's margins."""
    return ([SelectionRule("top", "absolute", 0.0)]
            + [SelectionRule("column", "absolute", m) for m in ABSOLUTE_MARGINS]
            + [SelectionRule("column", "relative", m) for m in RELATIVE_MARGINS])


def select_cells(ranked: Sequence[tuple[CellId, float]], rule: SelectionRule) -> list[CellId]:
    """The answer cells for one turn from ``ranked``: ((uid, row, col), score) of the table's cells, best first
    (rank the whole table: a cell not in ``ranked`` is never chosen). In ranking order; empty for an empty ranking."""
    if not ranked:
        return []
    (top, best), *_ = ranked
    if rule.scope == "top":
        return [top]
    column = [(cell, score) for cell, score in ranked if cell[2] == top[2]]
    floor = (best - rule.margin if rule.mode == "absolute"
             else best - rule.margin * (best - min(score for _, score in column)))
    return [cell for cell, score in column if score >= floor]
