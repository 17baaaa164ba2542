"""The extractive fine stage: a set of answer cells picked from the coarse state tracker's ranking, no LLM.

SQA's answers are sets of cells, nearly always of one column ("which of those were held in May?" -> the venues
of the May rows). A :class:`SelectionRule` takes the top-ranked cell's column and keeps the cells of that column
whose score lies within a margin of the top cell's:

- ``mode="absolute"``: score >= top - margin (the tracker's similarity scale);
- ``mode="relative"``: score >= top - margin * (top - lowest score in the column), so the margin is a share of
  the column's own spread and 1.0 keeps the whole column;
- ``scope="top"``: the top cell alone;
- ``scope="shape"``: as the predicted shape of the answer says (retrieval/ctbls/answer_shape.py): a whole column
  (the top cell's, or with ``column_by="mean"`` the column whose cells score best on average), one cell (the top
  one), or the top cell's column within the margin; with ``within_previous`` the cell and the subset come from
  the rows the previous answer named ("which of those ...?"), when there is one, and with ``use_mentions`` from
  the rows holding a value the question names ("which player went to Louisiana State?"), other than those cells.

Which rule and margin: chosen on SQA's dev tables by answer accuracy (eval/answer_accuracy.py), reported on the
validation tables; :func:`candidate_rules` is the grid it chooses from.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from retrieval.ctbls.cell_text import CellId

SCOPES = ("column", "top", "shape")
MODES = ("absolute", "relative")
COLUMN_CHOICES = ("top", "mean")
ABSOLUTE_MARGINS = (0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.15, 0.2, 0.3)
RELATIVE_MARGINS = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0)


@dataclass(frozen=True)
class SelectionRule:
    """Which cells of a ranked table make the answer: see the module's description."""

    scope: str = "column"
    mode: str = "relative"
    margin: float = 0.3
    within_previous: bool = False
    column_by: str = "top"  # which column a whole-column answer takes: the top cell's, or the best mean score
    use_mentions: bool = False  # a cell or subset answer comes from the rows holding a value the question names

    def __post_init__(self) -> None:
        if self.scope not in SCOPES:
            raise ValueError(f"unknown scope {self.scope!r}; choose from {SCOPES}")
        if self.mode not in MODES:
            raise ValueError(f"unknown mode {self.mode!r}; choose from {MODES}")
        if self.column_by not in COLUMN_CHOICES:
            raise ValueError(f"unknown column_by {self.column_by!r}; choose from {COLUMN_CHOICES}")
        if self.margin < 0:
            raise ValueError(f"margin must be non-negative, got {self.margin}")

    @property
    def name(self) -> str:
        if self.scope == "top":
            return "top cell"
        within = ", within the previous answer's rows" if self.within_previous else ""
        kind = "shape (column / cell / subset)" if self.scope == "shape" else "column"
        by = ", whole column by mean score" if self.scope == "shape" and self.column_by == "mean" else ""
        named = ", in the rows of values the question names" if self.use_mentions else ""
        return f"{kind}, {self.mode} margin {self.margin:g}{within}{by}{named}"


def candidate_rules(shapes: bool = False) -> list[SelectionRule]:
    """The grid a rule is chosen from: the top cell alone, then each mode's margins; with ``shapes`` also the
    shape rules, with and without the previous answer's rows."""
    rules = ([SelectionRule("top", "absolute", 0.0)]
             + [SelectionRule("column", "absolute", m) for m in ABSOLUTE_MARGINS]
             + [SelectionRule("column", "relative", m) for m in RELATIVE_MARGINS])
    if shapes:
        rules += [SelectionRule("shape", mode, m, within, by, named) for named in (False, True)
                  for by in COLUMN_CHOICES for within in (False, True)
                  for mode, margins in (("absolute", ABSOLUTE_MARGINS), ("relative", RELATIVE_MARGINS))
                  for m in margins]
    return rules


def select_cells(ranked: Sequence[tuple[CellId, float]], rule: SelectionRule, shape: str | None = None,
                 previous_rows: set[int] | None = None, mentioned: Sequence[CellId] = ()) -> list[CellId]:
    """The answer cells for one turn from ``ranked``: ((uid, row, col), score) of the table's cells, best first
    (rank the whole table: a cell not in ``ranked`` is never chosen). ``shape`` (the predicted one),
    ``previous_rows`` (the rows of the previous answer, None on a first turn) and ``mentioned`` (the cells whose
    value the question names) serve the shape rules. In ranking order; empty for an empty ranking."""
    if not ranked:
        return []
    if rule.scope == "shape" and shape == "column":
        return [cell for cell, _ in ranked if cell[2] == _whole_column(ranked, rule.column_by)]
    if rule.scope == "shape" and rule.within_previous and previous_rows:
        ranked = [(cell, score) for cell, score in ranked if cell[1] in previous_rows] or list(ranked)
    if rule.scope == "shape" and rule.use_mentions and mentioned:  # "which player went to LSU?": LSU's row
        rows, named = {cell[1] for cell in mentioned}, set(mentioned)
        ranked = [(cell, score) for cell, score in ranked if cell[1] in rows and cell not in named] or list(ranked)
    (top, best), *_ = ranked
    if rule.scope == "top" or (rule.scope == "shape" and shape == "cell"):
        return [top]
    column = [(cell, score) for cell, score in ranked if cell[2] == top[2]]
    floor = (best - rule.margin if rule.mode == "absolute"
             else best - rule.margin * (best - min(score for _, score in column)))
    return [cell for cell, score in column if score >= floor]


def _whole_column(ranked: Sequence[tuple[CellId, float]], column_by: str) -> int:
    """The column a whole-column answer takes: the top cell's, or the one whose cells score best on average."""
    if column_by == "top":
        return ranked[0][0][2]
    scores: dict[int, list[float]] = {}
    for (_, _, col), score in ranked:
        scores.setdefault(col, []).append(score)
    return max(scores, key=lambda col: sum(scores[col]) / len(scores[col]))
