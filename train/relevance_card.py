"""The model card of a relevance model folder (README.md, with the Hugging Face card's YAML front matter): what it
is, what it was trained on, its weights, its cut, how to load it, and where its honest figures come from."""

from __future__ import annotations

from pathlib import Path

import yaml

from retrieval.memory.relevance.choices import PACKAGED, PACKAGED_MODEL
from retrieval.memory.relevance.model import RelevanceModel, input_names

SHOWN_PRODUCTS = 20  # a degree-2 card lists the products of largest weight, not all of them


def model_card(model: RelevanceModel, folder: str) -> str:
    """The card of ``model`` saved in ``folder`` (the packaged folder is loaded as ``--relevance packaged``)."""
    t = model.training
    packaged = Path(folder).resolve() == PACKAGED_MODEL.resolve()
    name = PACKAGED if packaged else folder
    load = "PACKAGED_MODEL" if packaged else repr(str(folder))
    front = {"library_name": "ctbls", "language": "en",
             "tags": ["reranker", "conversational-memory", "logistic-regression"],
             "datasets": ["LoCoMo", "Zyphra/TemporalMemoryDataset"], "license": "cc-by-nc-4.0",
             "pipeline_tag": "text-ranking"}
    rows = list(zip(input_names(tuple(model.features), model.degree), model.mean, model.scale, model.coef))
    n = len(model.features)
    shown = rows[:n] + sorted(rows[n:], key=lambda r: -abs(r[3]))[:SHOWN_PRODUCTS]
    weights = "\n".join(f"| `{f}` | {m:.4g} | {s:.4g} | {w:+.3f} |" for f, m, s, w in shown)
    products = (f", then the {min(SHOWN_PRODUCTS, len(rows) - n)} products (of {len(rows) - n}) of largest weight; "
                "`relevance.json` holds them all" if model.degree == 2 else "")
    cut_text = ("the rows at or above **P = " + str(model.threshold) + "**" if model.cut == "threshold" else
                "the number of best rows that maximises the **expected F2** under its probabilities (Nan Ye et al., "
                "ICML 2012)")
    sources = "\n".join(f"| {s} | {n} |" for s, n in t.get("questions_by_source", {}).items())
    return f"""---
{yaml.safe_dump(front, sort_keys=False).strip()}
---

# The memory's relevance model

A logistic regression (over its features{" and every product of two of them" if model.degree == 2 else ""}) that
gives each candidate row of the temporal memory's first stage (dense and BM25 over the
utterance and the turn it follows, fused, with the speaker prior) the probability that it is evidence for the
question, re-ranks the candidates by it, and, when the plan asks for a cut, returns {cut_text} (at least the best
one).

```python
from retrieval.memory.relevance.model import RelevanceModel
from retrieval.memory.relevance.rerank import {"PACKAGED_MODEL, " if packaged else ""}Reranker

model = RelevanceModel.load({load})
second_stage = Reranker(model)   # TemporalMemory(..., relevance=second_stage, evidence_rule="top")
```

or `ctbls memory ask --log LOG --relevance {name} "..."`. The file is plain JSON (`relevance.json`): the
inputs' means and scales (the features, and at degree 2 their products), the weights, the intercept and the
cut; nothing is unpickled.

## Training

- Encoder of the first stage: `{t.get("encoder")}` (the features are its scores: use the model with the same one).
- Conversations: {", ".join(t.get("conversations", []))} ({t.get("questions")} questions, {t.get("candidate_rows")}
  candidate rows). LoCoMo's category 5 is left out: its questions name the other speaker on purpose.
- Form: degree {model.degree}, inverse L2 strength C = {t.get("c")}, the lowest log loss of the candidate rows
  on out-of-fold probabilities of {t.get("inner_folds")} leave-conversations-out folds over the training
  conversations: {t.get("inner_log_loss_by_form")}. The cut was chosen on the same out-of-fold probabilities (of that
  form), by the mean F2 of the {t.get("cut_questions")} questions whose plan cuts: {t.get("inner_f2_by_cut")} (the
  expected-F2 decision, and the best probability threshold, {model.threshold}).

| source | questions |
|---|---|
{sources}

## Inputs and weights (standardised)

The {n} features{products}.

| input | mean | scale | weight |
|---|---|---|---|
{weights}

## Figures

The figures for conversations a model never saw come from leave-conversations-out folds, each conversation scored by
the model of the fold that held it out (its cut chosen inside its own training folds):
`python -m eval.locomo_temporal --folds 5`, `python -m eval.locomo_answers --folds 5` and
`python -m eval.temporal --kinds time+content --folds 5`; docs/relevance.md gives them beside the hand-tuned ranking.

## Limits

- Trained on English chit-chat between two people (LoCoMo's conversations); other registers are untested.
- A first-stage row outside the best {model.candidates} candidates is never seen by the model.
"""
