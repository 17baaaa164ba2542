"""The folders a training run writes, each complete when it appears.

A run's output folder holds the kept model at its root (with ``config.yaml``, ``all_results.json``
and the logs), the last model in ``last/`` and resumable states in ``checkpoints/step_N``. Every
model is written with its stage's settings (the DTR's ``table_retriever.json``, the tracker's
``state_tracker.json``) into a staging folder beside its place, and only then put there, so an
interrupted run never leaves a folder that loads as something it is not (a DTR without its table
text would load with the default one):

- ``last/`` and ``checkpoints/step_N`` are renamed into place whole; an older folder of the same
  name is first moved aside, and deleted once the new one is in place.
- The root cannot be renamed (it holds the rest of the run), so the staged model's files move in
  one by one: its settings files (``dual_encoder.json``, then the stage's) are deleted first and
  moved in last. At every moment the root holds a complete model or lacks its settings, which
  loading reports as an error.

Each model folder also gets its ``README.md`` model card (train/model_card.py), written into the staging
folder after the settings it describes, so a folder never appears without its card; resumable states have none.

Staging folders are dot-folders (``.last.staging-*``, ``.step_N.staging``); one left by a killed
run is never loaded, and a state's is cleared by the next save of that step.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path

from accelerate import Accelerator

from models.dual_encoder import CONFIG_NAME, DualEncoder
from retrieval.atomic import remove, rename_into_place, staging_folder, write_text

SaveSettings = Callable[[Path], None]  # writes a stage's settings files into a model folder
WriteCard = Callable[[Path, Path], None]  # writes the model card into a staged folder: (staging, final place)


def move_files_into(staging: Path, folder: Path, last: Sequence[str]) -> None:
    """Move every entry of ``staging`` into ``folder``; the files named ``last`` go out first and in last."""
    for name in reversed(last):
        (folder / name).unlink(missing_ok=True)
    for entry in sorted(staging.iterdir()):
        if entry.name not in last:
            remove(folder / entry.name)
            os.replace(entry, folder / entry.name)
    for name in last:
        os.replace(staging / name, folder / name)


def stage_model(model: DualEncoder, staging: Path, save_settings: SaveSettings | None,
                card: WriteCard | None = None, place: Path | None = None) -> list[str]:
    """Write ``model``, its stage's settings and (given ``card``) its card for ``place`` into ``staging``; returns
    the settings files, in write order."""
    model.save_pretrained(staging)
    encoder_files = {p.name for p in staging.iterdir()}
    if save_settings is not None:
        save_settings(staging)
    settings = [CONFIG_NAME] + sorted(p.name for p in staging.iterdir() if p.name not in encoder_files)
    if card is not None:
        card(staging, place or staging)
    return settings


def write_model(model: DualEncoder, folder: Path, save_settings: SaveSettings | None = None,
                card: WriteCard | None = None) -> None:
    """Write ``model`` with its settings (and card) as the folder ``folder`` (``last/``), which appears complete."""
    with staging_folder(folder.parent, folder.name) as staging:
        stage_model(model, staging, save_settings, card, folder)
        rename_into_place(staging, folder)


def write_model_into(model: DualEncoder, folder: Path, save_settings: SaveSettings | None = None,
                     card: WriteCard | None = None) -> None:
    """Write ``model`` with its settings (and card) into ``folder``, which holds other things too (the run's root)."""
    with staging_folder(folder, "model") as staging:
        settings = stage_model(model, staging, save_settings, card, folder)
        move_files_into(staging, folder, settings)


def save_state(accelerator: Accelerator, folder: Path, history: list[dict],
               train_loss: list[list[float]] | None = None) -> None:
    """accelerate's resumable state, the epoch records and the (step, loss) log so far, as ``folder`` once all
    processes wrote theirs."""
    staging = folder.with_name(f".{folder.name}.staging")  # one name every process knows
    if accelerator.is_main_process:
        remove(staging)  # left by an interrupted run
    accelerator.wait_for_everyone()
    accelerator.save_state(str(staging))
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        write_text(staging / "history.json", json.dumps(history))
        write_text(staging / "train_loss.json", json.dumps(train_loss or []))
        rename_into_place(staging, folder)


def latest_checkpoint(output_dir: str | Path) -> Path | None:
    """The resumable state of the most steps under ``output_dir/checkpoints``, if any."""
    folders = list(Path(output_dir, "checkpoints").glob("step_*"))
    steps = [(int(m.group(1)), p) for p in folders if (m := re.fullmatch(r"step_(\d+)", p.name))]
    return max(steps)[1] if steps else None
