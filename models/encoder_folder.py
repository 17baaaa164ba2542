"""What a model must be to serve as an encoder, checked before it is loaded, with errors naming the path.

Hugging Face's ``AutoModel`` loads nearly anything: a causal LM's folder gives its base model, whose
last hidden states pooled rank documents like noise, and an empty, missing or damaged folder ends in
a library traceback that does not name the folder. So a backbone or tower folder is checked first:

- it holds ``config.json``, weights (``model.safetensors`` or ``pytorch_model.bin``, or their sharded
  index) and tokenizer files (``tokenizer.json``, ``vocab.txt``, ``vocab.json`` or a sentencepiece model);
- its config is an encoder-only model's (BERT, RoBERTa, MiniLM, MPNet, DistilBERT, DeBERTa, ...): not
  ``is_decoder``, not ``is_encoder_decoder`` (T5, BART), no ``*ForCausalLM`` / ``*LMHeadModel``
  architecture, and not a model type that only exists as a causal LM (GPT-2, Llama, Qwen, ...);
- weights that fail to load (a truncated ``model.safetensors``) are reported with the file's path.

Every failure is an :class:`EncoderLoadError`, a ``ValueError`` the commands print as one line.
"""

from __future__ import annotations

import json
from pathlib import Path

WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin", "model.safetensors.index.json",
                "pytorch_model.bin.index.json")
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "vocab.json", "spiece.model", "sentencepiece.bpe.model",
                   "tokenizer.model")
CAUSAL_ARCHITECTURES = ("ForCausalLM", "LMHeadModel")  # GPT2LMHeadModel, LlamaForCausalLM, ...


class EncoderLoadError(ValueError):
    """A model given as an encoder is missing, incomplete, damaged or not an encoder; the message names it."""


def first_line(error: BaseException) -> str:
    """The first line of a library's error message (the rest is advice about the hub), for a one-line error."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _causal_only_model_types() -> set[str]:
    """Model types transformers knows only as causal LMs (an encoder such as BERT also has a causal LM head,
    but is a masked LM too)."""
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_MASKED_LM_MAPPING_NAMES,
    )

    return set(MODEL_FOR_CAUSAL_LM_MAPPING_NAMES) - set(MODEL_FOR_MASKED_LM_MAPPING_NAMES)


def check_encoder_config(config: dict, where: str) -> None:
    """An EncoderLoadError naming ``where`` unless ``config`` (a ``config.json``'s contents) is an
    encoder-only model's."""
    model_type = config.get("model_type")
    causal = [a for a in config.get("architectures") or [] if a.endswith(CAUSAL_ARCHITECTURES)]
    if config.get("is_decoder") or causal or model_type in _causal_only_model_types():
        what = causal[0] if causal else f"model type {model_type!r}"
        raise EncoderLoadError(f"{where}: a causal language model ({what}), not an encoder; give an encoder-only "
                               "model such as BERT, RoBERTa, MiniLM or MPNet (e.g. packaged:minilm)")
    if config.get("is_encoder_decoder"):
        raise EncoderLoadError(f"{where}: an encoder-decoder model (model type {model_type!r}), not an encoder; "
                               "give an encoder-only model such as BERT, RoBERTa, MiniLM or MPNet")


def check_encoder_folder(path: str | Path) -> None:
    """An EncoderLoadError naming ``path`` and what it lacks unless it is a folder an encoder loads from."""
    path = Path(path)
    if not path.exists():
        raise EncoderLoadError(f"{path}: no such folder")
    if not path.is_dir():
        raise EncoderLoadError(f"{path}: a file, not a model folder")
    names = {p.name for p in path.iterdir()}
    if not names:
        raise EncoderLoadError(f"{path}: an empty folder, not an encoder (it needs config.json, model.safetensors "
                               "or pytorch_model.bin, and tokenizer files)")
    missing = [what for what, files in (("config.json", ("config.json",)),
                                        ("weights (model.safetensors or pytorch_model.bin)", WEIGHT_FILES),
                                        ("tokenizer files (tokenizer.json, vocab.txt or vocab.json)", TOKENIZER_FILES))
               if not names & set(files)]
    if missing:
        raise EncoderLoadError(f"{path}: not a complete encoder folder: no {' and no '.join(missing)}")
    try:
        config = json.loads((path / "config.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise EncoderLoadError(f"{path / 'config.json'}: unreadable ({first_line(e)})") from e
    if not isinstance(config, dict):
        raise EncoderLoadError(f"{path / 'config.json'}: expected a JSON object")
    check_encoder_config(config, str(path))


def weights_file(path: str | Path) -> Path:
    """The weights file an encoder folder loads (the first of :data:`WEIGHT_FILES` present), to name in errors."""
    return next((Path(path, n) for n in WEIGHT_FILES if Path(path, n).is_file()), Path(path))
