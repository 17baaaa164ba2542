"""The accelerate training loop shared by the table retriever and the state tracker.

A straight line: Accelerator -> data -> optimizer/scheduler -> prepare -> loop with
``accumulate`` and ``sync_gradients`` -> ``save_state`` for resume -> validation each
epoch, best model kept -> final ``save_pretrained`` and ``all_results.json``.

Output folder: the kept model (best validation score; the last one without validation)
at its root, the last weights in ``last/``, resumable states in ``checkpoints/step_N``.
"""

from __future__ import annotations

import json
import math
import os
import re
import time
from collections.abc import Callable
from pathlib import Path

import torch
from accelerate import Accelerator
from accelerate.utils import DataLoaderConfiguration, DistributedDataParallelKwargs, set_seed
from torch.utils.data import DataLoader
from tqdm.auto import tqdm
from transformers import get_scheduler

from models.dual_encoder import DualEncoder
from train.args import TrainingArguments, save_args


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


def latest_checkpoint(output_dir: str | Path) -> Path | None:
    folders = list(Path(output_dir, "checkpoints").glob("step_*"))
    steps = [(int(m.group(1)), p) for p in folders if (m := re.fullmatch(r"step_(\d+)", p.name))]
    return max(steps)[1] if steps else None


def train(args: TrainingArguments, accelerator: Accelerator, model: DualEncoder, dataset, collate_fn: Callable,
          compute_loss: Callable[[torch.nn.Module, dict], torch.Tensor],
          evaluate: Callable[[DualEncoder], dict[str, float]] | None = None,
          metric_for_best: str = "mrr@10", project_name: str = "ctbls") -> dict:
    """Train ``model`` on ``dataset`` and return the results also written to ``all_results.json``."""
    out = Path(args.output_dir)
    if accelerator.is_main_process:
        out.mkdir(parents=True, exist_ok=True)
        save_args(args, out / "config.yaml")
    if args.report_to != "none":
        accelerator.init_trackers(project_name, config={k: v for k, v in vars(args).items() if v is not None})

    loader = DataLoader(dataset, batch_size=args.per_device_train_batch_size, shuffle=True,
                        collate_fn=collate_fn, generator=torch.Generator().manual_seed(args.seed))
    no_decay = ("bias", "LayerNorm.weight", "layer_norm.weight")
    groups = [
        {"params": [p for n, p in model.named_parameters() if not any(k in n for k in no_decay)],
         "weight_decay": args.weight_decay},
        {"params": [p for n, p in model.named_parameters() if any(k in n for k in no_decay)], "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(groups, lr=args.learning_rate)
    # Each process gets every num_processes-th batch, and accelerate steps a prepared scheduler once per
    # process at every optimizer step: count steps per process, and the schedule's length in its own units.
    processes = accelerator.num_processes
    steps_per_epoch = math.ceil(math.ceil(len(loader) / processes) / args.gradient_accumulation_steps)
    max_steps = args.max_train_steps or args.num_train_epochs * steps_per_epoch
    epochs = math.ceil(max_steps / steps_per_epoch)
    scheduler = get_scheduler(args.lr_scheduler_type, optimizer, num_warmup_steps=args.num_warmup_steps * processes,
                              num_training_steps=max_steps * processes)
    model, optimizer, loader, scheduler = accelerator.prepare(model, optimizer, loader, scheduler)
    assert math.ceil(len(loader) / args.gradient_accumulation_steps) == steps_per_epoch, "unexpected sharding"

    step, start_epoch, skip_batches = 0, 0, 0
    history: list[dict] = []
    if args.resume_from_checkpoint:
        path = latest_checkpoint(out) if args.resume_from_checkpoint == "latest" else Path(args.resume_from_checkpoint)
        if path is None:
            accelerator.print(f"no checkpoint under {out / 'checkpoints'}; starting from scratch")
        else:
            accelerator.load_state(str(path))
            step = int(path.name.split("_")[-1])
            start_epoch, skip_batches = divmod(step * args.gradient_accumulation_steps, len(loader))
            if (path / "history.json").is_file():
                history = json.loads((path / "history.json").read_text())
            accelerator.print(f"resumed from {path} at step {step}")

    best = max((h[metric_for_best] for h in history if metric_for_best in h), default=-math.inf)
    bar = tqdm(total=max_steps, initial=step, desc="train", disable=not accelerator.is_local_main_process)
    started = time.perf_counter()

    def checkpoint() -> None:
        path = out / "checkpoints" / f"step_{step}"
        accelerator.save_state(str(path))
        if accelerator.is_main_process:
            (path / "history.json").write_text(json.dumps(history))

    for epoch in range(start_epoch, epochs):
        model.train()
        loader.set_epoch(epoch)
        batches = accelerator.skip_first_batches(loader, skip_batches) if epoch == start_epoch else loader
        for batch in batches:
            with accelerator.accumulate(model):
                loss = compute_loss(model, batch)
                accelerator.backward(loss)
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad()
            if accelerator.sync_gradients:
                step += 1
                bar.update(1)
                bar.set_postfix(loss=f"{loss.item():.4f}")
                accelerator.log({"train/loss": loss.item(), "train/lr": scheduler.get_last_lr()[0]}, step=step)
                if args.checkpointing_steps and step % args.checkpointing_steps == 0:
                    checkpoint()
            if step >= max_steps:
                break
        skip_batches = 0
        record = {"epoch": epoch, "step": step, "loss": loss.item()}
        if evaluate is not None:
            if accelerator.is_main_process:
                record.update(evaluate(accelerator.unwrap_model(model)))
                accelerator.log({f"val/{k}": v for k, v in record.items() if isinstance(v, float)}, step=step)
                if record.get(metric_for_best, -math.inf) > best:
                    best = record[metric_for_best]
                    accelerator.unwrap_model(model).save_pretrained(out)
            accelerator.wait_for_everyone()
        history.append(record)
        accelerator.print(json.dumps(record))
        checkpoint()
        if step >= max_steps:
            break
    bar.close()

    accelerator.wait_for_everyone()
    results = {"train_runtime_s": round(time.perf_counter() - started, 1), "steps": step, "epochs": history,
               "num_processes": accelerator.num_processes, "train_examples": len(dataset),
               f"best_{metric_for_best}": None if best == -math.inf else best}
    if accelerator.is_main_process:
        unwrapped = accelerator.unwrap_model(model)
        unwrapped.save_pretrained(out / "last")
        if evaluate is None or best == -math.inf:
            unwrapped.save_pretrained(out)
        (out / "all_results.json").write_text(json.dumps(results, indent=2))
    accelerator.end_training()
    return results
