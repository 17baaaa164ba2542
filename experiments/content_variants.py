"""Content-ranking variants on the LoCoMo proxy: which lists are fused, and what query they get.

    python -m experiments.content_variants --output runs/content_variants.json        # packaged MiniLM, about 2 min

Each variant changes one thing of the memory's content ranking (dense and BM25 over the utterance and over the turn
it follows, the planner's content query) and is scored exactly as :mod:`experiments.content_proxy` scores a fusion: on
LoCoMo's questions of categories 1, 3 and 4 within their evidence days, the margin the tightest whose recall on
the development conversations' single-evidence questions reaches 90%, judged by development F2 there, the held-out
conversations reporting it. Variants (:data:`VARIANTS`):

- ``ranking``: the memory's four lists (what ``experiments.content_proxy`` measures);
- ``maxp``: the dense utterance list scored by the best of its sentences' cosines (MaxP: a topic named in one
  sentence of a long turn is not diluted by the rest); ``maxp-or-text``: the better of that and the whole
  utterance's; ``maxp-added``: the MaxP list as a fifth list beside the four;
- ``bm25-unstemmed``, ``bm25-k1-0.9-b-0.4``: BM25 without stemming, or with a lower k1 and length normalisation;
- ``content-words``: both rankers queried with the question's content words only (the planner's ``left``), not
  the asking sentence less its time and names; ``bm25-content-words``: BM25 only; ``dense-names-in``: the dense
  lists queried with the participants' names left in (BM25 as before).

And other cuts of the ``ranking`` variant (``--other-cuts``, :data:`CUT_VARIANTS`): the pool cut's rows and at least
the top 2 or 3 (``pool-or-top-n``), and the fused ranking's top rows kept by the dense lists' own fusion
(``dense-pool``). Sentences are embedded once and cached like the utterances (``--cache-dir``).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from experiments.content_proxy import (
    Keep,
    ProxyArguments,
    ProxyQuestion,
    conversations,
    report_head,
    run_report,
    score_candidate,
)
from models.dual_encoder import load_encoder
from retrieval.config import option, parse_config
from retrieval.data.jsonio import DataError
from retrieval.data.locomo_qa import evidence_days
from retrieval.memory.content_ranking import FUSION_DEPTH, PRIOR_WEIGHTS, cut_content, fuse_content
from retrieval.memory.conversation_table import speaker_texts, turn_texts
from retrieval.memory.temporal_memory import TemporalMemory
from retrieval.memory.time_resolver import normalise
from retrieval.memory.when_clause import sentences
from retrieval.search.bm25 import BM25Retriever
from retrieval.search.embedding_cache import cached_document_embeddings

logger = logging.getLogger("experiments.content_variants")
BASE = ("dense:text", "dense:turn", "bm25:text", "bm25:turn")
# variant -> the lists fused, each "ranker:view", with "@words" when it is queried with the question's content words
# or "@named" with its asking sentence names included (else the planner's content query)
VARIANTS = {
    "ranking": BASE,
    "maxp": ("dense:maxp", *BASE[1:]),
    "maxp-or-text": ("dense:maxp-or-text", *BASE[1:]),
    "maxp-added": (*BASE, "dense:maxp"),
    "bm25-unstemmed": (*BASE[:2], "bm25-unstemmed:text", "bm25-unstemmed:turn"),
    "bm25-k1-0.9-b-0.4": (*BASE[:2], "bm25-k1-0.9-b-0.4:text", "bm25-k1-0.9-b-0.4:turn"),
    "content-words": tuple(f"{lst}@words" for lst in BASE),
    "bm25-content-words": (*BASE[:2], "bm25:text@words", "bm25:turn@words"),
    "dense-names-in": ("dense:text@named", "dense:turn@named", *BASE[2:]),
}
CUT_VARIANTS = ("pool-or-top-2", "pool-or-top-3", "dense-pool")  # other cuts, of the "ranking" variant's fusion
BM25_SETTINGS = {"bm25": {}, "bm25-unstemmed": {"stem": False}, "bm25-k1-0.9-b-0.4": {"k1": 0.9, "b": 0.4}}


class VariantLists:
    """One conversation's rankers for the variants: its table's dense views, its sentences' embeddings, BM25s."""

    def __init__(self, memory: TemporalMemory, encoder, cache_dir: str | None):
        table = self.table = memory.table
        self.memory, self.ids = memory, table.frame.index.tolist()
        self.pos = {r: p for p, r in enumerate(self.ids)}
        texts = table.frame["text"].tolist()
        parts = [sentences(t) or [t] for t in texts]
        self.owner = np.repeat(np.arange(len(texts)), [len(p) for p in parts])  # (S,) the row of each sentence
        self.sentence_emb = cached_document_embeddings(encoder, [s for p in parts for s in p], cache_dir)  # (S, D)
        views = {"text": speaker_texts(table.frame), "turn": turn_texts(table.frame)}
        self.bm25 = {f"{name}:{view}": BM25Retriever(views[view], self.ids, **kw)
                     for name, kw in BM25_SETTINGS.items() for view in views}

    def maxp(self, emb: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Each row's best sentence cosine with ``emb`` (D,): (len(rows),)."""
        best = np.full(len(self.ids), -np.inf)
        np.maximum.at(best, self.owner, self.sentence_emb @ emb)
        return best[rows]

    def lists(self, names: set[str], queries: dict[str, str], pool: list[int]) -> dict[str, list]:
        """Every named list (``"ranker:view"``, ``@words`` for the content-words query) over ``pool``."""
        rows = np.array([self.pos[r] for r in pool])
        out = {}
        for name in names:
            key, _, which = name.partition("@")
            query = queries[which or "asked"]
            ranker, view = key.split(":")
            if ranker in BM25_SETTINGS:
                out[name] = self.bm25[key].search([query], FUSION_DEPTH, subset=pool)[0]
            elif view in ("text", "turn"):
                out[name] = self.table.rank(query, FUSION_DEPTH, pool, view)
            else:
                emb = self.table.encode_query(query)[0]
                scores = self.maxp(emb, rows)
                if view == "maxp-or-text":
                    whole = dict(self.table.rank(query, len(pool), pool, "text"))
                    scores = np.maximum(scores, [whole[i] for i in pool])
                order = np.argsort(-scores, kind="stable")[:FUSION_DEPTH]
                out[name] = [(pool[j], float(scores[j])) for j in order]
        return out


def other_cut(name: str, k: int, prior: float) -> Keep:
    """A cut of :data:`CUT_VARIANTS` over the "ranking" variant's fused list (its first two lists the dense ones):
    ``pool-or-top-n``, the pool cut's rows and at least the top n; ``dense-pool``, the fused top ``k`` kept by the
    dense lists' own fusion (with half the prior: two lists of four) within the margin of its pool spread."""
    if name.startswith("pool-or-top-"):
        n = int(name.rsplit("-", 1)[1])

        def keep(q: ProxyQuestion, fused: list, margin: float | None) -> list:
            kept = cut_content(fused, margin, "pool", "scores", k)
            return kept + [x for x in fused[:n] if x not in kept]
        return keep

    def keep_dense(q: ProxyQuestion, fused: list, margin: float | None) -> list:
        head = fused[:k]
        dense = dict(fuse_content(q.rankings[:2], "scores", None, q.prefer, prior / 2))
        if margin is None or not dense:
            return head
        low = min(dense.values())
        best = max(dense.get(i, low) for i, _ in head)
        return [(i, s) for i, s in head if dense.get(i, low) >= best - margin * (best - low) - 1e-12]
    return keep_dense


def collect(variants: VariantLists, sid: str, questions, names: Sequence[str]) -> dict[str, list[ProxyQuestion]]:
    """Each variant's :class:`ProxyQuestion` for every question (its lists within its evidence days)."""
    memory, frame = variants.memory, variants.table.frame
    needed = {lst for n in names for lst in VARIANTS[n]}
    out: dict[str, list[ProxyQuestion]] = {n: [] for n in names}
    for q in questions:
        plan = memory.planner.plan(q.question, memory.resolve_now(None), memory.speakers)
        op = next((o for o in plan.ops if o["op"] == "rank"), {"query": normalise(q.question)})
        named = next((o["query"] for o in memory.planner.plan(q.question, memory.resolve_now(None)).ops
                      if o["op"] == "rank"), op["query"])  # read with no participants: their names stay
        queries = {"asked": op["query"], "words": " ".join(plan.reading.get("left", [])) or op["query"],
                   "named": named}
        pool = evidence_days(frame, q.evidence)
        prefer = [i for i in pool if "prefer" in op and frame.at[i, "speaker"] == op["prefer"]["value"]]
        lists = variants.lists(needed, queries, pool)
        for n in names:
            out[n].append(ProxyQuestion(sid, q.category, frozenset(q.evidence), [lists[k] for k in VARIANTS[n]],
                                        prefer))
    return out


def evaluate(data: str, encoder, dev_samples: Sequence[str], names: Sequence[str], categories: Sequence[int], k: int,
             target: float, cache_dir: str | None, cuts: Sequence[str], other_cuts: Sequence[str] = ()) -> dict:
    """Collect every variant's lists once per conversation, then score each variant with each cut (the fusion
    ``scores`` with its default speaker prior, as the memory ranks); the "ranking" variant also with each of
    ``other_cuts`` (:data:`CUT_VARIANTS`)."""
    parts = {n: {"development": [], "held_out": []} for n in names}
    for sid, part, memory, questions in conversations(data, encoder, dev_samples, categories, cache_dir):
        found = collect(VariantLists(memory, encoder, cache_dir), sid, questions, names)
        for n in names:
            parts[n][part] += found[n]
    if not parts[names[0]]["development"]:
        raise DataError(f"{data}: no questions of categories {list(categories)} with evidence in {list(dev_samples)}")
    results = [{"variant": n, **score_candidate("scores", None, cut, parts[n], k, target)}
               for n in names for cut in cuts]
    if "ranking" in names:
        prior = PRIOR_WEIGHTS["scores"]
        results += [{"variant": "ranking", **score_candidate("scores", None, c, parts["ranking"], k, target,
                                                              other_cut(c, k, prior))} for c in other_cuts]
    return report_head(data, encoder, dev_samples, categories, k, target) | {"candidates": results}


@dataclass
class ContentVariantsArguments(ProxyArguments):
    """Content-ranking variants (lists fused, their query) on LoCoMo's evidence questions within their days."""

    variants: list[str] = option(list(VARIANTS), "variants to compare", choices=tuple(VARIANTS))
    other_cuts: list[str] = option(list(CUT_VARIANTS), "other cuts of the ranking variant: pool-or-top-2 / 3 (the "
        "pool cut's rows and at least the top 2 / 3), dense-pool (kept by the dense lists' fusion alone)",
        choices=CUT_VARIANTS)


def print_report(report: dict) -> None:
    print(f"variant (scores fusion, default prior; margin: the tightest whose development recall reaches "
          f"{100 * report['target_recall']:.0f}%): development | held-out top-1 / 3, R / F2 at it, rows")
    for res in report["candidates"]:
        line = f"{res['variant']:<20}{res['cut']:>14} margin {res['margin']!s:<5}"
        for part in ("development", "held_out"):
            rk, at = res[part]["ranking_single"], res[part]["at_margin_single"]
            kept = f"{at['recall']:.1f} / {at['f2']:.1f} {at['rows']:.2f}" if at else "never reached"
            line += f" | {rk['top1']:.1f} / {rk['top3']:.1f}, {kept}"
        print(line)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_config(ContentVariantsArguments, argv, prog="python -m experiments.content_variants",
                        description=__doc__)
    return run_report(args, lambda: evaluate(
        args.locomo, load_encoder(args.encoder), args.dev_samples, args.variants, args.categories, args.content_k,
        args.target_recall, args.cache_dir or None, args.cuts, args.other_cuts), print_report)


if __name__ == "__main__":
    sys.exit(main())
