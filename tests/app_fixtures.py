"""The page's services over tiny models and tiny data (tables, SQA, a log), for the app's tests."""

from __future__ import annotations

import json
from pathlib import Path

from ctbls_fixtures import FakeLLM, write_checkpoints, write_tiny_ottqa
from sqa_fixtures import sqa_folder

from benchmarks.service_load import SEED_TURNS

LOG = SEED_TURNS  # twelve turns over May 2023 (UTC); the tests ask about these days by name


def write_log(path: Path) -> Path:
    path.write_text("".join(json.dumps({"speaker": s, "text": t, "timestamp": ts}) + "\n" for s, t, ts in LOG))
    return path


def tiny_services(backbone: str, root: Path, live: bool = True):
    """:class:`~retrieval.app.page.Services` over untrained tiny checkpoints, the tiny OTT-QA and SQA folders, a
    six-turn log, and a living memory under ``root``; the LLM answers with the first cell's value."""
    from models.dual_encoder import load_encoder
    from retrieval.app.memory_demo import MemoryDemo
    from retrieval.app.page import Services
    from retrieval.app.tables_demo import TablesDemo
    from retrieval.app.trends_demo import TrendsDemo

    ottqa = write_tiny_ottqa(root / "ottqa")
    sqa = sqa_folder(root / "sqa")
    dtr, tracker = write_checkpoints(backbone, root / "checkpoints")
    tables = TablesDemo.load(ottqa, sqa, str(dtr), str(tracker), None, FakeLLM(), cache_dir=None)
    encoder = load_encoder(backbone)
    logs = {"tiny log": (write_log(root / "log.jsonl"), "jsonl", None)}
    memory = MemoryDemo(encoder, logs)
    trends = TrendsDemo(encoder, logs, root / "trends")
    return Services(tables, memory, trends, str(root / "live") if live else None, "tiny log")
