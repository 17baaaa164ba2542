"""Training examples as a ``datasets.Dataset``, tokenised once, and the collate functions for dual-encoder training.

    examples = tokenized_examples(pairs, encoder, PAIR_FIELDS)      # map(batched=True), cached by content
    train(args, accelerator, encoder, examples, TokenizedPairCollator(encoder), compute_loss, ...)

Each script builds its examples as a list of dicts (train/dtr.py's and train/dialogue_retriever.py's pairs,
train/triplets.py's triplets). :func:`tokenized_examples` makes them a ``Dataset`` in the same order and tokenises
their text fields with ``Dataset.map(batched=True)``: each text as the encoder's ``tokenize`` does it (the side's
prefix, truncated at the side's limit) but not padded. The file ``map`` writes is named by a hash of the examples,
the tokenizer and the limits (:func:`cache_key`), in the project's cache folder (``--cache-dir``, default
``$CTBLS_CACHE_DIR`` or ``runs/cache``: ``tokenized/`` there), so a run with the same examples and tokenizer
reads it back instead of tokenising again, and any change makes a new one; ``--cache-dir ''`` tokenises in memory.
The tokenised collators then pad a batch as ``tokenize`` pads it (to the batch's longest text), so a batch is the
same tensors as the text collators (:class:`PairCollator`, ``train.triplets.TripletCollator``) give from the texts,
and training reads the same examples in the same order (the loop's seeded sampler sees the same length): the weights
come out bit for bit the same (tests/test_train_data.py).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import random
from collections.abc import Mapping
from pathlib import Path

import datasets
import numpy as np
import tokenizers
import torch
import transformers
from datasets import Dataset, Features, List, Value

from models.dual_encoder import SIDES, DualEncoder

# {text field of an example: the side whose tokenisation it takes}
PAIR_FIELDS = {"query": "query", "document": "document", "negatives": "document"}
TRIPLET_FIELDS = {"anchor": "query", "positive": "document", "negatives": "document"}
CACHE_FOLDER = "tokenized"  # under a script's --cache-dir
CACHE_VERSION = 1  # bump when the tokenised layout changes


class PairCollator:
    """Tokenises a batch of {"query", "document", "doc_id"} pairs for both towers.

    Pairs may carry hard negatives ({"negatives": [text], "negative_ids": [id]}); the
    documents are then the B positives first, then every pair's negatives, as the
    in-batch loss expects.
    """

    def __init__(self, encoder: DualEncoder):
        self.encoder = encoder

    def __call__(self, batch: list[dict]) -> dict:
        documents = [b["document"] for b in batch] + [n for b in batch for n in b.get("negatives", [])]
        doc_ids = [b["doc_id"] for b in batch] + [i for b in batch for i in b.get("negative_ids", [])]
        return {
            "query": self.encoder.tokenize([b["query"] for b in batch], "query"),
            "document": self.encoder.tokenize(documents, "document"),
            "doc_id": torch.tensor(doc_ids, dtype=torch.long),
        }


def cap(examples: list[dict], limit: int | None, seed: int) -> list[dict]:
    """A deterministic random subset of at most ``limit`` examples."""
    if limit is None or len(examples) <= limit:
        return examples
    return random.Random(seed).sample(examples, limit)


# ---- tokenised once, through datasets -------------------------------------------------------------------------
def _side(encoder: DualEncoder, side: str) -> tuple[str, int]:
    """(prefix, token limit) of one side, as ``DualEncoder.tokenize`` takes them."""
    if side not in SIDES:
        raise ValueError(f"side must be one of {SIDES}")
    config = encoder.config
    return ((config.query_prefix, config.max_query_length) if side == "query"
            else (config.document_prefix, config.max_document_length))


def token_keys(encoder: DualEncoder) -> list[str]:
    """What the tokenizer returns for a text (input_ids, token_type_ids, attention_mask, ...)."""
    return list(encoder.tokenizer(["x"], truncation=True, max_length=8).keys())


def _tokenizer_state(tokenizer) -> object:
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None:  # a fast tokenizer: its whole definition, less the truncation/padding of the last call
        state = json.loads(backend.to_str())
        state.pop("truncation", None)
        state.pop("padding", None)
        return state
    return sorted(tokenizer.get_vocab().items())


def cache_key(examples: list[dict], encoder: DualEncoder, fields: Mapping[str, str]) -> str:
    """A hash of everything the tokenised examples depend on: the examples, the tokenizer, prefixes and limits."""
    tokenizer = encoder.tokenizer
    digest = hashlib.sha256()
    for part in ([CACHE_VERSION, transformers.__version__, tokenizers.__version__, datasets.__version__,
                  type(tokenizer).__name__, tokenizer.padding_side, tokenizer.truncation_side,
                  str(tokenizer.special_tokens_map), {f: [side, *_side(encoder, side)] for f, side in fields.items()}],
                 _tokenizer_state(tokenizer)):
        digest.update(json.dumps(part, sort_keys=True, default=str).encode())
    for example in examples:
        digest.update(json.dumps(example, sort_keys=True, default=str).encode())
    return digest.hexdigest()[:32]


def _tokenize(encoder: DualEncoder, fields: Mapping[str, str], lists: set[str], keys: list[str]):
    """The map function: each text field's tokens, as ``tokenize`` makes them, without padding."""

    def tokenize(batch: dict) -> dict:
        out = {}
        for name, side in fields.items():
            prefix, limit = _side(encoder, side)
            values = batch[name]
            texts = [t for v in values for t in v] if name in lists else values
            encoded = encoder.tokenizer([prefix + t for t in texts], truncation=True, max_length=limit)
            for key in keys:
                column = encoded[key]
                if name in lists:  # back into one list per example
                    ends = list(itertools.accumulate(len(v) for v in values))
                    column = [column[end - len(v):end] for v, end in zip(values, ends)]
                out[f"{name}_{key}"] = column
        return out

    return tokenize


def tokenized_cache(cache_dir: str | Path | None) -> Path | None:
    """Where a script with ``--cache-dir DIR`` keeps its tokenised examples: ``DIR/tokenized`` (None for no cache)."""
    return Path(cache_dir, CACHE_FOLDER) if cache_dir else None


def tokenized_examples(examples: list[dict], encoder: DualEncoder, fields: Mapping[str, str],
                       cache_dir: str | Path | None = None) -> Dataset:
    """``examples`` as a ``Dataset`` (same order) whose text ``fields`` ({field: side}; a field may hold a list of
    texts) are replaced by their tokens, ``<field>_<key>`` for each tokenizer output (``query_input_ids``, ...).

    The other fields stay as they are. The map's file is ``cache_dir/<cache_key>.arrow``, read back when it is
    there; without ``cache_dir`` the examples are tokenised in memory.
    """
    present = {f: side for f, side in fields.items() if examples and f in examples[0]}
    dataset = Dataset.from_list(examples)
    keys = token_keys(encoder)
    lists = {name for name in present if isinstance(dataset.features[name], List)}
    kept = {name: feature for name, feature in dataset.features.items() if name not in present}
    tokens = {f"{name}_{key}": List(List(Value("int32"))) if name in lists else List(Value("int32"))
              for name in present for key in keys}
    key = cache_key(examples, encoder, present)
    cache_file = None
    if cache_dir is not None:
        Path(cache_dir).mkdir(parents=True, exist_ok=True)
        cache_file = str(Path(cache_dir, f"{key}.arrow"))
    return dataset.map(_tokenize(encoder, present, lists, keys), batched=True, remove_columns=list(present),
                       features=Features({**kept, **tokens}), cache_file_name=cache_file, new_fingerprint=key,
                       desc="tokenizing")


class _TokenizedCollator:
    """Pads tokenised texts of a batch into the tensors ``DualEncoder.tokenize`` would give for the texts."""

    def __init__(self, encoder: DualEncoder):
        self.encoder = encoder
        self.keys = token_keys(encoder)

    def one(self, batch: list[dict], name: str) -> list[dict]:
        """The tokenised text of field ``name`` of every example."""
        return [{k: b[f"{name}_{k}"] for k in self.keys} for b in batch]

    def each(self, batch: list[dict], name: str) -> list[dict]:
        """The tokenised texts of list field ``name`` of every example, example by example (none if absent)."""
        column = f"{name}_{self.keys[0]}"
        return [{k: b[f"{name}_{k}"][j] for k in self.keys}
                for b in batch if column in b for j in range(len(b[column]))]

    def pad(self, texts: list[dict]) -> dict[str, torch.Tensor]:
        return self.encoder.tokenizer.pad(texts, padding=True, return_tensors="pt")


class TokenizedPairCollator(_TokenizedCollator):
    """:class:`PairCollator` for pairs made by :func:`tokenized_examples` with :data:`PAIR_FIELDS`."""

    def __call__(self, batch: list[dict]) -> dict:
        doc_ids = [b["doc_id"] for b in batch] + [i for b in batch for i in b.get("negative_ids", [])]
        return {
            "query": self.pad(self.one(batch, "query")),
            "document": self.pad(self.one(batch, "document") + self.each(batch, "negatives")),
            "doc_id": torch.tensor(doc_ids, dtype=torch.long),
        }


class TokenizedTripletCollator(_TokenizedCollator):
    """``train.triplets.TripletCollator`` for triplets made by :func:`tokenized_examples` with
    :data:`TRIPLET_FIELDS`: anchors (query side), positives and the flattened (B*K) negatives (document side)."""

    def __call__(self, batch: list[dict]) -> dict:
        return {
            "anchor": self.pad(self.one(batch, "anchor")),
            "positive": self.pad(self.one(batch, "positive")),
            "negatives": self.pad(self.each(batch, "negatives")),
            "pos_id": torch.tensor([b["pos_id"] for b in batch], dtype=torch.long),
            "neg_ids": torch.tensor(np.array([b["neg_ids"] for b in batch]), dtype=torch.long),  # (B, K)
        }
