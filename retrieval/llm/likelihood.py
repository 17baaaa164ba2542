"""How likely a causal LM finds each of several answers to one chat: the scores span choice ranks by.

    from retrieval.llm.likelihood import answer_log_probs
    scores = answer_log_probs(backend, messages, ["Madrid", "Real Madrid", "1902"])
    scores[0].total, scores[0].tokens     # log P(answer, then the end of the turn | messages), token count

The chat is rendered with the backend's chat template up to where the assistant's answer starts; each
answer is scored as that continuation *followed by the end-of-turn token*, so the score is the model's
probability that its answer is exactly this text, not that it starts with it (a bare prefix of a
longer name is not favoured for being short). The prompt is run once and its key/value cache shared by
every answer (answers go in batches of ``batch_size``), so scoring fifty short answers costs little more
than the prompt itself.

Any :class:`~retrieval.llm.local.TransformersBackend` (SmolLM2 included) can score; a backend without a
local model (a server) raises :class:`LikelihoodUnsupported`, which callers turn into a documented
fallback.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass

from retrieval.llm.base import Chat


class LikelihoodUnsupported(TypeError):
    """The backend has no local model to score continuations with (e.g. an OpenAI-compatible server)."""


@dataclass(frozen=True)
class AnswerScore:
    """One answer's log-probability under the model: ``total`` over its ``tokens`` (the end token included)."""

    text: str
    total: float
    tokens: int

    @property
    def mean(self) -> float:
        """Per-token log-probability: the length-normalised score."""
        return self.total / max(self.tokens, 1)


def _end_token_id(backend) -> int:
    """The token that closes an assistant turn: the chat template's end of turn, else the model's EOS."""
    tokenizer = backend.tokenizer
    for name in ("<|im_end|>", "<|eot_id|>", "<|end|>"):
        ids = tokenizer.convert_tokens_to_ids(name)
        if isinstance(ids, int) and ids != tokenizer.unk_token_id and ids is not None:
            return ids
    eos = backend.lm.generation_config.eos_token_id
    eos = eos[0] if isinstance(eos, list | tuple) else eos
    if eos is None:
        raise LikelihoodUnsupported(f"{backend!r}: no end-of-turn or EOS token to close an answer with")
    return int(eos)


def _require_local(backend) -> None:
    if not (hasattr(backend, "lm") and hasattr(backend, "tokenizer") and hasattr(backend, "render")):
        raise LikelihoodUnsupported(
            f"{type(backend).__name__} cannot score answers: span choice by likelihood needs a local "
            "transformers model (--llm smollm2 or transformers:PATH)")


def answer_log_probs(backend, messages: Chat, answers: Sequence[str], *, batch_size: int = 32) -> list[AnswerScore]:
    """``log P(answer + end-of-turn | messages)`` for each answer, in the order given (see the module docstring).

    An empty answer is scored as the end token alone. Raises :class:`LikelihoodUnsupported` for a backend
    without a local model.
    """
    import torch

    _require_local(backend)
    if not answers:
        return []
    lm, tokenizer = backend.lm, backend.tokenizer
    end = _end_token_id(backend)
    prompt = tokenizer(backend.render(messages), return_tensors="pt", add_special_tokens=False)["input_ids"]
    prompt = prompt.to(lm.device)
    encoded = [tokenizer.encode(a, add_special_tokens=False) + [end] for a in answers]
    with torch.inference_mode():
        out = lm(input_ids=prompt, use_cache=True)
        first = torch.log_softmax(out.logits[0, -1].float(), dim=-1)  # (V,) the answer's first token
        scores: list[float] = []
        for start in range(0, len(encoded), batch_size):
            part = encoded[start:start + batch_size]
            scores += _score_batch(lm, out.past_key_values, prompt.shape[1], first, part, tokenizer.pad_token_id)
    return [AnswerScore(a, s, len(e)) for a, s, e in zip(answers, scores, encoded, strict=True)]


def _score_batch(lm, past, prompt_len: int, first, part: list[list[int]], pad_id: int | None) -> list[float]:
    """Sum of log-probs of each token list after the cached prompt; right-padded, one forward pass."""
    import torch

    width = max(len(p) for p in part)
    pad = pad_id if pad_id is not None else 0
    ids = torch.tensor([p + [pad] * (width - len(p)) for p in part], device=first.device)  # (B, T)
    mask = torch.tensor([[1] * len(p) + [0] * (width - len(p)) for p in part], device=first.device)
    totals = first[ids[:, 0]].clone()  # (B,)
    if width > 1:
        cache = copy.deepcopy(past)
        cache.batch_repeat_interleave(len(part))
        inputs = ids[:, :-1]  # each token predicts the next; the last one predicts nothing we score
        attention = torch.cat([torch.ones(len(part), prompt_len, dtype=mask.dtype, device=mask.device),
                               mask[:, :-1]], dim=1)
        positions = torch.arange(prompt_len, prompt_len + width - 1, device=ids.device).expand(len(part), -1)
        logits = lm(input_ids=inputs, attention_mask=attention, position_ids=positions,
                    cache=cache, use_cache=True).logits.float()  # (B, T-1, V)
        logp = torch.log_softmax(logits, dim=-1).gather(-1, ids[:, 1:, None])[..., 0]  # (B, T-1)
        totals = totals + (logp * mask[:, 1:]).sum(dim=1)
    return totals.tolist()
