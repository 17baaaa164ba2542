"""Printing result tables: methods as rows, metrics as columns."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from retrieval.data.jsonio import DataError, read_json, run_cli  # noqa: F401  (the evaluation commands import run_cli here)


def print_table(title: str, rows: dict[str, dict], columns: list[str]) -> None:
    width = max([len(r) for r in rows] + [6])
    print(f"\n{title}")
    print(" " * width + "".join(f"{c:>18}" for c in columns))
    for name, metrics in rows.items():
        cells = "".join(f"{metrics[c]:>18.4f}" if isinstance(metrics.get(c), float) else f"{'-':>18}"
                        for c in columns)
        print(f"{name:<{width}}{cells}")


def write_json(path: str | None, results: dict) -> None:
    """Write results as indented JSON, creating the folder; nothing when no path is given."""
    if path:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(json.dumps(results, indent=2))


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
