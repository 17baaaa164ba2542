"""Typed training arguments: one YAML file per experiment, any key overridable as ``--key value``.

The resolved arguments are written beside the outputs (``config.yaml``) so every run says
exactly how it was made.
"""

from __future__ import annotations

import argparse
import dataclasses
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path

import yaml

DATA_DIR = str(Path(__file__).resolve().parents[2] / "shared" / "data")


@dataclass
class TrainingArguments:
    """Settings shared by the table retriever and the state tracker."""

    output_dir: str = field(default="runs/model", metadata={"help": "where checkpoints and results go"})
    model_name_or_path: str = field(default="packaged:minilm",
                                    metadata={"help": "hub name, folder, or packaged:minilm"})
    shared_encoder: bool = field(default=True, metadata={"help": "one tower for queries and documents"})
    pooling: str = "mean"
    normalize: bool = True
    temperature: float = 0.05
    max_query_length: int = 64
    max_document_length: int = 128
    per_device_train_batch_size: int = 16
    per_device_eval_batch_size: int = 64
    gradient_accumulation_steps: int = 1
    learning_rate: float = 2e-5
    weight_decay: float = 0.01
    lr_scheduler_type: str = "linear"
    num_warmup_steps: int = 5
    num_train_epochs: int = 1
    max_train_steps: int | None = field(default=None, metadata={"help": "stop after this many optimizer steps"})
    max_train_examples: int | None = field(default=None, metadata={"help": "cap on training pairs (quick runs)"})
    mixed_precision: str = field(default="no", metadata={"help": "no, fp16 or bf16"})
    seed: int = 42
    checkpointing_steps: int | None = field(default=None, metadata={"help": "save_state every N optimizer steps"})
    resume_from_checkpoint: str | None = field(default=None, metadata={"help": "a checkpoint folder or 'latest'"})
    report_to: str = field(default="none", metadata={"help": "none, tensorboard or wandb (offline)"})
    gather_across_processes: bool = field(default=True, metadata={"help": "in-batch negatives from all processes"})
    data_dir: str = field(default=DATA_DIR, metadata={"help": "folder holding ottqa/"})
    tables: str | None = field(default=None, metadata={"help": "tables.jsonl (default: DATA_DIR/ottqa)"})
    questions: str | None = field(default=None, metadata={"help": "questions file (default: DATA_DIR/ottqa)"})
    passages: str | None = field(default=None, metadata={"help": "passages_dev.jsonl (default: DATA_DIR/ottqa)"})

    def data_file(self, name: str) -> str:
        explicit = getattr(self, name)
        default = {"tables": "tables.jsonl", "questions": "questions_dev.json", "passages": "passages_dev.jsonl"}[name]
        return explicit or str(Path(self.data_dir) / "ottqa" / default)


def _parse_value(kind: object, text: str) -> object:
    """Convert a command-line string to a field's declared type (``int | None`` accepts 'none')."""
    if isinstance(kind, types.UnionType) or typing.get_origin(kind) is typing.Union:
        if text.lower() in ("none", "null"):
            return None
        kind = next(a for a in typing.get_args(kind) if a is not type(None))
    if kind is bool:
        if text.lower() not in ("true", "false", "1", "0", "yes", "no"):
            raise ValueError(f"expected a boolean, got {text!r}")
        return text.lower() in ("true", "1", "yes")
    return kind(text)


def parse_args(cls: type, argv: list[str] | None = None):
    """Build ``cls`` from ``--config FILE`` then ``--key value`` overrides."""
    hints = typing.get_type_hints(cls)
    parser = argparse.ArgumentParser(description=cls.__doc__)
    parser.add_argument("--config", help="YAML file of arguments")
    for f in dataclasses.fields(cls):
        parser.add_argument(f"--{f.name}", type=str, default=None, help=f.metadata.get("help", ""))
    ns = parser.parse_args(argv)
    values: dict = {}
    if ns.config:
        loaded = yaml.safe_load(Path(ns.config).read_text()) or {}
        unknown = set(loaded) - {f.name for f in dataclasses.fields(cls)}
        if unknown:
            parser.error(f"{ns.config}: unknown keys {sorted(unknown)}")
        values.update(loaded)
    for f in dataclasses.fields(cls):
        text = getattr(ns, f.name)
        if text is not None:
            try:
                values[f.name] = _parse_value(hints[f.name], text)
            except ValueError as e:
                parser.error(f"--{f.name}: {e}")
    return cls(**values)


def save_args(args, path: str | Path) -> None:
    Path(path).write_text(yaml.safe_dump(dataclasses.asdict(args), sort_keys=False))
