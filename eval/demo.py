"""`make demo`: the main job end to end on the default data and the packaged models.

Each stage runs as the command a user would type (printed before it runs) and writes
under ``runs/demo/``. A stage whose outputs exist is skipped, so an interrupted demo
resumes where it stopped; ``--force`` reruns everything.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import time
from pathlib import Path

from eval.retrieval import print_results

RUNS = Path("runs/demo")


def stage(name: str, cmd: list[str], done: Path, force: bool) -> None:
    print(f"\n=== {name}\n$ {shlex.join(cmd)}", flush=True)
    if done.exists() and not force:
        print(f"(skipped: {done} exists; pass --force to rerun)")
        return
    started = time.perf_counter()
    subprocess.run(cmd, check=True)
    print(f"({name}: {time.perf_counter() - started:.0f} s)", flush=True)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--force", action="store_true", help="rerun stages whose outputs exist")
    p.add_argument("--data-dir", default=str(Path(__file__).resolve().parents[2] / "shared" / "data"))
    a = p.parse_args(argv)
    py = sys.executable
    accelerate = [py, "-m", "accelerate.commands.launch", "--cpu", "--num_processes", "1", "--num_machines", "1",
                  "--mixed_precision", "no", "--dynamo_backend", "no"]
    data = ["--data_dir", a.data_dir]
    ottqa = Path(a.data_dir) / "ottqa"
    dtr = RUNS / "dtr"
    stage("train the Dense Table Retriever",
          accelerate + ["train/dtr.py", "--config", "configs/dtr.yaml", "--output_dir", str(dtr), *data],
          dtr / "all_results.json", a.force)
    stage("evaluate table retrieval (BM25, untuned encoder, DTR)",
          [py, "-m", "eval.retrieval", "--checkpoint", str(dtr), "--tables", str(ottqa / "tables.jsonl"),
           "--questions", str(ottqa / "questions_dev.json"), "--split", "test",
           "--output", str(RUNS / "eval_retrieval.json")],
          RUNS / "eval_retrieval.json", a.force)
    print_results(json.loads((RUNS / "eval_retrieval.json").read_text()))
    results = json.loads((dtr / "all_results.json").read_text())
    print(f"\nDTR training: {results['steps']} steps in {results['train_runtime_s']} s; "
          f"outputs under {RUNS}/")


if __name__ == "__main__":
    main()
