"""A tiny SQA folder in the official layout (train.tsv, table_csv/, tables_meta.jsonl), for reader and eval tests."""

from __future__ import annotations

import json
from pathlib import Path

from retrieval.data.sqa import table_split

HEADER = "id\tannotator\tposition\tquestion\ttable_file\tanswer_coordinates\tanswer_text\n"
TABLE = ('"Year","City","Venue"\n"1990","Atlanta","The Dome"\n"1991","Boston","\\"Garden\\" Arena"\n'
         '"1992","Atlanta","Stadium"\n')


def table_names(n: int, split: str) -> list[str]:
    """``n`` table file names that fall in our ``split`` (the split is a hash of the name)."""
    names, i = [], 0
    while len(names) < n:
        name = f"9{i:02d}_1.csv"
        if table_split(name) == split:
            names.append(name)
        i += 1
    return names


def rows_for(table: str, seq: str) -> list[str]:
    """Two sequences over ``table``: three turns by annotator 0 (written out of order), one by annotator 1."""
    tf = f"table_csv/{table}"
    return [
        f"{seq}\t0\t1\twhich of those were in atlanta?\t{tf}\t['(0, 2)', '(2, 2)']\t['The Dome', 'Stadium']\n",
        f"{seq}\t0\t0\twhat are the venues?\t{tf}\t['(0, 2)', '(1, 2)', '(2, 2)']\t"
        f"\"['The Dome', '\"\"Garden\"\" Arena', 'Stadium']\"\n",
        f"{seq}\t1\t0\twhich city was in 1991?\t{tf}\t['(1, 1)']\t['Boston']\n",
        f"{seq}\t0\t2\tand the first year?\t{tf}\t['(0, 0)', '(9, 0)']\t['1990', 'x']\n",
    ]


def sqa_folder(root: Path, splits: tuple[str, ...] = ("train", "dev", "validation")) -> Path:
    """``root`` as SQA's folder: one table (and two sequences over it) in each of ``splits``."""
    (root / "table_csv").mkdir(parents=True)
    lines, meta = [HEADER], []
    for k, split in enumerate(splits):
        (name,) = table_names(1, split)
        (root / "table_csv" / name).write_text(TABLE, encoding="utf-8")
        meta.append(json.dumps({"table_file": f"table_csv/{name}", "title": f"Concerts {k}", "url": ""}) + "\n")
        lines += rows_for(name, f"nt-{k}")
    (root / "train.tsv").write_text("".join(lines), encoding="utf-8")
    (root / "tables_meta.jsonl").write_text("".join(meta), encoding="utf-8")
    return root
