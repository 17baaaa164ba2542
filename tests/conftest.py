"""Shared fixtures: tiny encoders built in code, small tables, the data folder when present."""

from __future__ import annotations

import os
from pathlib import Path

# The suite's models are tiny: one thread each is faster, and a second busy process on the machine no longer makes
# OpenMP's spinning threads slow a tiny training step tenfold (measured: 28 s against 2.8 s). Subprocesses inherit it.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import pytest  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))

from retrieval.data.paths import DATA_DIR  # noqa: E402  (after the environment is set)


def tiny_backbone_folder(path: Path, seed: int = 0) -> Path:
    """Write a 2-layer, 32-wide BERT with the packaged MiniLM tokenizer to ``path``."""
    from transformers import AutoTokenizer, BertConfig, BertModel

    from models.packaged import default_encoder_path

    torch.manual_seed(seed)
    tokenizer = AutoTokenizer.from_pretrained(default_encoder_path())
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64, max_position_embeddings=256)
    BertModel(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="session")
def tiny_backbone(tmp_path_factory) -> str:
    return str(tiny_backbone_folder(tmp_path_factory.mktemp("tiny_bert")))


def chat_memory(folder: Path, backbone: str, chat: list[tuple[str, str, str]]):
    """A file-based memory over ``chat`` ((ISO timestamp, speaker, text) turns), written as JSONL in ``folder``,
    with the tiny encoder of ``backbone``."""
    import json

    from models.dual_encoder import DualEncoder
    from retrieval.memory.temporal_memory import TemporalMemory

    path = folder / "chat.jsonl"
    path.write_text("".join(json.dumps({"timestamp": t, "speaker": s, "text": x}) + "\n" for t, s, x in chat))
    return TemporalMemory.from_file(path, encoder=DualEncoder.from_backbone(backbone), cache_dir=None)


@pytest.fixture(scope="session")
def data_dir() -> Path:
    if not (DATA_DIR / "ottqa").is_dir():
        pytest.skip("../shared/data is not present")
    return DATA_DIR


# ---- a real PostgreSQL 16 with pgvector (the pgserver wheel), started once per session in a temporary folder ----

@pytest.fixture(scope="session")
def postgres(tmp_path_factory):
    """The running server (``pgserver``'s handle: ``get_uri()``, ``pgdata``)."""
    import pgserver

    server = pgserver.get_server(tmp_path_factory.mktemp("pgdata"), cleanup_mode="stop")
    yield server
    server.cleanup()


@pytest.fixture
def postgres_url(postgres, request):
    """A fresh database on the session's server for one test (dropped after it)."""
    name = "t_" + "".join(c if c.isalnum() else "_" for c in request.node.name.lower())[:50]
    import psycopg

    admin = postgres.get_uri()
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {name}")
    yield admin.replace("/postgres?", f"/{name}?", 1)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
