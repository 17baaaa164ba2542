"""A local causal LM through transformers: any model folder, hub name, or GGUF file.

Prompts go through the tokenizer's own chat template; batches are left-padded and decoded greedily
(``temperature=0``), so the same input gives the same answer. Weights are loaded once per process
and shared by every backend made on the same folder.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Sequence
from pathlib import Path

from retrieval.atomic import staging_folder
from retrieval.llm.base import AttemptError, Chat, Completion, GenerationParams, RetryingBackend


@functools.lru_cache(maxsize=4)
def load_causal_lm(model: str, gguf_file: str | None = None, device: str | None = None, dtype: str | None = None):
    """``(model, tokenizer)`` for a folder or hub name, optionally a GGUF file inside it; cached per process.

    A GGUF file is dequantised to ``dtype`` (float32 by default) on load, which takes a while: see
    :func:`convert_gguf` for converting once and reloading the plain copy.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    kwargs = {"gguf_file": gguf_file} if gguf_file else {}
    tokenizer = AutoTokenizer.from_pretrained(model, **kwargs)
    torch_dtype = getattr(torch, dtype) if dtype else (torch.float32 if gguf_file else "auto")
    lm = AutoModelForCausalLM.from_pretrained(model, dtype=torch_dtype, **kwargs)
    lm.to(device or ("cuda" if torch.cuda.is_available() else "cpu")).eval()
    tokenizer.padding_side = "left"  # generation continues from the right end of every row
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return lm, tokenizer


def convert_gguf(gguf_path: str | Path, target: str | Path) -> Path:
    """Dequantise a GGUF model once and save it to ``target`` as a plain safetensors folder (with its
    tokenizer and chat template), which then loads in about a second instead of tens of seconds."""
    gguf_path, target = Path(gguf_path), Path(target)
    lm, tokenizer = load_causal_lm(str(gguf_path.parent), gguf_path.name, "cpu", "float32")
    # The GGUF quantizer stays attached after dequantising; save_pretrained refuses until it is gone.
    lm.hf_quantizer = None
    if hasattr(lm.config, "quantization_config"):
        del lm.config.quantization_config
    target.parent.mkdir(parents=True, exist_ok=True)
    # Write beside the target and rename, so an interrupted or concurrent conversion never leaves a
    # half-written folder that later runs would take for a finished one.
    with staging_folder(target.parent, target.name) as staging:
        lm.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        try:
            staging.rename(target)
        except OSError:  # another process finished first
            if not (target / "model.safetensors").is_file():
                raise
    load_causal_lm.cache_clear()  # drop the dequantised copy; the saved folder is what gets loaded next
    return target


class TransformersBackend(RetryingBackend):
    """Generation with a local ``AutoModelForCausalLM``, in batches of ``batch_size``.

    ``model`` is a folder, a hub name (where the hub is reachable) or a path to a ``.gguf`` file
    (then ``gguf_file`` is its name and the folder its parent). Retrying an empty greedy answer gives
    the same answer, so ``max_attempts`` defaults to 1 here.
    """

    name = "transformers"

    def __init__(
        self,
        model: str | Path,
        *,
        gguf_file: str | None = None,
        device: str | None = None,
        dtype: str | None = None,
        batch_size: int = 8,
        max_attempts: int = 1,
        identity: str | None = None,
    ):
        super().__init__(max_attempts=max_attempts, backoff_s=0.0)
        model = str(model)
        if gguf_file is None and model.endswith(".gguf"):
            model, gguf_file = str(Path(model).parent), Path(model).name
        if Path(model).exists():  # a folder names the same model from any working directory
            model = str(Path(model).resolve())
        if Path(model).exists() and gguf_file and not (Path(model) / gguf_file).is_file():
            raise FileNotFoundError(f"no GGUF file {gguf_file!r} in {model}")
        self.model_path = model
        self.gguf_file = gguf_file
        self.batch_size = batch_size
        self._identity = identity or f"transformers:{model}" + (f"/{gguf_file}" if gguf_file else "")
        self.lm, self.tokenizer = load_causal_lm(model, gguf_file, device, dtype)

    @property
    def identity(self) -> str:
        return self._identity

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._identity!r})"

    def count_tokens(self, text: str) -> int:
        return len(self.tokenizer.encode(text, add_special_tokens=False))

    def render(self, conversation: Chat) -> str:
        """The prompt text the model sees, ending where the assistant's answer starts."""
        if self.tokenizer.chat_template:
            return self.tokenizer.apply_chat_template(conversation, tokenize=False, add_generation_prompt=True)
        # A base model without a template: a plain transcript, which base models continue sensibly.
        lines = [f"{m['role'].capitalize()}: {m['content']}" for m in conversation]
        return "\n".join([*lines, "Assistant:"])

    def _attempt(
        self, conversations: Sequence[Chat], params: GenerationParams
    ) -> list[Completion | AttemptError]:
        prompts = [self.render(c) for c in conversations]
        # Similar lengths batched together waste less compute on padding.
        order = sorted(range(len(prompts)), key=lambda i: len(prompts[i]))
        answers: list[Completion | AttemptError | None] = [None] * len(prompts)
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            completions: list[Completion | AttemptError]
            try:
                completions = list(self._generate_batch([prompts[i] for i in chunk], params))
            except Exception as exc:  # e.g. out of memory: fail this chunk, keep the others
                completions = [AttemptError(f"{type(exc).__name__}: {exc}", retryable=False) for _ in chunk]
            for i, completion in zip(chunk, completions):
                answers[i] = completion
        return [a for a in answers if a is not None]  # every prompt is in one chunk

    def _generate_batch(self, prompts: list[str], params: GenerationParams) -> list[Completion]:
        import torch

        # The chat template already holds the special tokens; adding them again would double the BOS.
        encoded = self.tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
        # Only what every causal LM takes (a BERT-style tokenizer also returns token_type_ids).
        inputs = {k: encoded[k].to(self.lm.device) for k in ("input_ids", "attention_mask")}
        sampling = (
            {"do_sample": True, "temperature": params.temperature}
            if params.temperature > 0
            else {"do_sample": False, "temperature": None, "top_p": None, "top_k": None}
        )
        stop = {"stop_strings": list(params.stop), "tokenizer": self.tokenizer} if params.stop else {}
        start = time.perf_counter()
        with torch.inference_mode():
            output = self.lm.generate(
                **inputs,
                max_new_tokens=params.max_new_tokens,
                pad_token_id=self.tokenizer.pad_token_id,
                **sampling,
                **stop,
            )
        latency = (time.perf_counter() - start) / len(prompts)
        new_tokens = output[:, inputs["input_ids"].shape[1] :]
        ends = {self.tokenizer.pad_token_id, *_as_list(self.lm.generation_config.eos_token_id)}
        completions = []
        for row in new_tokens.tolist():
            n = next((j for j, t in enumerate(row) if t in ends), len(row))
            text = self.tokenizer.decode(row[:n], skip_special_tokens=True)
            completions.append(Completion(text=text, completion_tokens=n, latency_s=latency))
        return completions


def _as_list(value: int | list[int] | None) -> list[int]:
    if value is None:
        return []
    return list(value) if isinstance(value, list | tuple) else [value]
