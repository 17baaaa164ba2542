"""What a living memory records about itself when it is made, and the check that it is reopened with its own encoder
(either engine: the folder's ``meta`` table, or the database's ``ctbls_memories.meta``)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from models.dual_encoder import DualEncoder
from retrieval.memory.store import FORMAT, MemoryStore
from retrieval.search.dense_index import EncoderMismatchError
from retrieval.search.index_record import autocast_name, document_side


def memory_settings(encoder: DualEncoder, encoder_spec: str | None, tz: str | None, session_gap: timedelta,
                    turns: bool) -> dict:
    """What a new memory records about itself (either engine): its format, its encoder (identity, how it was
    loaded, its precision and document side, its size), its zone, its session gap and its views."""
    return {"format": FORMAT, "encoder_id": encoder.identity, "encoder_spec": encoder_spec,
            "autocast": autocast_name(encoder), "documents": document_side(encoder), "dim": encoder.dim,
            "tz": tz, "session_gap_s": session_gap.total_seconds(), "views": ["text", "turn"] if turns else ["text"]}


def check_encoder(store: MemoryStore, encoder: DualEncoder, path: Path | str) -> None:
    """Refuse an encoder other than the memory's: another identity, precision or way of writing documents."""
    stored = {"autocast": store.get_meta("autocast"), "encoder_id": store.get_meta("encoder_id"),
              "documents": store.get_meta("documents")}  # precision first: it also changes a bf16 encoder's id
    given = {"autocast": autocast_name(encoder), "encoder_id": encoder.identity, "documents": document_side(encoder)}
    for key, value in stored.items():
        if value != given[key]:
            raise EncoderMismatchError(f"{path}: this memory was encoded with {key} {value!r}, not {given[key]!r}; "
                                       "open it with its own encoder, or import its log into a new memory")
