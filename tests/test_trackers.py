"""The trackers a run reports to (``--report-to tensorboard`` or ``wandb``, offline): a tiny DTR run writes its run
folder, which holds the logged metrics, and trains exactly as without a tracker. Nothing reaches the network."""

from __future__ import annotations

import json
import socket
import struct
import time

import pytest
import torch
from safetensors.torch import load_file
from test_train_dtr import run, tiny_ottqa  # noqa: F401  (the tiny OTT-QA files, a fixture)


@pytest.fixture(scope="module")
def untracked(tiny_backbone, tiny_ottqa, tmp_path_factory):  # noqa: F811
    out = tmp_path_factory.mktemp("untracked") / "run"
    return out, run(tiny_backbone, tiny_ottqa, out)


@pytest.fixture()
def no_network(monkeypatch):
    """Refuse every internet connection from this process while a tracker runs (local sockets still work: wandb
    talks to its own service over one); a proxy nobody listens on stops one from wandb's service too."""
    real = socket.socket.connect

    def connect(sock, address):
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            raise OSError(f"test: no network ({address})")
        return real(sock, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")
    monkeypatch.setenv("NO_PROXY", "")


def same_weights(a, b) -> bool:
    x, y = load_file(a / "last" / "model.safetensors"), load_file(b / "last" / "model.safetensors")
    return x.keys() == y.keys() and all(torch.equal(x[k], y[k]) for k in x)


def test_tensorboard_event_files_hold_the_logged_scalars(tiny_backbone, tiny_ottqa, tmp_path, untracked,  # noqa: F811
                                                         no_network):
    pytest.importorskip("tensorboard", reason="the trackers extra is not installed: pip install -e '.[trackers]'")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    out = tmp_path / "run"
    results = run(tiny_backbone, tiny_ottqa, out, "--report-to", "tensorboard")
    events = sorted((out / "dtr").glob("events.out.tfevents.*"))  # the run folder: OUTPUT_DIR/<project>
    assert events, sorted(p.relative_to(out).as_posix() for p in out.rglob("*tfevents*"))
    logged = EventAccumulator(str(out / "dtr")).Reload()
    assert {"train/loss", "train/lr", "val/mrr@10", "val/top1"} <= set(logged.Tags()["scalars"])
    assert "val/loss" not in logged.Tags()["scalars"]  # the record's loss is the training loss
    losses = logged.Scalars("train/loss")
    assert [e.step for e in losses] == [1, 2, 3, 4, 5, 6]
    assert [e.value for e in losses] == pytest.approx([v for _, v in results["train_loss"]], rel=1e-6)
    assert [e.value for e in logged.Scalars("val/mrr@10")] == pytest.approx([r["mrr@10"] for r in results["epochs"]])
    assert same_weights(out, untracked[0])  # a tracker reads the loss; it changes nothing


def test_wandb_offline_run_holds_the_logged_metrics(tiny_backbone, tiny_ottqa, tmp_path, untracked,  # noqa: F811
                                                    offline_wandb, no_network):
    out = tmp_path / "run"
    results = run(tiny_backbone, tiny_ottqa, out, "--report-to", "wandb")
    runs = sorted((out / "wandb").glob("offline-run-*"))  # without WANDB_DIR: in the run's folder
    assert len(runs) == 1, sorted(p.relative_to(out).as_posix() for p in (out / "wandb").rglob("*"))
    path, deadline = next(runs[0].glob("run-*.wandb")), time.monotonic() + 30
    while True:  # wandb's service writes the log on its own: on a loaded machine, after the run has returned
        records = wandb_records(path)
        history = [{i.key or "/".join(i.nested_key): json.loads(i.value_json) for i in r.history.item}
                   for r in records if r.WhichOneof("record_type") == "history"]
        if len(history) >= 6 or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert [h["_step"] for h in history] == [1, 2, 3, 4, 5, 6]
    assert [h["train/loss"] for h in history] == pytest.approx([v for _, v in results["train_loss"]], rel=1e-6)
    validated = [h for h in history if "val/mrr@10" in h]
    assert [h["_step"] for h in validated] == [4, 6] and "val/loss" not in validated[0]
    assert [h["val/mrr@10"] for h in validated] == pytest.approx([r["mrr@10"] for r in results["epochs"]])
    config = next(r.config for r in records if r.WhichOneof("record_type") == "config")
    assert {i.key: json.loads(i.value_json) for i in config.update}["learning_rate"] == 1e-3
    assert same_weights(out, untracked[0])


def test_wandb_dir_is_respected(tiny_backbone, tiny_ottqa, tmp_path, monkeypatch, offline_wandb,  # noqa: F811
                                no_network):
    (tmp_path / "tracking").mkdir()  # wandb writes into the working directory when WANDB_DIR is not a folder
    monkeypatch.setenv("WANDB_DIR", str(tmp_path / "tracking"))
    run(tiny_backbone, tiny_ottqa, tmp_path / "run", "--report-to", "wandb", "--max-train-steps", "1")
    assert len(list((tmp_path / "tracking" / "wandb").glob("offline-run-*/run-*.wandb"))) == 1
    assert not (tmp_path / "run" / "wandb").exists()


@pytest.fixture()
def offline_wandb(monkeypatch, tmp_path):
    """wandb offline, with its config, cache and data folders under ``tmp_path``: nothing under ~, no network.
    wandb reads the environment once a process (``wandb.setup``): each test starts and ends with a fresh one."""
    wandb = pytest.importorskip("wandb", reason="the trackers extra is not installed: pip install -e '.[trackers]'")
    for name in ("WANDB_DIR", "WANDB_API_KEY", "WANDB_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    for name, sub in (("WANDB_CONFIG_DIR", "config"), ("WANDB_CACHE_DIR", "cache"), ("WANDB_DATA_DIR", "data")):
        monkeypatch.setenv(name, str(tmp_path / "wandb_home" / sub))
    wandb.teardown()
    yield
    wandb.teardown()


def wandb_records(path) -> list:
    """The records of an offline run's transaction log (``run-ID.wandb``): a 7-byte header (``:W&B``, magic,
    version), then LevelDB's log format (32 KiB blocks of records, each a 7-byte header: checksum, length, type
    full / first / middle / last), each record a ``wandb_internal_pb2.Record``."""
    from wandb.proto import wandb_internal_pb2

    raw, block = path.read_bytes(), 32768
    assert raw[:4] == b":W&B", path
    pos, pending, records = 7, b"", []
    while pos + 7 <= len(raw):
        if block - pos % block < 7:  # a block's tail too short for a header is padding
            pos += block - pos % block
            continue
        _, length, kind = struct.unpack("<IHB", raw[pos:pos + 7])
        pending += raw[pos + 7:pos + 7 + length]
        pos += 7 + length
        if kind in (1, 4):  # a full record, or the last piece of one
            record = wandb_internal_pb2.Record()
            record.ParseFromString(pending)
            records.append(record)
            pending = b""
    return records
