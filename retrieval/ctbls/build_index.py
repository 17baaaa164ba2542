"""Build a checkpoint's table index (and cell index) once, save it beside the checkpoint, and load it back.

    python -m retrieval.ctbls.build_index --dtr runs/dtr                   # -> runs/dtr/index/tables/
    python -m retrieval.ctbls.build_index --dtr runs/dtr --tracker runs/state_tracker --split test
                       # the split's tables -> runs/dtr/index/tables/, their cells -> runs/state_tracker/index/cells/
    ctbls index build --dtr runs/dtr --bf16        # encoded under bf16 autocast: chat takes --bf16 too

Chat and :class:`~retrieval.ctbls.pipeline.CTBLSPipeline` load a saved index in seconds (``DTR/index/tables``,
``TRACKER/index/cells``, or ``--index DIR`` for ``DIR/tables`` and ``DIR/cells``) instead of encoding the 8,891
tables again. The index records what it was built from: the encoder's identity, bf16 or fp32, the text settings,
a fingerprint of every table's text (or cells' texts) and the files they came from. A saved index that does not
fit the run (another checkpoint, ``--bf16`` on one side only, other tables or passages) is refused with one line
naming the difference; at the default place the pipeline then encodes instead and says so, and an index named
with ``--index`` ends the command (exit code 2).

**Cells.** The 8,891 tables hold 621,443 cells: hours on a 2-core CPU (about 40 cells a second here). Without a
cell index the pipeline encodes a table's cells when a conversation first reaches it (about 70 cells, a second or
two), cached per table in ``--cache-dir`` and shared with this command, so ``--tracker`` is optional. ``--split
test`` keeps the 1,799 tables of the test split: 125,314 cells, about 20 minutes here.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

from retrieval.config import option, parse_config, save_config
from retrieval.ctbls.state_tracker import CellStateTracker
from retrieval.ctbls.table_retriever import DenseTableRetriever
from retrieval.data.jsonio import DataError, run_cli
from retrieval.data.ottqa import DEFAULT_DATA_DIR, load_passages, load_tables
from retrieval.data.ottqa_conversations import table_split
from retrieval.data.paths import default_cache_dir
from retrieval.data.types import Table
from retrieval.search.index_record import IndexMismatchError

DEFAULT_TABLES = DEFAULT_DATA_DIR / "tables.jsonl"
DEFAULT_PASSAGES = DEFAULT_DATA_DIR / "passages_dev.jsonl"


def say(message: str) -> None:
    """A line for the person waiting (stderr: chat's --once keeps stdout for its JSON)."""
    print(message, file=sys.stderr, flush=True)


def table_index_dir(dtr: str | Path, index_dir: str | Path | None = None) -> Path:
    """Where a DTR's table index is saved: ``INDEX_DIR/tables``, by default ``DTR/index/tables``."""
    return Path(index_dir) / "tables" if index_dir else Path(dtr) / "index" / "tables"


def cell_index_dir(tracker: str | Path, index_dir: str | Path | None = None) -> Path:
    """Where a tracker's cell index is saved: ``INDEX_DIR/cells``, by default ``TRACKER/index/cells``."""
    return Path(index_dir) / "cells" if index_dir else Path(tracker) / "index" / "cells"


def build_command(dtr: str | Path, tables_file: str | Path | None = None, bf16: bool = False) -> str:
    """The command that saves the table index a run over these tables (or some of them) would load."""
    parts = ["python -m retrieval.ctbls.build_index", "--dtr", str(dtr)]
    if tables_file is not None and Path(tables_file).resolve() != DEFAULT_TABLES.resolve():
        parts += ["--tables", str(tables_file)]
    if bf16:
        parts.append("--bf16")
    return " ".join(parts)


def use_bf16(*encoders_of, bf16: bool) -> None:
    """Encode under bf16 autocast (or not) with each of these retrievers' and trackers' encoders."""
    for stage in encoders_of:
        stage.encoder.autocast_dtype = torch.bfloat16 if bf16 else None


def load_table_index(retriever: DenseTableRetriever, tables: Sequence[Table], folder: str | Path | None, *,
                     required: bool = False, cache_dir: str | Path | None = None, batch_size: int = 64,
                     hint: str | None = None) -> str:
    """Load the table index saved in ``folder`` for ``tables``, or encode them; returns which it did.

    ``required``: a missing or unfitting index is an error (an index the user named); otherwise the tables
    are encoded (a progress bar; cached in ``cache_dir``) after a line saying why, and ``hint`` (the build
    command) is suggested.
    """
    hint = hint or "python -m retrieval.ctbls.build_index --dtr DTR"
    if folder is not None and (Path(folder) / "index.json").is_file():
        try:
            started = time.perf_counter()
            retriever.load_index(folder, tables)
            say(f"loaded the table index {folder} ({len(tables):,} tables, {time.perf_counter() - started:.1f} s)")
            return "loaded"
        except IndexMismatchError as e:
            if required:
                raise IndexMismatchError(f"{e}; rebuild it: {hint}") from e
            say(f"{e}")
    elif required:
        raise DataError(f"{folder}: no saved table index there; build one: {hint}")
    else:
        say(f"no saved table index{f' at {folder}' if folder else ''}")
    say(f"encoding {len(tables):,} tables" + (f" (embeddings cached in {cache_dir})" if cache_dir else "")
        + f"; to save an index once: {hint}")
    retriever.index_tables(tables, batch_size=batch_size, show_progress_bar=True, cache_dir=cache_dir)
    return "encoded"


def load_cell_index(tracker: CellStateTracker, folder: str | Path | None, tables: Sequence[Table],
                    passages: Mapping[str, str] | None, *, required: bool = False) -> str:
    """Load the cell index saved in ``folder`` when there is one; returns "loaded" or "lazy".

    Without one (it is optional) the pipeline encodes each table's cells when a conversation first reaches
    it. One that does not fit is an error when ``required`` (an index the user named), else left unused.
    """
    if folder is None or not (Path(folder) / "index.json").is_file():
        return "lazy"
    try:
        tracker.load_index(folder, tables, passages)
    except IndexMismatchError as e:
        if required:
            raise IndexMismatchError(f"{e}; rebuild it: python -m retrieval.ctbls.build_index --dtr DTR "
                                     "--tracker TRACKER") from e
        say(f"{e}; each table's cells are encoded when a conversation first reaches it")
        return "lazy"
    say(f"loaded the cell index {folder} ({len(tracker.cells_of):,} tables)")
    return "loaded"


@dataclass(kw_only=True)
class BuildIndexArguments:
    """Encode a checkpoint's tables (and, with --tracker, their cells) once and save the index beside it."""

    dtr: str = option(help="Dense Table Retriever checkpoint folder")
    tracker: str | None = option(None, "also save this state tracker's cell index (slow on a CPU: see above)")
    tables: str = option(str(DEFAULT_TABLES), "OTT-QA tables.jsonl")
    passages: str = option(str(DEFAULT_PASSAGES), "linked page intros for the cell texts ('' for none)")
    split: str | None = option(None, "only the tables of this split", choices=("train", "val", "test"))
    bf16: bool = option(False, "encode under bf16 autocast (chat and the pipeline must then take --bf16 too)")
    output_dir: str | None = option(None, "put the indices in DIR/tables and DIR/cells (default: DTR/index/tables, "
                                          "TRACKER/index/cells)")
    cache_dir: str = option(help="embedding cache ('' to disable)", default_factory=default_cache_dir)
    batch_size: int = option(64, "encoder batch size")


def chosen_tables(tables_file: str, split: str | None) -> list[Table]:
    """The tables of ``tables_file`` (of ``split`` only, when given), by uid."""
    tables = load_tables(tables_file)
    chosen = [tables[u] for u in sorted(tables) if split is None or table_split(u) == split]
    if not chosen:
        raise DataError(f"{tables_file}: none of its {len(tables):,} tables is in split {split}")
    return chosen


def build(a: BuildIndexArguments) -> dict[str, Path]:
    """Build and save the indices ``a`` asks for; returns {"tables": folder, "cells": folder}."""
    started = time.perf_counter()
    tables = chosen_tables(a.tables, a.split)
    retriever = DenseTableRetriever.from_pretrained(a.dtr)
    use_bf16(retriever, bf16=a.bf16)
    say(f"encoding {len(tables):,} tables with {a.dtr}" + (" under bf16 autocast" if a.bf16 else ""))
    retriever.index_tables(tables, batch_size=a.batch_size, show_progress_bar=True, cache_dir=a.cache_dir or None,
                           tables_file=a.tables)
    out = {"tables": table_index_dir(a.dtr, a.output_dir)}
    retriever.save_index(out["tables"])
    save_config(a, out["tables"] / "config.yaml")
    say(f"saved {out['tables']} ({len(tables):,} tables, {time.perf_counter() - started:.0f} s)")
    if a.tracker:
        started = time.perf_counter()
        tracker = CellStateTracker.from_pretrained(a.tracker)
        use_bf16(tracker, bf16=a.bf16)
        passages = load_passages(a.passages) if a.passages else {}
        n_cells = sum(len(tracker.cells([t], passages)[0]) for t in tables)
        say(f"encoding the {n_cells:,} cells of {len(tables):,} tables with {a.tracker} (each table cached apart)")
        tracker.add_tables(tables, passages, batch_size=a.batch_size, cache_dir=a.cache_dir or None,
                           show_progress_bar=True, tables_file=a.tables, passages_file=a.passages or None)
        out["cells"] = cell_index_dir(a.tracker, a.output_dir)
        tracker.save_index(out["cells"])
        save_config(a, out["cells"] / "config.yaml")
        say(f"saved {out['cells']} ({n_cells:,} cells, {time.perf_counter() - started:.0f} s)")
    return out


def main(argv: list[str] | None = None) -> dict[str, Path]:
    a = parse_config(BuildIndexArguments, argv, prog="python -m retrieval.ctbls.build_index", description=__doc__)
    out = build(a)
    for kind, folder in out.items():
        print(f"{kind}: {folder}")
    return out


def cli() -> int:
    return run_cli(main)


if __name__ == "__main__":
    sys.exit(cli())
