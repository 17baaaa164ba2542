"""Export a benchmark as a Hugging Face dataset: ``save_to_disk`` folder, JSON lines and Parquet.

    python -m retrieval.data.export --dataset ottqa-conversations --output-dir exports [--split test]
    ctbls data export --dataset logs --output-dir exports --formats parquet
    ctbls data export --dataset zyphra-temporal --output-dir exports --data-dir ../shared/data --max-rows 100

Writes ``OUTPUT_DIR/NAME/`` (``datasets.load_from_disk``), ``OUTPUT_DIR/NAME.jsonl`` and ``OUTPUT_DIR/NAME.parquet``
(``datasets.load_dataset("json" | "parquet", data_files=...)``), and the settings as ``OUTPUT_DIR/NAME.config.yaml``,
each renamed into place once complete. The columns of every dataset: README ("Datasets") or
retrieval/data/hf_datasets.py.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from retrieval.config import option, parse_config, save_config
from retrieval.data.hf_datasets import BENCHMARKS, FORMATS, benchmark, build, write
from retrieval.data.jsonio import run_cli
from retrieval.data.paths import data_dir_option


@dataclass
class ExportArguments:
    """Export a benchmark as a Hugging Face dataset."""

    dataset: str = option(help="which benchmark", choices=tuple(BENCHMARKS))
    output_dir: str = option(help="folder the files go into (NAME/, NAME.jsonl, NAME.parquet)")
    data_dir: str = data_dir_option("ottqa/, zyphra_temporal/, locomo/ and sqa/")
    split: str | None = option(None, "only this split (ottqa-*: train, val or test; sqa: train, dev or "
                                     "validation); default: every row, each naming its split")
    formats: list[str] = option(list(FORMATS), "what to write: disk (save_to_disk), json (JSON lines), parquet",
                                choices=FORMATS)
    max_rows: int | None = option(None, "only the first N rows (a quick look)")

    def __post_init__(self) -> None:
        benchmark(self.dataset, self.split)  # unknown, not available yet, or no such split: one line
        if not self.formats:
            raise ValueError("--formats: give at least one of " + ", ".join(FORMATS))
        if self.max_rows is not None and self.max_rows < 1:
            raise ValueError("--max-rows must be at least 1")


def main(argv: Sequence[str] | None = None) -> dict:
    args = parse_config(ExportArguments, argv, prog="python -m retrieval.data.export", description=__doc__)
    dataset = build(args.dataset, args.data_dir, args.split, args.max_rows)
    config_name = f"{args.dataset}.config.yaml"
    written = write(dataset, args.output_dir, args.dataset, args.formats,
                    also=lambda folder: save_config(args, Path(folder) / config_name))
    for path in written:
        print(path)
    print(f"{args.dataset}: {dataset.num_rows} rows")
    return {"dataset": args.dataset, "rows": dataset.num_rows, "files": [str(p) for p in written]}


def cli() -> int:
    return run_cli(main)


if __name__ == "__main__":
    sys.exit(cli())
