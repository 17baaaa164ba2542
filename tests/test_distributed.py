"""Negatives gathered across processes: two processes with batch B must train like one with batch 2B.

Two CPU processes (gloo) each embed their half of a batch with a DDP-wrapped tiny encoder and compute
``InBatchContrastiveLoss(gather_across_processes=True)``; their mean loss and DDP's averaged gradients
must equal the loss and gradients of one process on the whole batch. The end-to-end run, two CPU
processes of ``accelerate launch -m train.dtr`` with batch 2 against one with batch 4, is marked slow.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F
from torch import nn

from models.losses import InBatchContrastiveLoss

REPO = Path(__file__).resolve().parents[1]
B, DIM_IN, DIM_OUT, EXTRA = 4, 12, 8, 1  # per-process batch, input width, embedding width, negatives per pair
# (symmetric, with document ids, with hard negatives)
CASES = [(False, False, False), (False, True, False), (False, True, True), (True, False, False),
         (True, True, True)]


class TinyEncoder(nn.Module):
    """A stand-in for the dual encoder: one linear layer and L2 normalisation, (N, 12) -> (N, 8)."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(DIM_IN, DIM_OUT)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.normalize(self.proj(x), dim=-1)


def make_data(world: int) -> dict[str, torch.Tensor]:
    """A global batch of world*B queries, their positives, one extra negative each, and ids with repeats."""
    g = torch.Generator().manual_seed(0)
    n = world * B
    ids = torch.arange(n) % (n - 2)  # the last two pairs share tables with the first two: masked, not penalised
    return {"queries": torch.randn(n, DIM_IN, generator=g), "positives": torch.randn(n, DIM_IN, generator=g),
            "negatives": torch.randn(n * EXTRA, DIM_IN, generator=g), "pos_ids": ids,
            "neg_ids": 100 + torch.arange(n * EXTRA)}


def step(model: nn.Module, data: dict, lo: int, hi: int, case: tuple[bool, bool, bool]) -> torch.Tensor:
    """Loss of pairs lo..hi of the global batch, as train/dtr.py computes it (two forward calls)."""
    symmetric, with_ids, with_negatives = case
    docs, ids = data["positives"][lo:hi], data["pos_ids"][lo:hi]
    if with_negatives:
        docs = torch.cat([docs, data["negatives"][lo * EXTRA:hi * EXTRA]])
        ids = torch.cat([ids, data["neg_ids"][lo * EXTRA:hi * EXTRA]])
    loss_fn = InBatchContrastiveLoss(temperature=0.1, symmetric=symmetric, gather_across_processes=True)
    return loss_fn(model(data["queries"][lo:hi]), model(docs), ids if with_ids else None)


def reference(case: tuple[bool, bool, bool], world: int) -> tuple[float, dict[str, np.ndarray]]:
    torch.manual_seed(0)
    model = TinyEncoder()
    loss = step(model, make_data(world), 0, world * B, case)
    loss.backward()
    return loss.item(), {n: p.grad.numpy().copy() for n, p in model.named_parameters()}


def _worker(rank: int, world: int, port: int, out_dir: str) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        data = make_data(world)
        for c, case in enumerate(CASES):
            torch.manual_seed(0)
            model = nn.parallel.DistributedDataParallel(TinyEncoder())
            loss = step(model, data, rank * B, (rank + 1) * B, case)
            loss.backward()
            mean_loss = loss.detach().clone()
            dist.all_reduce(mean_loss)
            if rank == 0:
                grads = {n.removeprefix("module."): p.grad.numpy() for n, p in model.named_parameters()}
                np.savez(Path(out_dir) / f"case{c}.npz", loss=mean_loss.item() / world, **grads)
        # Tearing gloo down while the peer still has a send in flight aborts the process ("terminate called
        # without an active exception"), as train/loop.py's wait_for_everyone before end_training avoids.
        dist.barrier()
    finally:
        dist.destroy_process_group()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def two_process_results(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("ddp")
    for attempt in range(3):  # a free port can be taken by another process before gloo binds it: try another
        try:
            mp.spawn(_worker, args=(2, _free_port(), str(out)), nprocs=2, join=True)
            return out
        except (mp.ProcessRaisedException, mp.ProcessExitedException):
            if attempt == 2:
                raise
    return out


@pytest.mark.parametrize("c", range(len(CASES)), ids=[
    f"{'sym' if s else 'one-way'}{'-ids' if i else ''}{'-hardneg' if h else ''}" for s, i, h in CASES])
def test_two_processes_batch_b_equal_one_process_batch_2b(two_process_results, c):
    loss, grads = reference(CASES[c], world=2)
    got = np.load(two_process_results / f"case{c}.npz")
    assert abs(float(got["loss"]) - loss) < 1e-5
    for name, g in grads.items():
        np.testing.assert_allclose(got[name], g, atol=1e-6, rtol=1e-5, err_msg=name)


def test_gathered_loss_is_not_the_local_loss(two_process_results):
    """Guards the test itself: without the gather, each process would see only B-1 negatives."""
    torch.manual_seed(0)
    model = TinyEncoder()
    data = make_data(2)
    local = [step(model, data, r * B, (r + 1) * B, CASES[0]).item() for r in range(2)]
    assert abs(np.mean(local) - float(np.load(two_process_results / "case0.npz")["loss"])) > 1e-3


# ---- end to end: accelerate launch with two CPU processes ---------------------------------------------

def _tiny_data(root: Path) -> Path:
    from retrieval.data.ottqa_conversations import table_split

    (root / "ottqa").mkdir(parents=True)
    tables, questions, i = [], [], 0
    counts = {"train": 0, "val": 0}
    while counts["train"] < 8 or counts["val"] < 2:
        uid, i = f"tbl_{i}", i + 1
        split = table_split(uid)
        if split not in counts or counts[split] >= (8 if split == "train" else 2):
            continue
        k = counts[split] = counts[split] + 1
        tables.append({"uid": uid, "title": f"{uid} season {k}", "section_title": "Results", "intro": "",
                       "section_text": "", "header": [["Team", []], ["Points", []]],
                       "data": [[[f"team{k}", []], [str(k), []]]]})
        questions.append({"question_id": uid, "question": f"how many points did team{k} get in {uid}",
                          "table_id": uid, "answer-text": str(k), "answer-node": [[str(k), [0, 1], None, "table"]]})
    (root / "ottqa" / "tables.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tables))
    (root / "ottqa" / "questions_dev.json").write_text(json.dumps(questions))
    return root


def _no_dropout_backbone(path: Path) -> Path:
    """A tiny BERT without dropout, so two half-batches see the same network as one whole batch."""
    from transformers import AutoTokenizer, BertConfig, BertModel

    from models.packaged import default_encoder_path

    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(default_encoder_path())
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=128, hidden_dropout_prob=0.0,
                        attention_probs_dropout_prob=0.0)
    BertModel(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def _launch(num_processes: int, batch: int, data: Path, backbone: Path, out: Path) -> dict:
    accelerate = shutil.which("accelerate", path=str(Path(sys.executable).parent)) or "accelerate"
    # accelerate's --cpu flag starts one process unless MPI is set up (--mpirun_hostfile); --multi_gpu goes
    # through torchrun, and on a machine without GPUs accelerate then trains MULTI_CPU over gloo.
    mode = ["--multi_gpu"] if num_processes > 1 else ["--cpu"]
    cmd = [accelerate, "launch", *mode, "--num_processes", str(num_processes), "--num_machines", "1",
           "--mixed_precision", "no", "--dynamo_backend", "no", "--main_process_port", str(_free_port()),
           "-m", "train.dtr", "--data-dir", str(data), "--output-dir", str(out),
           "--model-name-or-path", str(backbone), "--per-device-train-batch-size", str(batch),
           "--max-train-steps", "3", "--learning-rate", "1e-3", "--num-warmup-steps", "0",
           "--val-distractors", "2", "--max-document-length", "32", "--max-query-length", "32",
           "--cache-dir", str(out.parent / "cache")]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false",
           "CUDA_VISIBLE_DEVICES": ""}
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads((out / "all_results.json").read_text())


@pytest.mark.slow
def test_accelerate_launch_two_cpu_processes_matches_one_process(tmp_path):
    from safetensors.torch import load_file

    data, backbone = _tiny_data(tmp_path / "data"), _no_dropout_backbone(tmp_path / "bert")
    two = _launch(2, 2, data, backbone, tmp_path / "two")
    one = _launch(1, 4, data, backbone, tmp_path / "one")
    assert two["num_processes"] == 2 and one["num_processes"] == 1 and two["steps"] == one["steps"] == 3
    a, b = load_file(tmp_path / "two" / "last" / "model.safetensors"), load_file(
        tmp_path / "one" / "last" / "model.safetensors")
    for name in a:
        torch.testing.assert_close(a[name], b[name], atol=1e-4, rtol=1e-3, msg=name)
