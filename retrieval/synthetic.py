"""Self-supervised (pseudo-query, table) pairs from the tables themselves.

OTT-QA questions name values from one row of a table plus words of its context, so a
pseudo-query is a few cells of a random row, a header name and, half the time, the
page title. Deterministic for a given seed.
"""

from __future__ import annotations

import random

from retrieval.types import Table


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
