"""`make demo`: the main job end to end on the default data and the packaged models.

Each stage runs as the command a user would type (printed before it runs) and writes
under ``runs/demo/``. A stage whose output exists is skipped, so an interrupted demo
resumes where it stopped; ``--force`` reruns everything.

Stages: train and evaluate the Dense Table Retriever; train and evaluate the cell state
tracker; answer a few OTT-QA turns with the offline LLM and score a small response grid; train the
tracker briefly on SQA's question sequences, fit its state re-ranker, evaluate both by position and answer
with the extractive selector;
evaluate temporal memory on Zyphra's questions (packaged and tuned content encoder) and
LoCoMo's temporal questions; one temporal-trend question with its plot.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from eval.retrieval import print_results
from retrieval.config import option, parse_config
from retrieval.ctbls.state_rerank import StateReranker
from retrieval.data.jsonio import DataError
from retrieval.data.paths import data_dir_option

RUNS = Path("runs/demo")


def stage(name: str, cmd: list[str], done: Path | None, force: bool) -> None:
    print(f"\n=== {name}\n$ {shlex.join(cmd)}", flush=True)
    if done is not None and done.exists() and not force:
        print(f"(skipped: {done} exists; pass --force to rerun)")
        return
    started = time.perf_counter()
    subprocess.run(cmd, check=True)
    print(f"({name}: {time.perf_counter() - started:.0f} s)", flush=True)


@dataclass
class DemoArguments:
    """The main job end to end on the default data and the packaged models."""

    force: bool = option(False, "rerun stages whose outputs exist")
    data_dir: str = data_dir_option("ottqa/, zyphra_temporal/, locomo/ and sqa/")
    llm: str = option("smollm2", "LLM for the answered turns and the response grid")


def main(argv: list[str] | None = None) -> None:
    a = parse_config(DemoArguments, argv, prog="python -m eval.demo", description=__doc__)
    py = sys.executable
    accelerate = [py, "-m", "accelerate.commands.launch", "--cpu", "--num_processes", "1", "--num_machines", "1",
                  "--mixed_precision", "no", "--dynamo_backend", "no"]
    data = Path(a.data_dir)
    ottqa = data / "ottqa"
    ottqa_files = ["--tables", str(ottqa / "tables.jsonl"), "--questions", str(ottqa / "questions_dev.json")]
    dtr, tracker = RUNS / "dtr", RUNS / "state_tracker"

    stage("train the Dense Table Retriever",
          accelerate + ["-m", "train.dtr", "--config", "configs/dtr.yaml", "--output-dir", str(dtr),
                        "--data-dir", str(data)], dtr / "all_results.json", a.force)
    stage("evaluate table retrieval: BM25, untuned encoder, DTR",
          [py, "-m", "eval.retrieval", "--dtr", str(dtr), *ottqa_files, "--split", "test", "--bf16",
           "--output", str(RUNS / "eval_retrieval.json")], RUNS / "eval_retrieval.json", a.force)
    stage("train the cell state tracker",
          accelerate + ["-m", "train.state_tracker", "--config", "configs/state_tracker.yaml", "--output-dir",
                        str(tracker), "--data-dir", str(data)], tracker / "all_results.json", a.force)
    stage("evaluate state tracking: BM25, untuned encoder, tracker; gold and DTR tables",
          [py, "-m", "eval.state_tracking", "--tracker", str(tracker), "--dtr", str(dtr), "--dtr-pool", "split",
           *ottqa_files,
           "--passages", str(ottqa / "passages_dev.jsonl"), "--split", "test",
           "--output", str(RUNS / "eval_state_tracking.json")], RUNS / "eval_state_tracking.json", a.force)
    stage("answer three turns of a test conversation (history, table, top cells, answer)",
          [py, "-m", "retrieval.ctbls.chat", "--dtr", str(dtr), "--tracker", str(tracker), "--llm", a.llm,
           *ottqa_files, "--passages", str(ottqa / "passages_dev.jsonl"), "--split", "test",
           "--show-turns", "3"], None, a.force)
    stage("score responses on 5 test conversations: no / top-1 / top-3 knowledge x BM25 / DTR / gold tables",
          [py, "-m", "eval.response", "--dtr", str(dtr), "--tracker", str(tracker), "--llm", a.llm,
           *ottqa_files, "--passages", str(ottqa / "passages_dev.jsonl"), "--split", "test",
           "--max-conversations", "5", "--output", str(RUNS / "eval_response_5conv.json")],
          RUNS / "eval_response_5conv.json", a.force)
    sqa_stages(py, accelerate, data, a.force)
    # One log keeps the demo short; the README's figures come from every log (drop --logs). The tuned content
    # encoder is trained on LoCoMo conversations other than log 26's (conv-26), so log 26 measures retrieval.
    temporal = [py, "-m", "eval.temporal", "--config", "configs/temporal.yaml", "--zyphra-dir",
                str(data / "zyphra_temporal"), "--logs", "26"]
    stage("evaluate temporal memory on log 26 (rule planner, packaged MiniLM) against semantic baselines",
          temporal + ["--output", str(RUNS / "eval_temporal.json")], RUNS / "eval_temporal.json", a.force)
    content = RUNS / "dialogue_retriever_no_conv26"
    stage("train the temporal memory's content encoder on LoCoMo conversations 44, 47, 48",
          accelerate + ["-m", "train.dialogue_retriever", "--config", "configs/dialogue_retriever.yaml",
                        "--train-samples", "conv-44,conv-47,conv-48", "--output-dir", str(content),
                        "--data-dir", str(data)], content / "all_results.json", a.force)
    stage("evaluate temporal memory on log 26 with the tuned content encoder",
          temporal + ["--encoder", str(content), "--output", str(RUNS / "eval_temporal_tuned.json")],
          RUNS / "eval_temporal_tuned.json", a.force)
    stage("LoCoMo temporal questions: time-aware against semantic-only retrieval, and the learned relevance model "
          "scored by 5 leave-conversations-out folds",
          [py, "-m", "eval.locomo_temporal", "--locomo", str(data / "locomo" / "locomo_open.json"),
           "--zyphra-dir", str(data / "zyphra_temporal"), "--folds", "5",
           "--output", str(RUNS / "eval_locomo_temporal.json")], RUNS / "eval_locomo_temporal.json", a.force)
    stage("a temporal-trend question, with its plot and report",
          [py, "-m", "retrieval.trends.analysis", "ask", "--docs",
           str(data / "zyphra_temporal" / "ConversationData" / "26.json"),
           "How often did we talk about painting, session by session?", "--llm", "none",
           "--output-dir", str(RUNS / "trends_painting")], RUNS / "trends_painting" / "report.md", a.force)

    print("\n=== summary")
    print_results(json.loads((RUNS / "eval_retrieval.json").read_text()))
    results = json.loads((dtr / "all_results.json").read_text())
    print(f"\nDTR training: {results['steps']} steps in {results['train_runtime_s']} s. Everything is under {RUNS}/: "
          "eval_*.json for the figures, each with its chart beside it; each model folder has a README.md card.")
    list_pictures(RUNS)


def _stale_reranker(path: Path) -> bool:
    """True when ``path`` holds a state re-ranker this code refuses (fitted on another feature list)."""
    if not path.is_file():
        return False
    try:
        StateReranker.load(path)
    except DataError:
        return True
    return False


def sqa_stages(py: str, accelerate: list[str], data: Path, force: bool) -> None:
    """SQA, briefly: train the tracker on 40 steps of its question sequences (with the history in the anchor), fit
    its state re-ranker, rank the validation tables' cells, and answer them with the extractive selector (over the
    tracker's ranking and over the re-ranked one), one sequence shown."""
    tracker = RUNS / "state_tracker_sqa"
    stage("train the cell state tracker on SQA's question sequences (briefly: 640 examples)",
          accelerate + ["-m", "train.state_tracker", "--config", "configs/state_tracker_sqa.yaml", "--output-dir",
                        str(tracker), "--data-dir", str(data), "--max-train-examples", "640", "--val-max-tables",
                        "10"], tracker / "all_results.json", force)
    # a re-ranker fitted by an earlier version on other features is refused when loaded: fit it, and what reads it, anew
    force = force or _stale_reranker(tracker / "state_rerank.json")
    stage("fit the tracker's state re-ranker on SQA (briefly: 20 train tables, chosen on 20 dev tables)",
          [py, "-m", "train.state_rerank", "--tracker", str(tracker), "--data-dir", str(data), "--train-tables", "20",
           "--dev-tables", "20"], tracker / "state_rerank.json", force)
    stage("SQA state tracking on the validation tables: BM25, untuned encoder, tracker, re-ranked; by position",
          [py, "-m", "eval.state_tracking", "--dataset", "sqa", "--tracker", str(tracker), "--data-dir", str(data),
           "--output", str(RUNS / "eval_state_tracking_sqa.json")], RUNS / "eval_state_tracking_sqa.json", force)
    stage("SQA answer accuracy with the extractive selector (rule chosen on dev), one sequence turn by turn",
          [py, "-m", "eval.answer_accuracy", "--tracker", str(tracker), "--data-dir", str(data), "--show-sequences",
           "1", "--output", str(RUNS / "eval_answers_sqa.json")], RUNS / "eval_answers_sqa.json", force)


def list_pictures(folder: Path) -> list[Path]:
    """Print the pictures under ``folder`` (training curves, evaluation charts, the trend plot), and return them."""
    pictures = sorted(p for p in folder.rglob("*.png")  # not a partial file, nor one in a staging folder
                      if not any(part.startswith(".") for part in p.relative_to(folder).parts))
    print(f"\n=== pictures ({len(pictures)})")
    for picture in pictures:
        print(f"  {picture}")
    if not pictures:
        print(f"  (none under {folder}/: stages skipped from an older demo drew none; --force redraws them)")
    return pictures


if __name__ == "__main__":
    main()
