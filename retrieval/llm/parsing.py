"""Structured output from free text: the first JSON object or array in an LLM's answer."""

from __future__ import annotations

import json
import re
from typing import Any

_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.DOTALL)
_DECODER = json.JSONDecoder()


class LLMOutputError(ValueError):
    """An LLM answer that does not hold what was asked for; ``text`` is the answer itself."""

    def __init__(self, message: str, text: str):
        super().__init__(f"{message}; the LLM answered: {text[:500]!r}" + (" [...]" if len(text) > 500 else ""))
        self.text = text


def parse_json(text: str, expect: type | tuple[type, ...] = (dict, list)) -> Any:
    """The first JSON object or array in ``text``, looking inside code fences first.

    Tolerates prose around it (``Here is the plan: {...} Hope this helps``) and ```` ```json ```` fences.
    ``expect`` restricts the top-level type (``dict`` or ``list``). Raises :class:`LLMOutputError`,
    quoting the text, when nothing valid is found.
    """
    if not isinstance(text, str):
        raise LLMOutputError(f"expected the LLM's text, got {type(text).__name__}", repr(text))
    for region in [*_FENCE.findall(text), text]:
        for match in re.finditer(r"[{\[]", region):
            try:
                value, _ = _DECODER.raw_decode(region, match.start())
            except json.JSONDecodeError:
                continue
            if isinstance(value, expect):
                return value
    names = " or ".join(t.__name__ for t in (expect if isinstance(expect, tuple) else (expect,)))
    raise LLMOutputError(f"no valid JSON {names} found", text)
