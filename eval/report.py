"""What the evaluation commands share: result tables (the benchmarks' too), JSON reports, merging reports."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from retrieval import atomic
from retrieval.data.jsonio import DataError, read_json, run_cli  # noqa: F401  (the evaluation commands import run_cli here)


@dataclass(frozen=True)
class TableStyle:
    """How :func:`print_table` writes a table: each value's text, the columns' widths, what lies between them."""

    cell: Callable[[object], str]
    min_width: int = 0  # of each value column
    gap: str = "  "  # between columns
    rule: bool = True  # a line of dashes under the header
    min_label_width: int = 6  # of the row names' column, when the rows are named


def metric_cell(value: object) -> str:
    """A metric to 4 decimals; '-' where the row has none."""
    return f"{value:.4f}" if isinstance(value, float) else "-"


def measurement_cell(value: object) -> str:
    """A measurement to 4 significant figures (large ones in full, with thousands separators)."""
    if isinstance(value, float):
        return f"{value:.4g}" if abs(value) < 1e5 else f"{value:,.0f}"
    return "" if value is None else str(value)


METRICS = TableStyle(metric_cell, min_width=18, gap="", rule=False)  # the evaluations: methods as rows
MEASUREMENTS = TableStyle(measurement_cell)  # the benchmarks: one row per measured setting


def print_table(rows: Mapping[str, Mapping] | Sequence[Mapping], columns: Sequence[str] | None = None,
                title: str | None = None, style: TableStyle = MEASUREMENTS) -> str:
    """Print rows as an aligned plain-text table, columns right-aligned, and return the text.

    ``rows`` are dicts of column -> value, or a mapping of row name -> such a dict (the names then
    head the rows, left-aligned); ``columns`` defaults to the first row's keys. No rows: nothing.
    """
    if not rows:
        return ""
    named = isinstance(rows, Mapping)
    records = list(rows.values()) if named else list(rows)
    columns = list(columns or records[0].keys())
    cells = [[style.cell(r.get(c)) for c in columns] for r in records]
    widths = [max(style.min_width, len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
    lines = [style.gap.join(c.rjust(w) for c, w in zip(columns, widths))]
    if style.rule:
        lines.append(style.gap.join("-" * w for w in widths))
    lines += [style.gap.join(v.rjust(w) for v, w in zip(row, widths)) for row in cells]
    if named:
        label = max(style.min_label_width, *(len(name) for name in rows))
        names = ["", *([""] if style.rule else []), *rows]
        lines = [name.ljust(label) + style.gap + line for name, line in zip(names, lines)]
    text = ("\n" + title + "\n" if title else "") + "\n".join(lines)
    print(text, flush=True)
    return text


def write_json(path: str | None, results: dict) -> None:
    """Write results as indented JSON, creating the folder, whole or not at all; nothing when no path is given."""
    if path:
        atomic.write_json(path, results, indent=2)


def require_disjoint(parts: list[list[str]], what: str) -> list[str]:
    """The concatenated ``parts`` (the logs or samples of reports to merge); a DataError naming any that repeat,
    since a merge weights each report by its question count and would count a repeated one twice."""
    seen = [x for part in parts for x in part]
    repeated = sorted(x for x, n in Counter(seen).items() if n > 1)
    if repeated:
        raise DataError(f"--merge takes reports over disjoint {what}; {repeated} appear in more than one")
    return seen


def read_reports(paths: list[str], keys: tuple[str, ...]) -> list[dict]:
    """The JSON reports that ``--merge`` combines; a DataError naming the file that is missing, not JSON, or
    lacks one of ``keys`` (not a report of this command)."""
    reports = []
    for path in paths:
        report = read_json(path)
        missing = [k for k in keys if not isinstance(report, dict) or k not in report]
        if missing:
            raise DataError(f"{path}: not a report of this command (no {missing})")
        reports.append(report)
    return reports
