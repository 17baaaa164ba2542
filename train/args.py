"""Typed training arguments: one YAML file per experiment, any key overridable as ``--key-name value``.

The mechanism is :mod:`retrieval.config` (``parse_config``); the training loop writes the resolved arguments
beside the outputs (``OUTPUT_DIR/config.yaml``) so every run says exactly how it was made.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from models.pooling import POOLING_MODES
from retrieval.config import option
from retrieval.config import save_config as save_args  # noqa: F401  (train/loop.py writes config.yaml with it)
from retrieval.data.paths import data_dir_option


@dataclass
class TrainingArguments:
    """Settings shared by the table retriever, the state tracker and the dialogue retriever."""

    output_dir: str = option("runs/model", "where checkpoints and results go")
    model_name_or_path: str = option("packaged:minilm", "hub name, folder, or packaged:minilm")
    shared_encoder: bool = option(True, "one tower for queries and documents")
    pooling: str = option("mean", "how token vectors become one", choices=POOLING_MODES)
    normalize: bool = option(True, "L2-normalise the embeddings")
    temperature: float = option(0.05, "softmax temperature of the contrastive loss")
    max_query_length: int = option(64, "token limit of a query")
    max_document_length: int = option(128, "token limit of a document")
    per_device_train_batch_size: int = option(16, "training pairs per process and step")
    per_device_eval_batch_size: int = option(64, "encoding batch size in validation")
    gradient_accumulation_steps: int = option(1, "batches per optimizer step")
    learning_rate: float = option(2e-5, "AdamW learning rate")
    weight_decay: float = option(0.01, "AdamW weight decay (not on biases and norms)")
    lr_scheduler_type: str = option("linear", "a transformers scheduler name")
    num_warmup_steps: int = option(5, "optimizer steps of learning-rate warm-up")
    num_train_epochs: int = option(1, "passes over the training pairs")
    max_train_steps: int | None = option(None, "stop after this many optimizer steps")
    max_train_examples: int | None = option(None, "cap on training pairs (quick runs)")
    mixed_precision: str = option("no", "no, fp16 or bf16")
    seed: int = option(42, "seed of the sampler, the model's new weights and the data")
    checkpointing_steps: int | None = option(None, "save_state every N optimizer steps")
    resume_from_checkpoint: str | None = option(None, "a checkpoint folder or 'latest'")
    report_to: str = option("none", "none, tensorboard or wandb (offline)")
    gather_across_processes: bool = option(True, "in-batch negatives from all processes")
    data_dir: str = data_dir_option("ottqa/ and locomo/")
    tables: str | None = option(None, "tables.jsonl (default: DATA_DIR/ottqa)")
    questions: str | None = option(None, "questions file (default: DATA_DIR/ottqa)")
    passages: str | None = option(None, "passages_dev.jsonl (default: DATA_DIR/ottqa)")

    def data_file(self, name: str) -> str:
        explicit = getattr(self, name)
        default = {"tables": "tables.jsonl", "questions": "questions_dev.json", "passages": "passages_dev.jsonl"}[name]
        return explicit or str(Path(self.data_dir) / "ottqa" / default)
