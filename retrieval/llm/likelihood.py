"""How likely a causal LM finds each of several answers to one chat: the scores span choice ranks by.

    from retrieval.llm.likelihood import answer_log_probs
    scores = answer_log_probs(backend, messages, ["Madrid", "Real Madrid", "1902"])
    scores[0].total, scores[0].tokens     # log P(answer, then the end of the turn | messages), token count

The chat is rendered with the backend's chat template up to where the assistant's answer starts; each
answer is scored as that continuation *followed by the end-of-turn token*, so the score is the model's
probability that its answer is exactly this text, not that it starts with it (a bare prefix of a
longer name is not favoured for being short). The prompt is run once and its key/value cache shared by
every answer: the answers are packed side by side into one sequence after it (a mask keeps them apart), in
passes of at most ``batch_tokens`` tokens, so scoring fifty short answers costs about one more prompt.

Any :class:`~retrieval.llm.local.TransformersBackend` (SmolLM2 included) can score; a backend without a
local model (a server) raises :class:`LikelihoodUnsupported`, which callers turn into a documented
fallback.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from retrieval.llm.base import Chat, LLMBackend
from retrieval.llm.cache import CachedBackend
from retrieval.llm.local import TransformersBackend


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


def _end_token_id(backend: TransformersBackend) -> int:
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


def _local(backend: LLMBackend) -> TransformersBackend:
    """The local model behind ``backend`` (a cache in front of it is looked through), or an error saying why not."""
    while isinstance(backend, CachedBackend):
        backend = backend.backend
    if not isinstance(backend, TransformersBackend):
        raise LikelihoodUnsupported(
            f"{type(backend).__name__} cannot score answers: span choice by likelihood needs a local "
            "transformers model (--llm smollm2 or transformers:PATH)")
    return backend


def answer_log_probs(backend: LLMBackend, messages: Chat, answers: Sequence[str], *,
                     batch_tokens: int = 256) -> list[AnswerScore]:
    """``log P(answer + end-of-turn | messages)`` for each answer, in the order given (see the module docstring).

    An empty answer is scored as the end token alone. Raises :class:`LikelihoodUnsupported` for a backend
    without a local model.
    """
    import torch

    local = _local(backend)
    if not answers:
        return []
    lm, tokenizer = local.lm, local.tokenizer
    end = _end_token_id(local)
    prompt = tokenizer(local.render(messages), return_tensors="pt", add_special_tokens=False)["input_ids"]
    prompt = prompt.to(lm.device)
    encoded = [tokenizer.encode(a, add_special_tokens=False) + [end] for a in answers]
    with torch.inference_mode():
        out = lm(input_ids=prompt, use_cache=True)
        first = torch.log_softmax(out.logits[0, -1].float(), dim=-1)  # (V,) every answer's first token
        cache, scores = out.past_key_values, []
        for part in _packs(encoded, batch_tokens):
            scores += _score_pack(lm, cache, prompt.shape[1], first, part)
    return [AnswerScore(a, s, len(e)) for a, s, e in zip(answers, scores, encoded, strict=True)]


def _packs(encoded: list[list[int]], budget: int) -> list[list[list[int]]]:
    """Answers grouped so that each group's packed inputs (all tokens but each answer's last) fit ``budget``."""
    packs: list[list[list[int]]] = []
    current: list[list[int]] = []
    size = 0
    for tokens in encoded:
        n = len(tokens) - 1
        if current and size + n > budget:
            packs.append(current)
            current, size = [], 0
        current.append(tokens)
        size += n
    return [*packs, current] if current else packs


def _score_pack(lm, cache, prompt_len: int, first, part: list[list[int]]) -> list[float]:
    """Log-probs of several answers after the cached prompt in one forward pass of batch 1.

    The answers' inputs are packed side by side after the prompt; a 4-D mask lets each token see the prompt
    and the earlier tokens of its own answer only, and positions restart after the prompt for each answer,
    so every answer is scored exactly as if it followed the prompt alone. The cache is cut back to the prompt.
    """
    import torch

    totals = [first[tokens[0]].item() for tokens in part]
    inputs = [t for tokens in part for t in tokens[:-1]]
    if not inputs:
        return totals
    device = first.device
    owner = torch.tensor([i for i, tokens in enumerate(part) for _ in tokens[:-1]], device=device)  # (L,)
    offset = torch.tensor([j for tokens in part for j in range(len(tokens) - 1)], device=device)  # (L,)
    length = len(inputs)
    same = owner[:, None] == owner[None, :]
    causal = torch.arange(length, device=device)[:, None] >= torch.arange(length, device=device)[None, :]
    allowed = torch.cat([torch.ones(length, prompt_len, dtype=torch.bool, device=device), same & causal], dim=1)
    dtype = lm.dtype if lm.dtype.is_floating_point else torch.float32
    mask = torch.zeros(allowed.shape, dtype=dtype, device=device).masked_fill(~allowed, torch.finfo(dtype).min)
    logits = lm(input_ids=torch.tensor([inputs], device=device), attention_mask=mask[None, None],
                position_ids=(prompt_len + offset)[None], cache=cache, use_cache=True).logits[0].float()  # (L, V)
    cache.crop(-length)  # back to the prompt alone
    targets = torch.tensor([t for tokens in part for t in tokens[1:]], device=device)  # (L,)
    logp = torch.log_softmax(logits, dim=-1).gather(-1, targets[:, None])[:, 0]  # (L,)
    sums = torch.zeros(len(part), device=device).index_add_(0, owner, logp)
    return [t + s for t, s in zip(totals, sums.tolist(), strict=True)]
