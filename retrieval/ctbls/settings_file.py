"""A stage's text settings, saved beside its encoder so inference writes texts as training did.

A checkpoint folder without its settings file is refused, never read with the defaults: the
defaults may differ from what the encoder was trained with (the paper's table text for
``dtr_roberta``, a tracker's row context), and retrieval would silently lose accuracy.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import TypeVar

from retrieval.atomic import write_json
from retrieval.data.jsonio import DataError, read_json

S = TypeVar("S")


def save_settings(settings, folder: str | Path, name: str) -> Path:
    """Write the dataclass ``settings`` as ``folder/name``, whole or not at all."""
    return write_json(Path(folder, name), asdict(settings), indent=2)


def load_settings(cls: type[S], folder: str | Path, name: str, stage: str, writer: str) -> S:
    """The ``cls`` settings saved as ``folder/name``; a FileNotFoundError saying what to do when there are none."""
    file = Path(folder, name)
    if not Path(folder).is_dir():
        raise FileNotFoundError(f"{folder}: no such folder (a {stage} checkpoint folder, written by {writer})")
    if not file.is_file():
        raise FileNotFoundError(
            f"{folder}: no {name}, so this is not a complete {stage} checkpoint: the text settings its encoder "
            f"was trained with are missing (a training run stopped before it saved this model, or an encoder "
            f"saved on its own), and the defaults may not be them. Load a folder written by {writer}; for an "
            f"encoder folder whose settings you know, write them beside it with {cls.__name__}(...).save(folder).")
    settings = read_json(file)
    if not isinstance(settings, dict):
        raise DataError(f"{file}: not a mapping of {cls.__name__} settings")
    return cls(**settings)
