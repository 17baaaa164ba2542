"""An answer written by an LLM from the rows a temporal question selected (the last step of the pipeline).

One prompt, shared by the chat command (``retrieval.memory.live``) and the LLM-calls benchmark
(``benchmarks.temporal_calls``): the selected rows with their dates and speakers, then the question.
"""

from __future__ import annotations

import pandas as pd

ANSWER_PROMPT = """Here are parts of our earlier conversations:
{rows}

Answer the question from them, in one or two sentences.
Question: {question}"""


def answer_messages(question: str, rows: pd.DataFrame, max_rows: int = 10, max_chars: int = 200) -> list[dict]:
    """The chat messages asking an LLM to answer ``question`` from the first ``max_rows`` of ``rows``."""
    lines = [f"[{r['date']} {r['time']}] {r['speaker']}: {r['text'][:max_chars]}"
             for _, r in rows.head(max_rows).iterrows()]
    prompt = ANSWER_PROMPT.format(rows="\n".join(lines) or "(nothing found)", question=question)
    return [{"role": "user", "content": prompt}]
