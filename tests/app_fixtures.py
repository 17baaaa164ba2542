"""The page's services over tiny models and tiny data (tables, SQA, a log), for the app's tests."""

from __future__ import annotations

import json
from pathlib import Path

from ctbls_fixtures import FakeLLM, write_checkpoints, write_tiny_ottqa
from sqa_fixtures import sqa_folder

# A log over three days of May 2023 (UTC); the memory's tests ask about these days by name.
LOG = [("Ann", "I adopted a beagle called Rex", "2023-05-01T10:00:00+00:00"),
       ("Bob", "Rex is a lovely name for a beagle", "2023-05-01T10:01:00+00:00"),
       ("Ann", "My guitar lesson was cancelled today", "2023-05-02T18:00:00+00:00"),
       ("Bob", "Shame, guitar lessons are fun", "2023-05-02T18:02:00+00:00"),
       ("Ann", "We booked a trip to Lisbon for June", "2023-05-09T09:00:00+00:00"),
       ("Bob", "Lisbon in June will be warm", "2023-05-09T09:05:00+00:00"),
       ("Ann", "I practised the guitar for an hour", "2023-05-10T19:00:00+00:00"),
       ("Bob", "My knee hurts after the run", "2023-05-10T19:03:00+00:00"),
       ("Ann", "Rex chewed my guitar strap", "2023-05-12T08:00:00+00:00"),
       ("Bob", "Beagles chew everything", "2023-05-12T08:01:00+00:00"),
       ("Ann", "Work was busy all week", "2023-05-15T17:30:00+00:00"),
       ("Bob", "Mine too, lots of meetings", "2023-05-15T17:31:00+00:00")]


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
