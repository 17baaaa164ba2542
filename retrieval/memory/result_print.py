"""A question's result on the terminal, as ``ask`` prints it (``ctbls memory ask``)."""

from __future__ import annotations

import json


def print_result(result, as_json: bool) -> None:
    """A :class:`~retrieval.memory.temporal_result.TemporalResult` on the terminal: as JSON, or the question, what
    could not be read, the plan, the when-answer, the counts and the rows."""
    if as_json:
        print(json.dumps(result.to_dict(), indent=2, default=str))
        return
    print(f"question: {result.question}")
    for warning in result.warnings:  # before anything else: what was not read, what was not found
        print(f"warning: {warning}")
    if result.rewrite:
        print(f"rewrite ({result.rewrite.method}): {'; '.join(result.rewrite.notes)}")
    if result.plan.reading:
        print("read as: " + "; ".join(f"{k} {v}" for k, v in result.plan.reading.items()))
    print("plan:")
    for op in result.plan.ops:
        print(f"  {json.dumps(op, default=str)}")
    for note in result.plan.notes + result.execution.trace:
        print(f"  # {note}")
    if result.answer is not None:
        a = result.answer
        print(f"answer: {a.answer}  [{a.start and a.start.isoformat()}, {a.end and a.end.isoformat()}) "
              f"{a.granularity or ''} from {a.provenance}")
        for line in a.derivation:
            print(f"  # {line}")
    for name, counts in result.execution.counts.items():
        print(f"counts by {name}: {counts}")
    print(f"{len(result.rows)} rows:")
    for i, r in result.rows.iterrows():
        score = f" ({result.execution.scores[i]:.3f})" if i in result.execution.scores else ""
        print(f"  [{i}] s{r['session']} {r['weekday'][:3]} {r['date']} {r['time']} {r['speaker']}: "
              f"{r['text'][:100]}{score}")
