"""README's "Results at a glance", rendered from the results files under ``results/``.

    python -m eval.results_table                      # print the table
    python -m eval.results_table --write README.md    # put it between README's markers
    python -m eval.results_table --check README.md    # exit 1 when README's table differs from the files

Each results file is written by an evaluation given ``--results results/NAME.json`` (:mod:`eval.results`); its rows
appear in :data:`ORDER`, then the others by name. Nothing in the table is typed by hand.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from eval.results import REPO, read_rows
from retrieval import atomic
from retrieval.config import option, parse_config
from retrieval.data.jsonio import DataError, run_cli

# the results files in the table's order (their names without .json)
ORDER = ("dtr", "state_tracking", "timex", "temporal", "locomo_answers", "locomo_temporal", "trends", "user_trial",
         "user_trial_heldout")
BEGIN = "<!-- results: python -m eval.results_table --write README.md renders this table from results/*.json -->"
END = "<!-- end of results -->"
HEADER = ("| task | metric | ours | baselines, same run | published, for reference | from |\n"
          "|---|---|---|---|---|---|")


def results_files(folder: Path) -> list[Path]:
    files = {p.stem: p for p in folder.glob("*.json")}
    return [files[n] for n in ORDER if n in files] + [files[n] for n in sorted(files) if n not in ORDER]


def render(folder: Path) -> str:
    """The markdown table of every results file in ``folder``, between the markers."""
    if not folder.is_dir():
        raise DataError(f"{folder}: no such folder of results files")
    lines = [BEGIN, HEADER]
    for path in results_files(folder):
        try:
            rows = read_rows(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise DataError(f"{path}: not a results file ({type(e).__name__}: {e})") from e
        link = f"[{path.name}]({path.relative_to(folder.parent).as_posix()})" if folder.parent in path.parents \
            else path.name
        for r in rows:
            base = "; ".join(f"{name} {r.text(v)}" for name, v in r.baselines.items()) or "–"
            lines.append(f"| {r.task} | {r.metric} | **{r.text(r.ours)}** | {base} | {r.anchor or '–'} | {link} |")
    return "\n".join([*lines, END])


def current(readme: str, path: Path) -> str:
    """README's table as it stands, markers included; a DataError when the markers are missing."""
    found = re.search(re.escape(BEGIN) + r".*?" + re.escape(END), readme, flags=re.S)
    if not found:
        raise DataError(f"{path}: no results table (the line {BEGIN!r} ... {END!r})")
    return found.group(0)


@dataclass
class ResultsTableArguments:
    """Render README's results table from the results files."""

    results_dir: str = option(str(REPO / "results"), "the folder of results files")
    write: str | None = option(None, "a markdown file whose table (between the markers) is replaced")
    check: str | None = option(None, "a markdown file whose table must equal the rendered one (exit 1 if not)")


def main(argv: list[str] | None = None) -> int:
    a = parse_config(ResultsTableArguments, argv, prog="python -m eval.results_table", description=__doc__)
    table = render(Path(a.results_dir))
    target = a.write or a.check
    if target is None:
        print(table)
        return 0
    path = Path(target)
    text = path.read_text(encoding="utf-8")
    old = current(text, path)
    if a.check:
        if old != table:
            print(f"{path}: the results table differs from {a.results_dir}; run python -m eval.results_table "
                  f"--write {path}", file=sys.stderr)
            return 1
        print(f"{path}: the results table matches {a.results_dir}")
        return 0
    atomic.write_text(path, text.replace(old, table))
    print(f"wrote the results table into {path}")
    return 0


def cli() -> int:
    return run_cli(main)


if __name__ == "__main__":
    sys.exit(cli())
