"""Printing result tables: methods as rows, metrics as columns."""

from __future__ import annotations


def print_table(title: str, rows: dict[str, dict], columns: list[str]) -> None:
    width = max([len(r) for r in rows] + [6])
    print(f"\n{title}")
    print(" " * width + "".join(f"{c:>18}" for c in columns))
    for name, metrics in rows.items():
        cells = "".join(f"{metrics[c]:>18.4f}" if isinstance(metrics.get(c), float) else f"{'-':>18}"
                        for c in columns)
        print(f"{name:<{width}}{cells}")
