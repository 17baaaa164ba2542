"""Time-expression resolvers on outside test suites: strict, lenient, coverage and precision per file, category and
grain, for ours and for other libraries, in one run.

    python -m eval.timex --output runs/timex/before.json          # the three files under ../shared/data/timex
    ctbls eval timex --systems ours_event dateparser --data my_cases.jsonl --show-failures 5 --failures-of ours_event

Cases: JSON lines with ``id, text, sentence, reference, expected_start, expected_end, grain, category`` (and
``alternatives``: every accepted ``[start, end)``), the format and scoring of ``../shared/data/timex/SOURCE.md``;
scoring in :mod:`eval.timex_scoring`, the systems and how each one's answer becomes an interval in
:mod:`eval.timex_systems`. A system whose package is missing is skipped with a note; an exception inside a system
counts as declining that case (``errors``). The report holds the command, the data files with their sha256, the
metrics, the named-end clause's hits, every strict failure per category, the peers' versions and wall times.
"""

from __future__ import annotations

import hashlib
import shlex
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from tqdm.auto import tqdm

from eval.plots import Panel, grouped_bars, write_chart
from eval.report import print_table
from eval.results import Headline, file_digest, write_results
from eval.timex_scoring import CaseScore, Interval, TimexCase, score_prediction, summarise
from eval.timex_systems import SYSTEMS, Unavailable
from retrieval.atomic import write_json
from retrieval.config import option, parse_config, write_config
from retrieval.data.jsonio import INPUT_ERRORS, DataError, iter_jsonl, run_cli
from retrieval.data.paths import DATA_DIR

TIMEX_DIR = DATA_DIR / "timex"
DEFAULT_FILES = [str(TIMEX_DIR / f) for f in ("recognizers.jsonl", "recognizers_ambiguous.jsonl", "timebank.jsonl")]
REQUIRED = ("id", "text", "reference", "expected_start", "expected_end", "grain", "category")
CHART_MIN_CASES = 20  # a category gets its own group of bars from this many cases
SLOW_CASE_SECONDS = 1.0


def _time(text: object, field: str) -> datetime:
    if not isinstance(text, str):
        raise ValueError(f"field {field!r}: expected an ISO 8601 string, got {text!r}")
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"field {field!r}: not an ISO 8601 time: {text!r}") from None
    if moment.tzinfo is None:
        raise ValueError(f"field {field!r}: {text!r} has no UTC offset")
    return moment


def _case(obj: dict, file: str) -> TimexCase:
    missing = [k for k in REQUIRED if k not in obj]
    if missing:
        raise ValueError(f"missing field{'s' if len(missing) > 1 else ''} {', '.join(map(repr, missing))}")
    expected = ((_time(obj["expected_start"], "expected_start"), _time(obj["expected_end"], "expected_end")),)
    alternatives = obj.get("alternatives")
    if alternatives is not None:
        if not (isinstance(alternatives, list) and alternatives
                and all(isinstance(p, list) and len(p) == 2 for p in alternatives)):
            raise ValueError("field 'alternatives': expected a list of [start, end] pairs")
        expected = tuple((_time(s, "alternatives"), _time(e, "alternatives")) for s, e in alternatives)
    return TimexCase(str(obj["id"]), str(obj["text"]), obj.get("sentence"), _time(obj["reference"], "reference"),
                     expected, str(obj["grain"]), str(obj["category"]), file)


def read_cases(path: str | Path) -> list[TimexCase]:
    """The cases of one JSONL file; a DataError naming the file (and line) when it is missing, empty or has a
    malformed case."""
    cases = []
    for lineno, obj in iter_jsonl(path):
        try:
            cases.append(_case(obj, Path(path).stem))
        except (ValueError, TypeError) as e:
            raise DataError(f"{path}:{lineno}: {e}") from None
    if not cases:
        raise DataError(f"{path}: no cases")
    return cases


def read_files(paths: Sequence[str]) -> dict[str, list[TimexCase]]:
    """{file name: its cases}, in the order given; a DataError for two files of one name or a repeated case id."""
    files: dict[str, list[TimexCase]] = {}
    for path in paths:
        name = Path(path).stem
        if name in files:
            raise DataError(f"{path}: a second file named {name!r} (the report keys files by name)")
        files[name] = read_cases(path)
    seen: set[str] = set()
    for case in (c for cases in files.values() for c in cases):
        if case.id in seen:
            raise DataError(f"case id {case.id!r} appears twice")
        seen.add(case.id)
    return files


HALVES = ("all", "dev", "test")


def half_of(case: TimexCase, doc: str | None) -> str:
    """The half a case falls in: its document's (TimeBank's ``doc``; else its id's) SHA-1 even is "dev", odd
    "test". The conventions were chosen on recognizers.jsonl; later choices read the dev halves of the other files
    only, so the test halves stay evidence."""
    key = doc or case.id
    return "dev" if int(hashlib.sha1(key.encode()).hexdigest(), 16) % 2 == 0 else "test"


def keep_half(files: dict[str, list[TimexCase]], paths: Sequence[str], half: str) -> dict[str, list[TimexCase]]:
    """The cases of ``files`` in ``half`` ("all": every one), read for their documents from ``paths``."""
    if half == "all":
        return files
    docs = {}
    for path in paths:
        for _, obj in iter_jsonl(path):
            docs[str(obj.get("id"))] = obj.get("doc")
    return {f"{name}.{half}": [c for c in cases if half_of(c, docs.get(c.id)) == half]
            for name, cases in files.items()}




# ---- running the systems -------------------------------------------------------------------------------------
def _checked(predicted: object) -> Interval | None:
    """An adapter's answer, or a TypeError saying why it is not an interval of two tz-aware datetimes."""
    if predicted is None:
        return None
    if not (isinstance(predicted, tuple) and len(predicted) == 2 and all(
            isinstance(t, datetime) and t.tzinfo is not None for t in predicted)):
        raise TypeError(f"not a (start, end) pair of tz-aware datetimes: {predicted!r}")
    return predicted


def run_system(name: str, cases: Sequence[TimexCase]) -> tuple[list[Interval | None], dict]:
    """One system's prediction for every case (None: declined or failed), and how the run went: build and run
    seconds, errors (with the first few messages), cases slower than a second; raises Unavailable."""
    system = SYSTEMS[name]
    began = time.perf_counter()
    adapter = system.build()
    built = time.perf_counter()
    predictions, errors, slow = [], [], 0
    for case in tqdm(cases, desc=name, unit="case"):
        tick = time.perf_counter()
        try:
            predictions.append(_checked(adapter(case)))
        except Exception as e:  # a system failing on one phrase declines it; the run goes on
            predictions.append(None)
            errors.append(f"{case.id}: {type(e).__name__}: {e}")
        slow += time.perf_counter() - tick >= SLOW_CASE_SECONDS
    info = {"version": _version(system.package), "setup_seconds": round(built - began, 2),
            "seconds": round(time.perf_counter() - built, 2), "errors": len(errors), "error_examples": errors[:10],
            "slow_cases": slow}
    return predictions, info


def _version(package: str | None) -> str | None:
    if package is None:
        return None
    try:
        return version(package)
    except PackageNotFoundError:
        return None


# ---- the report ----------------------------------------------------------------------------------------------
def _iso(interval: Interval | None) -> list[str] | None:
    return None if interval is None else [t.isoformat() for t in interval]


def _breakdown(cases: Sequence[TimexCase], scores: Sequence[CaseScore]) -> dict:
    by_category, by_grain = defaultdict(list), defaultdict(list)
    for case, score in zip(cases, scores, strict=True):
        by_category[case.category].append(score)
        by_grain[case.grain].append(score)
    return {"overall": summarise(scores), "by_category": {k: summarise(v) for k, v in sorted(by_category.items())},
            "by_grain": {k: summarise(v) for k, v in sorted(by_grain.items())}}


def score_systems(files: dict[str, list[TimexCase]], predictions: dict[str, list[Interval | None]]) -> dict:
    """Metrics per file (and over ``all`` files) per system, each overall, by category and by grain; the strict
    failures per system per category; the named-end clause's hits per system per file."""
    cases = [c for group in files.values() for c in group]
    results: dict = {name: {} for name in [*files, "all"]}
    failures: dict = {}
    for system, predicted in predictions.items():
        scores = [score_prediction(p, c.expected, c.grain, c.named_end) for c, p in zip(cases, predicted, strict=True)]
        start = 0
        for name, group in files.items():
            results[name][system] = _breakdown(group, scores[start:start + len(group)])
            start += len(group)
        results["all"][system] = _breakdown(cases, scores)
        failures[system] = defaultdict(list)
        for case, p, score in zip(cases, predicted, scores):
            if not score.strict:
                failures[system][case.category].append(
                    {"id": case.id, "text": case.text, "reference": case.reference.isoformat(),
                     "expected": [_iso(x) for x in case.expected], "predicted": _iso(p)})
    named_end = {s: {f: results[f][s]["overall"]["named_end_hits"] for f in results} for s in predictions}
    return {"results": results, "named_end_hits": named_end, "failures": failures}


SUMMARY = ("strict", "lenient", "coverage", "precision", "n", "named_end_hits")


def print_report(report: dict) -> None:
    """The summary table per file and over all, then strict by category and by grain per file."""
    data = {d["name"]: d for d in report["data"]}
    for name, rows in report["results"].items():
        extra = f", {data[name]['no_such_day']} with no such day" if name in data else ""
        n = next(iter(rows.values()))["overall"]["n"]
        print_table({s: r["overall"] for s, r in rows.items()}, SUMMARY, f"{name}: {n} cases{extra} (%)")
    for name in data:
        for part in ("by_category", "by_grain"):
            rows = report["results"][name]
            groups = next(iter(rows.values()))[part]
            columns = {f"{g} ({v['n']})": g for g, v in groups.items()}
            print_table({s: {c: r[part][g]["strict"] for c, g in columns.items()} for s, r in rows.items()},
                        list(columns), f"{name}: strict % {part.replace('_', ' ')}")


def show_failures(report: dict, system: str, n: int) -> None:
    for category, cases in sorted(report["failures"][system].items()):
        print(f"\n{system}: failures in {category!r} ({len(cases)}), the first {min(n, len(cases))}")
        for f in cases[:n]:
            print(f"  {f['id']}  {f['text']!r}  ref {f['reference'][:19]}  expected {f['expected'][0]}"
                  f"{' (or another)' if len(f['expected']) > 1 else ''}  predicted {f['predicted']}")


def timex_chart(report: dict, path: str | Path) -> Path:
    """Strict (%) per system: one panel per file, a group per category of at least 20 cases, and overall."""
    panels = []
    for d in report["data"]:
        rows = report["results"][d["name"]]
        first = next(iter(rows.values()))
        groups = {f"{c} ({v['n']})": {s: r["by_category"][c]["strict"] for s, r in rows.items()}
                  for c, v in first["by_category"].items() if v["n"] >= CHART_MIN_CASES}
        groups[f"overall ({first['overall']['n']})"] = {s: r["overall"]["strict"] for s, r in rows.items()}
        panels.append(Panel(f"{d['name']}, by category (cases)", groups, "strict (%)", 100.0))
    return grouped_bars(path, panels, "Time expressions: strict accuracy (%) per system")


# ---- the command ---------------------------------------------------------------------------------------------
@dataclass
class TimexEvalArguments:
    """Time-expression resolvers on the timex test suites: strict, lenient, coverage, precision."""

    data: list[str] = option(DEFAULT_FILES, "JSONL files of cases (default: the three under ../shared/data/timex)",
                             metavar="FILE")
    systems: list[str] | None = option(None, f"systems to run, of {', '.join(SYSTEMS)} (default: every one "
                                       "available)", choices=list(SYSTEMS), metavar="SYSTEM")
    show_failures: int = option(0, "print this many strict failures per category of --failures-of", metavar="N")
    failures_of: str | None = option(None, "the system whose failures --show-failures prints (default: the first "
                                     "run)", choices=list(SYSTEMS), metavar="SYSTEM")
    half: str = option("all", "score the dev or the test half of each file (by document, see half_of) or all of it",
                       choices=HALVES)
    output: str | None = option(None, "write the results as JSON here (NAME.png and NAME.config.yaml beside it)")
    results: str | None = option(None, "a results file for README's table (results/NAME.json: eval.results)")

    def __post_init__(self):
        if self.show_failures < 0:
            raise ValueError(f"--show-failures must be 0 or more, got {self.show_failures}")


def evaluate(files: dict[str, list[TimexCase]], systems: Sequence[str]) -> dict:
    """Run ``systems`` on every case of ``files`` and score them: the report (without the command line)."""
    cases = [c for group in files.values() for c in group]
    predictions, runs, unavailable = {}, {}, {}
    for name in systems:
        try:
            predictions[name], runs[name] = run_system(name, cases)
        except Unavailable as e:
            unavailable[name] = str(e)
            print(f"note: {name} skipped: {e}", flush=True)
    if not predictions:
        raise DataError(f"no system could run ({'; '.join(f'{k}: {v}' for k, v in unavailable.items())})")
    return {"systems": runs, "unavailable": unavailable, **score_systems(files, predictions)}


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parse_config(TimexEvalArguments, argv, prog="python -m eval.timex", description=__doc__)
    try:
        files = keep_half(read_files(args.data), args.data, args.half)
        report = evaluate(files, args.systems or list(SYSTEMS))
    except INPUT_ERRORS as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    shown = args.failures_of or next(iter(report["systems"]))
    if args.show_failures and shown not in report["systems"]:
        print(f"error: --failures-of {shown}: that system did not run", file=sys.stderr)
        return 2
    report = {"command": shlex.join(["python", "-m", "eval.timex", *argv]), "half": args.half,
              "data": [{"name": name, "path": str(path), "sha256": file_digest(Path(path))["sha256"],
                        "cases": len(cases), "no_such_day": sum(c.no_such_day for c in cases)}
                       for (name, cases), path in zip(files.items(), args.data)], **report}
    print_report(report)
    for name, run in report["systems"].items():
        print(f"{name}: {run['seconds']} s ({run['setup_seconds']} s to build), {run['errors']} errors, "
              f"{run['slow_cases']} cases over {SLOW_CASE_SECONDS:g} s, version {run['version'] or '(this repo)'}")
    if args.show_failures:
        show_failures(report, shown, args.show_failures)
    if args.output:
        write_json(args.output, report, indent=2)
        write_config(args)
        write_chart(timex_chart, report, args.output)
    write_results(args.results, "python -m eval.timex", argv, args, lambda: headline(report), args.data)
    return 0


# what each test suite is, for README's table
SUITES = {"recognizers": "Recognizers-Text's English date-time tests",
          "recognizers_ambiguous": "Recognizers-Text's ambiguous cases", "timebank": "TempEval-3's TimeBank"}
PEERS = {"dateparser": "dateparser", "recognizers": "Recognizers-Text"}


def headline(report: dict) -> list[Headline]:
    """README's rows: our resolver's strict score per test suite, beside the peers run on the same cases."""
    out = []
    for name, rows in report["results"].items():
        if "ours" not in rows or name not in SUITES:
            continue
        task = f"Time expressions: {SUITES[name]} ({rows['ours']['overall']['n']:,} cases, {report['half']})"
        out.append(Headline(task, "strict (%)", rows["ours"]["overall"]["strict"],
                            {label: rows[s]["overall"]["strict"] for s, label in PEERS.items() if s in rows},
                            "none on these cases: the peers run here are the reference", 1, 1))
    return out


if __name__ == "__main__":
    sys.exit(run_cli(main))
