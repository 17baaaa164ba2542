"""The accelerate training loop shared by the table retriever, the state tracker and the dialogue retriever.

A straight line (:func:`train`): Accelerator -> data -> optimizer/scheduler -> prepare -> resume ->
epochs of ``accumulate`` and ``sync_gradients`` (:func:`train_epoch`) -> ``save_state`` for resume ->
validation each epoch, best model kept (:func:`validate`) -> last model and ``all_results.json``
(:func:`finish`).

Every optimizer step's loss is kept as (step, loss) (``train_loss`` in ``all_results.json`` and in each
resumable state) and drawn with the validation metrics as ``training_curves.png`` (train/curves.py) at every
epoch; each model folder carries its ``README.md`` model card (train/model_card.py).

Output folder: the kept model (best validation score; the last one without validation)
at its root, the last weights in ``last/``, resumable states in ``checkpoints/step_N``; each
model with its stage's settings and card, and each folder complete when it appears (train/checkpoints.py).
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch
from accelerate import Accelerator
from accelerate.utils import DataLoaderConfiguration, DistributedDataParallelKwargs, set_seed
from torch.utils.data import DataLoader
from tqdm.auto import tqdm
from transformers import get_scheduler

from models.dual_encoder import DualEncoder
from retrieval.atomic import write_text
from train.args import TrainingArguments, save_args
from train.checkpoints import SaveSettings, latest_checkpoint, save_state, write_model, write_model_into
from train.curves import CURVES_NAME, plot_training
from train.model_card import ModelCard


def make_accelerator(args: TrainingArguments) -> Accelerator:
    if args.report_to == "wandb":
        os.environ.setdefault("WANDB_MODE", "offline")
    # Several processes on a machine without GPUs (torchrun, or `accelerate launch --multi_gpu`): accelerate
    # trains them together (MULTI_CPU over gloo) only when told it runs on the CPU. Otherwise each process
    # trains alone on all the data while torch.distributed is up, and the loss gathers duplicated batches.
    distributed = int(os.environ.get("WORLD_SIZE", "1")) > 1
    accelerator = Accelerator(
        cpu=distributed and not torch.accelerator.is_available(),
        # Hugging Face backbones carry a pooler whose output the dual encoder never uses (it pools the
        # last hidden states itself); DDP must be told, or it fails at the second step.
        kwargs_handlers=[DistributedDataParallelKwargs(find_unused_parameters=True)],
        gradient_accumulation_steps=args.gradient_accumulation_steps,
        mixed_precision=args.mixed_precision,
        log_with=None if args.report_to == "none" else args.report_to,
        project_dir=args.output_dir,
        dataloader_config=DataLoaderConfiguration(use_seedable_sampler=True),
    )
    if distributed and accelerator.num_processes == 1:
        raise RuntimeError(f"launched as {os.environ['WORLD_SIZE']} processes but accelerate runs them apart "
                           f"({accelerator.distributed_type}); check the launch command")
    set_seed(args.seed)
    return accelerator


@dataclass
class Run:
    """A training run under way: what accelerate prepared, where it writes, and how far it got."""

    args: TrainingArguments
    accelerator: Accelerator
    model: torch.nn.Module
    optimizer: torch.optim.Optimizer
    loader: DataLoader
    scheduler: object
    max_steps: int
    save_settings: SaveSettings | None = None
    card: ModelCard | None = None
    step: int = 0
    history: list[dict] = field(default_factory=list)  # one record per finished epoch
    train_loss: list[list[float]] = field(default_factory=list)  # [step, loss] at every optimizer step

    @property
    def out(self) -> Path:
        return Path(self.args.output_dir)

    def checkpoint(self) -> None:
        """Save the resumable state as ``checkpoints/step_N``."""
        save_state(self.accelerator, self.out / "checkpoints" / f"step_{self.step}", self.history, self.train_loss)

    def draw_curves(self, metric: str) -> None:
        """``training_curves.png`` from the steps and epochs so far (main process)."""
        if self.accelerator.is_main_process:
            title = f"{self.card.title if self.card else 'Training'} ({self.out})"
            plot_training(self.out / CURVES_NAME, self.train_loss, self.history, metric, title)


def make_optimizer(args: TrainingArguments, model: torch.nn.Module) -> torch.optim.Optimizer:
    """AdamW, without weight decay on biases and layer norms."""
    no_decay = ("bias", "LayerNorm.weight", "layer_norm.weight")
    groups = [
        {"params": [p for n, p in model.named_parameters() if not any(k in n for k in no_decay)],
         "weight_decay": args.weight_decay},
        {"params": [p for n, p in model.named_parameters() if any(k in n for k in no_decay)], "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(groups, lr=args.learning_rate)


def resume(run: Run) -> tuple[int, int]:
    """Load the state ``--resume_from_checkpoint`` names, if any; returns (epoch to start, batches to skip)."""
    args, accelerator = run.args, run.accelerator
    if not args.resume_from_checkpoint:
        return 0, 0
    path = latest_checkpoint(run.out) if args.resume_from_checkpoint == "latest" else Path(args.resume_from_checkpoint)
    if path is None:
        accelerator.print(f"no checkpoint under {run.out / 'checkpoints'}; starting from scratch")
        return 0, 0
    accelerator.load_state(str(path))
    run.step = int(path.name.split("_")[-1])
    if (path / "history.json").is_file():
        run.history = json.loads((path / "history.json").read_text())
    if (path / "train_loss.json").is_file():
        run.train_loss = json.loads((path / "train_loss.json").read_text())
    accelerator.print(f"resumed from {path} at step {run.step}")
    return divmod(run.step * args.gradient_accumulation_steps, len(run.loader))


def train_epoch(run: Run, compute_loss: Callable, epoch: int, skip: int | None, bar: tqdm) -> float:
    """One pass over the data (after ``skip`` batches, when given), checkpointing every ``checkpointing_steps``
    optimizer steps; stops at ``max_steps``. Returns the last batch's loss."""
    args, accelerator, model = run.args, run.accelerator, run.model
    model.train()
    run.loader.set_epoch(epoch)
    batches = accelerator.skip_first_batches(run.loader, skip) if skip is not None else run.loader
    for batch in batches:
        with accelerator.accumulate(model):
            loss = compute_loss(model, batch)
            accelerator.backward(loss)
            run.optimizer.step()
            run.scheduler.step()
            run.optimizer.zero_grad()
        if accelerator.sync_gradients:
            run.step += 1
            value = loss.item()  # read only: the computation is the same with or without the log
            run.train_loss.append([run.step, value])
            bar.update(1)
            bar.set_postfix(loss=f"{value:.4f}")
            accelerator.log({"train/loss": value, "train/lr": run.scheduler.get_last_lr()[0]}, step=run.step)
            if args.checkpointing_steps and run.step % args.checkpointing_steps == 0:
                run.checkpoint()
        if run.step >= run.max_steps:
            break
    return loss.item()


def card_writer(run: Run, kept: dict | None, role: str, results: dict | None = None):
    """The card of a model folder holding the model of record ``kept`` (see train/model_card.py)."""
    records = run.history + ([kept] if kept is not None and kept not in run.history else [])
    return run.card.writer(records, kept, role, results) if run.card else None


def validate(run: Run, evaluate: Callable[[DualEncoder], dict[str, float]], record: dict, best: float,
             metric_for_best: str) -> float:
    """Score the model into ``record`` (main process) and keep it at the root, with its card, when it beats
    ``best``; returns the best score so far."""
    accelerator = run.accelerator
    if accelerator.is_main_process:
        model = accelerator.unwrap_model(run.model)
        record.update(evaluate(model))
        accelerator.log({f"val/{k}": v for k, v in record.items() if isinstance(v, float) and k != "loss"},
                        step=run.step)  # the record's loss is the training loss, logged as train/loss
        if record.get(metric_for_best, -math.inf) > best:
            best = record[metric_for_best]
            write_model_into(model, run.out, run.save_settings, card_writer(run, record, "best"))
    accelerator.wait_for_everyone()
    return best


def finish(run: Run, results: dict, keep_last: bool, metric_for_best: str) -> dict:
    """Write the last model to ``last/`` (and to the root when ``keep_last``), ``all_results.json`` (with every
    step's loss) and ``training_curves.png``; the root's card is rewritten with the whole run."""
    accelerator = run.accelerator
    results["train_loss"] = run.train_loss
    if accelerator.is_main_process:
        model = accelerator.unwrap_model(run.model)
        last = run.history[-1] if run.history else None
        write_model(model, run.out / "last", run.save_settings, card_writer(run, last, "last", results))
        if keep_last:
            write_model_into(model, run.out, run.save_settings, card_writer(run, last, "last", results))
        elif run.card is not None:  # the kept model is older: only its card learns how the run ended
            kept = max((r for r in run.history if metric_for_best in r), key=lambda r: r[metric_for_best])
            card_writer(run, kept, "best", results)(run.out, run.out)
        write_text(run.out / "all_results.json", json.dumps(results, indent=2))
        run.draw_curves(metric_for_best)
    accelerator.end_training()
    return results


def train(args: TrainingArguments, accelerator: Accelerator, model: DualEncoder, dataset, collate_fn: Callable,
          compute_loss: Callable[[torch.nn.Module, dict], torch.Tensor],
          evaluate: Callable[[DualEncoder], dict[str, float]] | None = None,
          metric_for_best: str = "mrr@10", project_name: str = "ctbls",
          save_settings: SaveSettings | None = None) -> dict:
    """Train ``model`` on ``dataset`` and return the results also written to ``all_results.json``.

    ``save_settings(folder)`` writes the stage's own settings files (the DTR's table text, the tracker's
    cell text) into every model folder the run saves, together with the model, before it appears.
    """
    out = Path(args.output_dir)
    if accelerator.is_main_process:
        out.mkdir(parents=True, exist_ok=True)
        save_args(args, out / "config.yaml")
    if args.report_to != "none":
        # wandb writes its run folder under WANDB_DIR, else here: in the run's folder, as tensorboard does.
        init = {"wandb": {"dir": str(out)}} if args.report_to == "wandb" and not os.environ.get("WANDB_DIR") else {}
        accelerator.init_trackers(project_name, config={k: v for k, v in vars(args).items() if v is not None},
                                  init_kwargs=init)

    loader = DataLoader(dataset, batch_size=args.per_device_train_batch_size, shuffle=True,
                        collate_fn=collate_fn, generator=torch.Generator().manual_seed(args.seed))
    optimizer = make_optimizer(args, model)
    # Each process gets every num_processes-th batch, and accelerate steps a prepared scheduler once per
    # process at every optimizer step: count steps per process, and the schedule's length in its own units.
    processes = accelerator.num_processes
    steps_per_epoch = math.ceil(math.ceil(len(loader) / processes) / args.gradient_accumulation_steps)
    max_steps = args.max_train_steps or args.num_train_epochs * steps_per_epoch
    scheduler = get_scheduler(args.lr_scheduler_type, optimizer, num_warmup_steps=args.num_warmup_steps * processes,
                              num_training_steps=max_steps * processes)
    model, optimizer, loader, scheduler = accelerator.prepare(model, optimizer, loader, scheduler)
    assert math.ceil(len(loader) / args.gradient_accumulation_steps) == steps_per_epoch, "unexpected sharding"
    run = Run(args, accelerator, model, optimizer, loader, scheduler, max_steps, save_settings,
              ModelCard(args, project_name, metric_for_best))
    start_epoch, skip_batches = resume(run)

    best = max((h[metric_for_best] for h in run.history if metric_for_best in h), default=-math.inf)
    bar = tqdm(total=max_steps, initial=run.step, desc="train", disable=not accelerator.is_local_main_process)
    started = time.perf_counter()
    for epoch in range(start_epoch, math.ceil(max_steps / steps_per_epoch)):
        loss = train_epoch(run, compute_loss, epoch, skip_batches if epoch == start_epoch else None, bar)
        record = {"epoch": epoch, "step": run.step, "loss": loss}
        if evaluate is not None:
            best = validate(run, evaluate, record, best, metric_for_best)
        run.history.append(record)
        accelerator.print(json.dumps(record))
        run.checkpoint()
        run.draw_curves(metric_for_best)
        if run.step >= max_steps:
            break
    bar.close()

    accelerator.wait_for_everyone()
    results = {"train_runtime_s": round(time.perf_counter() - started, 1), "steps": run.step, "epochs": run.history,
               "num_processes": accelerator.num_processes, "train_examples": len(dataset),
               f"best_{metric_for_best}": None if best == -math.inf else best}
    return finish(run, results, evaluate is None or best == -math.inf, metric_for_best)
