"""Self-supervised pairs from the tables themselves: (pseudo-query, table) for the DTR and
(pseudo-query, cell) for the state tracker.

OTT-QA questions name values from one row of a table plus words of its context, so a
pseudo-query is a few cells of a random row, a header name and, half the time, the
page title. Deterministic for a given seed.
"""

from __future__ import annotations

import random
from collections.abc import Mapping

from retrieval.data.types import Table


def pseudo_queries(table: Table, n: int, rng: random.Random) -> list[str]:
    """``n`` pseudo-queries for one table."""
    queries = []
    for _ in range(n):
        row = rng.choice(table.rows)
        texts = [c.text for c in row if c.text.strip()]
        picked = rng.sample(texts, min(len(texts), rng.randint(1, 3)))
        headers = [h for h in table.header if h.strip()]
        if headers:
            picked.append(rng.choice(headers))
        if rng.random() < 0.5:
            picked.insert(0, table.title)
        queries.append(" ".join(picked) or table.title)
    return queries


def pseudo_cell_queries(table: Table, n: int, rng: random.Random, passages: Mapping[str, str] | None = None,
                        passage_words: int = 10) -> list[tuple[str, tuple[int, int]]]:
    """``n`` (pseudo-query, (row, col)) pairs for the cell state tracker, from the table itself.

    OTT-QA's answer cell is found through the rest of its row (the conditions of the question), its column's
    header (what is asked) and often its linked page (the fact asked about). A pseudo-query is one or two
    other cells of the row, the target column's header and, half the time when the cell links to a page with
    an intro, a span of that intro (an inverse-cloze clue). The target cell's own text is never in the query.
    """
    targets = [(r, c) for r, row in enumerate(table.rows) for c, cell in enumerate(row) if cell.text.strip()]
    out: list[tuple[str, tuple[int, int]]] = []
    for _ in range(n if targets else 0):
        r, c = rng.choice(targets)
        others = [cell.text for j, cell in enumerate(table.rows[r]) if j != c and cell.text.strip()]
        parts = rng.sample(others, min(len(others), rng.randint(1, 2)))
        if c < len(table.header) and table.header[c].strip():
            parts.append(table.header[c])
        intros = [passages[link] for link in table.rows[r][c].links if passages and passages.get(link)]
        if intros and rng.random() < 0.5:
            words = intros[0].split()
            start = rng.randrange(max(1, len(words) - passage_words))
            parts.append(" ".join(words[start:start + passage_words]))
        rng.shuffle(parts)
        if parts:
            out.append((" ".join(parts), (r, c)))
    return out
