"""Regression cases from the timex suites (``../shared/data/timex``, SOURCE.md): the first case of each category of
each file, resolved by :func:`retrieval.timex.resolve_phrase` in its sentence and scored strictly the way
``eval.timex`` scores it (:func:`eval.timex_scoring.score_prediction`: the clock-point rule, the ambiguous file's
alternatives, Recognizers' named-end clause). Known misses are ``xfail(strict=True)`` with what comes back, so a
fix shows as an unexpected pass."""

from __future__ import annotations

import pytest

from eval.timex import TimexCase, read_cases
from eval.timex_scoring import score_prediction
from retrieval.data.paths import DATA_DIR
from retrieval.timex import resolve_phrase

TIMEX_DIR = DATA_DIR / "timex"
FILES = ("recognizers", "recognizers_ambiguous", "timebank")

# case id -> why it fails today (the resolver's answer against the expected one)
KNOWN_MISSES: dict[str, str] = {}

if not all((TIMEX_DIR / f"{name}.jsonl").is_file() for name in FILES):
    pytest.skip(f"the timex suites are not present under {TIMEX_DIR}", allow_module_level=True)


def first_of_each_category() -> list:
    params = []
    for name in FILES:
        firsts: dict[str, TimexCase] = {}
        for case in read_cases(TIMEX_DIR / f"{name}.jsonl"):
            firsts.setdefault(case.category, case)
        for case in firsts.values():
            marks = [pytest.mark.xfail(strict=True, reason=KNOWN_MISSES[case.id])] if case.id in KNOWN_MISSES else []
            params.append(pytest.param(case, id=f"{case.id} {case.category}", marks=marks))
    return params


def describe(interval) -> str:
    return "declined" if interval is None else f"{interval[0].isoformat()}..{interval[1].isoformat()}"


@pytest.mark.parametrize("case", first_of_each_category())
def test_first_case_of_each_category_resolves_strictly(case: TimexCase):
    found = resolve_phrase(case.text, case.reference, sentence=case.sentence)
    predicted = None if found is None else found.interval
    score = score_prediction(predicted, case.expected, case.grain, case.named_end)
    assert score.strict, (f"{case.text!r} in {case.sentence!r} at {case.reference.isoformat()}: got "
                          f"{describe(predicted)}, expected {' or '.join(describe(x) for x in case.expected)}")
