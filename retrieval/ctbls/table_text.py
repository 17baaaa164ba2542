"""Text views of tables and cells, as the encoders and BM25 see them."""

from __future__ import annotations

from retrieval.data.types import Table

# Named table representations, measured against each other in the README.
TABLE_FIELDS = {
    # cTBLS: title, section title, section text and intro.
    "paper": ("title", "section_title", "section_text", "intro"),
    # Ours: the header names say what the table is about; the intro's start suffices.
    "header": ("title", "section_title", "header", "intro"),
    "header_rows": ("title", "section_title", "header", "first_rows", "intro"),
}


def _truncate(text: str, max_words: int | None) -> str:
    if max_words is None:
        return text
    words = text.split()
    return " ".join(words[:max_words])


def table_text(table: Table, representation: str = "header", max_intro_words: int | None = 64,
               n_rows: int = 2) -> str:
    """Linearise a table for retrieval under one of :data:`TABLE_FIELDS`."""
    try:
        fields = TABLE_FIELDS[representation]
    except KeyError:
        raise ValueError(f"unknown table representation {representation!r}; choose from {sorted(TABLE_FIELDS)}")
    parts = []
    for name in fields:
        if name == "header":
            value = " | ".join(h for h in table.header if h)
        elif name == "first_rows":
            value = " ; ".join(" | ".join(c.text for c in row) for row in table.rows[:n_rows])
        elif name == "intro":
            value = _truncate(table.intro, max_intro_words)
        else:
            value = getattr(table, name)
        if value:
            parts.append(value)
    return " . ".join(parts)
