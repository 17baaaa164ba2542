"""What a saved index was built from, so that loading it can tell whether it still fits.

A saved :class:`~retrieval.search.dense_index.DenseIndex` of tables or cells is only right for the
encoder (its weights' identity, and how it cuts and pools a document: the identity does not say), the
precision (fp32, or bf16 autocast), the text settings and the documents it was encoded from. Its record
(stored in ``index.json`` as ``built_from``) holds them all, the documents as one fingerprint per group
of ids (a table, or a table's cells: a SHA-1 of their ids and texts), and the files they were read from
(path, size, modification time: for the messages; the fingerprints decide). :func:`mismatch` compares
a record with what a run would build and names the first difference, or returns None.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from pathlib import Path

from models.dual_encoder import DualEncoder
from retrieval.data.jsonio import DataError


class IndexMismatchError(DataError):
    """A saved index does not fit this run (another encoder, precision, text settings or documents)."""


def fingerprint(ids: Iterable, texts: Iterable[str]) -> str:
    """A short SHA-1 of ``ids`` and their ``texts``, in order."""
    h = hashlib.sha1()
    for i, t in zip(ids, texts):
        h.update(repr(i).encode("utf-8"))
        h.update(b"\0")
        h.update(t.encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()[:16]


def file_record(path: str | Path | None) -> dict | None:
    """Where a source file was and how it looked: ``{"path", "size", "mtime_ns"}`` (None for no file)."""
    if path is None or str(path) == "":
        return None
    path = Path(path)
    if not path.is_file():
        return {"path": str(path.resolve())}
    stat = path.stat()
    return {"path": str(path.resolve()), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def make_record(kind: str, encoder: DualEncoder, settings: Mapping, fingerprints: Mapping[str, str],
                sources: Mapping[str, dict | None]) -> dict:
    """The ``built_from`` record of an index of ``kind`` ("tables" or "cells") encoded by ``encoder``."""
    return {"kind": kind, "encoder_id": encoder.identity, "autocast": autocast_name(encoder),
            "documents": document_side(encoder), "settings": dict(settings), "sources": dict(sources),
            "fingerprints": dict(fingerprints)}


def document_side(encoder: DualEncoder) -> dict:
    """How the encoder writes a document, beyond its weights (which its identity fingerprints)."""
    c = encoder.config
    return {"max_length": c.max_document_length, "prefix": c.document_prefix, "pooling": c.pooling,
            "normalize": c.normalize}


def autocast_name(encoder: DualEncoder) -> str | None:
    """The encoder's inference precision as recorded: None for fp32, the autocast type ("bfloat16"), or
    "bfloat16 weights" for towers cast to bf16 (``DualEncoder.set_precision("bf16")``)."""
    if encoder.weights_dtype is not None:
        return f"{str(encoder.weights_dtype).removeprefix('torch.')} weights"
    dtype = encoder.autocast_dtype
    return None if dtype is None else str(dtype).removeprefix("torch.")


def recorded_precision(autocast: str | None) -> str:
    """The ``DualEncoder.set_precision`` name of a recorded :func:`autocast_name`."""
    known = {None: "fp32", "bfloat16": "bf16-autocast", "bfloat16 weights": "bf16"}
    if autocast not in known:
        raise DataError(f"an unknown recorded precision {autocast!r}; known: {sorted(map(str, known))}")
    return known[autocast]


def precision_name(autocast: str | None) -> str:
    if autocast and autocast.endswith(" weights"):
        return autocast
    return f"{autocast} autocast (--bf16)" if autocast else "fp32 (no --bf16)"


def _source_text(record: Mapping) -> str:
    files = [s["path"] for s in record.get("sources", {}).values() if s]
    return f" from {', '.join(files)}" if files else ""


def mismatch(record: Mapping | None, kind: str, encoder: DualEncoder, settings: Mapping,
             fingerprints: Mapping[str, str], complete: bool) -> str | None:
    """Why an index with ``record`` does not fit a run that would build ``fingerprints`` (None: it fits).

    ``complete``: every group of the run must be in the index (a table index: a table missing from it
    could never be retrieved); otherwise the run may add the groups the index lacks (cells, table by table).
    Groups of the index that the run does not have are fine either way (searches are restricted to the run's).
    """
    if not record:
        return "it records nothing of what it was built from (saved by an older version)"
    if record.get("kind") != kind:
        return f"it is an index of {record.get('kind')}, not of {kind}"
    encoder_id, autocast = encoder.identity, autocast_name(encoder)
    if record.get("encoder_id") != encoder_id:
        return f"it was built with encoder {record.get('encoder_id')!r}, not {encoder_id!r}"
    if record.get("autocast") != autocast:
        return (f"it was encoded in {precision_name(record.get('autocast'))}, and this run encodes in "
                f"{precision_name(autocast)}")
    if record.get("documents") != document_side(encoder):
        return f"its documents were encoded as {record.get('documents')}, not {document_side(encoder)}"
    if dict(record.get("settings") or {}) != dict(settings):
        return f"it was built with text settings {record.get('settings')}, not {dict(settings)}"
    saved = record.get("fingerprints") or {}
    changed = [g for g, f in fingerprints.items() if g in saved and saved[g] != f]
    if changed:
        return (f"{len(changed):,} of its {kind} read differently now (first: {changed[0]!r}): they are not the "
                f"ones it was built{_source_text(record)}")
    missing = [g for g in fingerprints if g not in saved]
    if complete and missing:
        return (f"{len(missing):,} of these {len(fingerprints):,} tables are not in it (first: {missing[0]!r}); "
                f"it was built over {len(saved):,} tables{_source_text(record)}")
    return None
