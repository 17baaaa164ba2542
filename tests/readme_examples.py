"""Run the examples of README.md and of the pages under docs/ as written, and check what they print.

    python tests/readme_examples.py                  # every example; a table of what ran, parsed or was skipped
    python tests/readme_examples.py --list           # the examples and their checks, nothing run
    python tests/readme_examples.py --only chat      # the examples whose text contains 'chat'
    python tests/readme_examples.py --dtr FOLDER --report runs/readme.json --keep runs/readme_copy
                                                     # each example's output: runs/readme_copy/work/runs/readme_outputs/

Every ```bash and ```python block of README.md and docs/*.md (:func:`pages`) is cut into examples (a command
with its continuation lines, or a whole python block), and every example must match exactly one entry of
:data:`CHECKS`:

- ``run``: executed with its text unchanged, in a working copy (below), and checked: exit code 0 and the
  substrings, JSON fields or files its entry names. A synopsis's bracketed options (``[--split test]``) are
  dropped: the one change made to a command's text.
- ``parse``: a run of hours (training, the full response grid), or one that needs GPUs, several machines, a
  model from the hub, a server or a user's own file: its arguments go through the command's own parser
  (``make -n`` for make targets), nothing runs.
- ``skip``: not one of our commands (the llama.cpp server), or a synopsis line; the reason is printed.

**The working copy.** A temporary folder holding links to the repository's code and configs, with
``../shared/data`` linked beside it, and a ``runs/`` holding what the README's commands expect:
``runs/dtr`` is the DTR given with ``--dtr`` (default: the repository's ``runs/dtr``, a DTR trained with
``configs/dtr.yaml``; without one, the packaged MiniLM untuned, saved as a DTR), linked file by file so what
the commands write into it stays in the copy; ``runs/state_tracker`` is ``--tracker`` (default: the packaged
MiniLM untuned with ``configs/state_tracker.yaml``'s cell text: training one takes about 25 minutes here).
Before the examples, ``python -m retrieval.ctbls.build_index --dtr runs/dtr`` saves the table index, as a user
would once. ``CTBLS_CACHE_DIR`` is ``--cache-dir`` (default: the repository's ``runs/cache``), so what one run
encodes the next reuses (a cache only saves time). The checks on answers hold for the trained DTR and for the
untuned MiniLM alike (both rank the example questions' tables and cells first).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"


def pages() -> list[Path]:
    """The pages whose examples run: README.md, then docs/*.md by name."""
    return [README, *sorted((REPO / "docs").glob("*.md"))]


NOT_LINKED = {".git", ".venv", "runs", "README.md"}


@dataclass
class Example:
    """One example of a page: a bash command (continuations joined) or a python block."""

    lang: str
    line: int
    text: str
    assignments: tuple[str, ...] = ()  # NAME=value lines before it in its block
    page: str = "README.md"  # the page it is on, relative to the repository

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


@dataclass
class Result:
    rc: int
    out: str  # stdout and stderr
    stdout: str
    cwd: Path


Verify = Callable[[Result], "str | None"]  # a failure message, or None


@dataclass
class Check:
    """How one example is checked: ``match`` (a regular expression) finds it (see the module docstring)."""

    match: str
    mode: str  # run | parse | skip
    reason: str = ""
    verify: tuple[Verify, ...] = ()
    stdin: str | None = None
    value: str | None = None  # python examples: an expression evaluated after the block, printed as JSON


# ---- what to check -----------------------------------------------------------------------------------------
def contains(*texts: str) -> Verify:
    return lambda r: next((f"output lacks {t!r}" for t in texts if t not in r.out), None)


def files(*paths: str) -> Verify:
    return lambda r: next((f"{p} was not written" for p in paths if not (r.cwd / p).is_file()), None)


def _field(obj, path: str):
    for key in path.split("."):
        obj = obj[int(key)] if isinstance(obj, list) else obj[key]
    return obj


def json_fields(source: str, expected: dict) -> Verify:
    """``source``: "stdout", "value" (a python example's value) or a JSON file written by the example;
    ``expected``: dotted path -> the value, or a predicate on it."""
    def verify(r: Result) -> str | None:
        try:
            if source == "stdout":
                obj = json.loads(r.stdout)
            elif source == "value":
                obj = json.loads(r.stdout.rsplit("README-VALUE: ", 1)[1])
            else:
                obj = json.loads((r.cwd / source).read_text())
        except (OSError, ValueError, IndexError) as e:
            return f"{source}: no JSON ({type(e).__name__}: {e})"
        for path, want in expected.items():
            try:
                got = _field(obj, path)
            except (KeyError, IndexError, TypeError, ValueError):
                return f"{source}: no field {path}"
            if not (want(got) if callable(want) else got == want):
                return f"{source}: {path} is {got!r}"
        return None
    return verify


def fraction(x) -> bool:
    return isinstance(x, float) and 0.0 <= x <= 1.0


HADI = "Hadi_Aghily_2"
HADI_QUESTION = ("When Irainian International Hadi Aghily played in a country where the official languages are "
                 "Chinese and Tamil during part of an Asian competition, what was the score?")
GELSOR = "2000_Gelsor_Open_Romania_0"
LONG_TRAIN = "long: a training run (an hour or more on 2 CPU cores)"
CHECKS: list[Check] = [
    # quick start
    Check("make demo", "parse", "long: trains and evaluates everything, tens of minutes"),
    Check("make test", "parse", "long: the whole test suite"),
    # 1. DTR
    Check(r"launch --cpu -m train.dtr --config configs/dtr.yaml\s+#", "parse", LONG_TRAIN),
    Check("launch -m train.dtr --config configs/dtr_roberta.yaml", "parse", "GPU and the model hub (roberta-base)"),
    Check("--output-dir runs/x --num-train-epochs 1", "parse", LONG_TRAIN),
    Check("--resume-from-checkpoint latest", "parse", LONG_TRAIN + ", resumed"),
    Check("python -m eval.retrieval --dtr runs/dtr", "run",
          verify=(json_fields("runs/dtr/eval.json", {"all_tables.dtr.mrr@10": fraction,
                                                     "split_tables.dtr.first_turn_top1": fraction,
                                                     "_data.questions": 358}),)),
    # README's first try
    Check(r"ctbls memory import \S+ --memory runs/first_memory", "run", verify=(contains("imported 432 turns"),)),
    Check(r"ctbls memory ask --memory runs/first_memory", "run", verify=(contains("2023-05-08"),)),
    Check(r"ctbls chat --dtr packaged:minilm --tracker packaged:minilm --llm none", "run",
          verify=(json_fields("stdout", {"table_id": GELSOR, "extractive": "Karim Alami"}),)),
    # docs/postgresql.md, docs/service.md, docs/web_page.md, docs/time_expressions.md
    Check(r"retrieval.memory.live (import|ask) .*--store postgresql://me@dbhost", "parse",
          "needs a PostgreSQL server of the user's (dbhost) and their chat.jsonl"),
    Check(r"store=\"postgresql://me@dbhost", "skip",
          "needs a PostgreSQL server of the user's (dbhost); tests/test_postgres_memory.py runs it on pgserver"),
    Check("python -m eval.memory_engines", "parse",
          "long: every Zyphra and LoCoMo question on three engines, tens of minutes"),
    Check("ctbls serve --root runs/service --page", "parse", "a server, until interrupted; tests/test_service.py "
          "drives it"),
    Check("MemoryClient.create", "skip", "needs the service above running; tests/test_service.py uses the client"),
    Check("python -m train.memory_relevance --config configs/memory_relevance.yaml", "parse",
          "a minute; tests/test_relevance.py trains it on a tiny file"),
    Check(r"--relevance runs/memory_relevance", "parse", "needs the model trained above (runs/memory_relevance)"),
    Check(r"--relevance packaged \"When did Melanie", "run", verify=(contains("evidence probability"),)),
    Check(r"--folds 5 --(output|latency-sample)", "parse", "minutes each: the fold figures of docs/relevance.md"),
    Check("python -m benchmarks.relevance_cost", "parse", "a benchmark: a minute with the cross-encoder rows"),
    Check("python -m benchmarks.service_load", "parse", "long: 50 clients for 60 s, twice, and a killed server"),
    Check("ctbls app --llm none --port 7861", "parse", "a server, until interrupted; tests/test_app_browser.py "
          "drives it"),
    Check("python -m benchmarks.app_first_answer", "parse", "long: 8 page loads in headless Chromium"),
    Check("from retrieval.timex import Context, read, resolve_phrase", "run",
          value='[str(x) for x in resolve_phrase("the third Wednesday of previous month", '
                'datetime(2018, 3, 20, tzinfo=ZoneInfo("UTC"))).interval]',
          verify=(json_fields("value", {"0": lambda v: v.startswith("2018-02-21")}),)),
    # 2. state tracker
    Check("launch --cpu -m train.state_tracker --config configs/state_tracker.yaml", "parse", LONG_TRAIN),
    Check("launch -m train.state_tracker --config configs/state_tracker_roberta.yaml", "parse",
          "GPU and the model hub (roberta-base)"),
    Check("python -m eval.state_tracking --tracker runs/state_tracker --dtr runs/dtr", "run",
          verify=(json_fields("runs/state_tracker/eval.json", {"gold_table.tracker.mrr@10": fraction,
                                                               "dtr_table.tracker.top10": fraction}),)),
    # 3. responses
    Check(r"--llm smollm2\s+# interactive", "run", stdin=HADI_QUESTION + "\n/quit\n",
          verify=(contains("cTBLS chat", "you> ", f"table: {HADI}", "answer: "),)),
    Check("--llm none --once", "run", verify=(json_fields("stdout", {"table_id": HADI, "answer": "1-0",
                                                          "cells.0.cell_id": [HADI, 3, 4]}),)),
    Check("--split test --show-turns 3", "run", verify=(contains("--- turn 3", "reference: "),)),
    Check("python -m eval.response --dtr runs/dtr --tracker runs/state_tracker --llm smollm2 --split test --output",
          "parse",
          "long: the full response grid, about 80 minutes here"),
    Check("CTBLSPipeline.from_pretrained", "run",
          value='{"table": ans.table_id, "cell": list(ans.cells[0][0]), "extractive": ans.extractive}',
          verify=(json_fields("value", {"table": GELSOR, "cell": [GELSOR, 1, 1], "extractive": "Karim Alami"}),)),
    Check("--dataset ottqa-conversations --output-dir exports --split test", "run",
          verify=(contains("ottqa-conversations: 358 rows"),)),
    Check("--dataset logs --output-dir exports --formats parquet", "run", verify=(contains("logs: 10599 rows"),)),
    Check("python -m retrieval.ctbls.build_index --dtr runs/dtr", "run", verify=(contains("tables"),)),
    Check("make llm-server", "parse", "long: compiles llama.cpp (about 5 minutes); tests/test_llm_server.py uses it"),
    Check("-m train.state_tracker --config configs/state_tracker_sqa.yaml   #", "parse", LONG_TRAIN),
    Check("--history-turns 0 --output-dir runs/state_tracker_sqa_nohistory", "parse", LONG_TRAIN),
    Check("python -m eval.state_tracking --dataset sqa", "parse", "needs the two SQA trackers trained above"),
    Check("python -m train.state_rerank --config configs/state_tracker_sqa_rerank.yaml", "parse",
          "needs the SQA tracker trained above; 22 minutes of cell encoding"),
    Check("python -m eval.answer_accuracy --tracker runs/state_tracker_sqa", "parse",
          "needs the SQA tracker trained above"),
    Check("--fine-stage free spans extractive", "parse", "long: SmolLM2 scores spans for 52 turns (about 27 minutes)"),
    Check("python -m eval.response --dataset sqa", "parse", "needs the SQA tracker trained above"),
    Check("python -m llama_cpp.server", "skip", "llama.cpp's server, not ours: `make llm-server` builds it"),
    Check('"base_url": "http://127.0.0.1:8080/v1"', "parse", "needs the llama.cpp server above"),
    # 4. temporal memory
    Check("TemporalMemory.from_file", "run",
          value='{"rows": len(r.rows), "dates": sorted(set(map(str, r.rows["date"])))}',
          verify=(json_fields("value", {"rows": lambda n: n > 0, "dates": ["2023-10-20"]}),)),
    Check("What activity did Caroline and Melanie discuss on July 3rd", "run", verify=(contains("pottery class"),)),
    Check("--log my_chat.jsonl", "parse", "a user's own log (my_chat.jsonl)"),
    Check("python -m eval.timex --output runs/timex.json", "run",
          verify=(files("runs/timex.png"), json_fields("runs/timex.json", {"half": "all"}), contains("ours_sentence"))),
    Check("python -m eval.timex --half test", "run", verify=(contains("timebank.test", "ours_sentence"),)),
    Check("python -m eval.temporal --config configs/temporal.yaml --output runs/temporal.json", "run",
          verify=(json_fields("runs/temporal.json", {"n_questions": lambda n: n > 0}),)),
    Check("--zyphra-dir DIR --logs 26 --llm smollm2", "parse", "DIR stands for a folder of the user's"),
    Check(r"--questions-dir eval/bank --logs 26 28 41\b", "run", verify=(contains("time questions"),)),
    Check(r"--questions-dir eval/bank --logs 42 43", "parse", "the development command above on the held-out logs"),
    Check("When did Caroline go to the LGBTQ support group", "run", verify=(contains("answer: 7 May 2023"),)),
    Check(r"--llm-cache runs/llm_cache_answers.sqlite", "parse", "needs the llama.cpp server above"),
    Check("python -m eval.locomo_answers --output runs/locomo_answers.json", "run",
          verify=(contains("gold_evidence"),)),
    Check("python -m retrieval.memory.live import ../shared", "run", verify=(contains("imported 432 turns"),)),
    Check(r"python -m eval.user_trial --chat eval/trial_dev2", "run", verify=(contains("47 questions"),)),
    Check(r"python -m eval.trend_turn_folds --chats eval/trial ", "run",
          verify=(contains("10 trend questions over 5 chats"),)),
    Check(r"python -m eval.user_trial --chat eval/trial_dev3", "run", verify=(contains("194 turns in 14 sessions"),)),
    Check(r"python -m eval.user_trial --chat eval/trial_dev4", "run", verify=(contains("197 turns in 14 sessions"),)),
    Check(r"python -m eval.user_trial --chat eval/trial_dev5", "run", verify=(contains("203 turns in 15 sessions"),)),
    Check("python -m eval.user_trial --output runs/user_trial.json", "run",
          verify=(json_fields("runs/user_trial.json", {"engines.file.summary.n": 49}),)),
    Check("python -m retrieval.memory.live chat", "parse", "interactive; tests/test_live_memory.py scripts it"),
    Check("python -m retrieval.app.page", "parse", "a server, until interrupted; tests/test_app_browser.py drives it"),
    Check("python -m retrieval.service.server serve", "parse", "a server, until interrupted; tests/test_service.py "
          "drives it"),
    Check("python -m retrieval.service.server mcp", "parse", "an MCP server on stdio, for an agent; "
          "tests/test_service.py drives it"),
    Check("python -m retrieval.memory.live ask --memory runs/my_memory", "run", verify=(contains("2023-05-08"),)),
    Check(r"TemporalMemory.open\(\"runs/my_memory\"", "run", value='{"ids": r.ids}',
          verify=(json_fields("value", {"ids": lambda ids: 432 in ids}),)),
    Check("python -m eval.locomo_temporal --locomo", "run", verify=(contains("recall@1"),)),
    Check("python -m experiments.content_proxy --output runs/content_proxy.json", "run",
          verify=(json_fields("runs/content_proxy.json", {"candidates.0.fusion": "scores",
                                                          "candidates.0.margin": lambda m: 0 <= m <= 1}),)),
    Check("python -m experiments.content_proxy --fusions scores --prior-weights", "run",
          verify=(contains("held_out", "spread", "pool"),)),
    Check("python -m experiments.content_variants", "run", verify=(contains("held-out", "pool"),)),
    Check('E="python -m eval.temporal', "skip", "a shell variable for the commands below"),
    Check(r"\$E --encoder runs/dialogue_retriever", "parse",
          "needs the three fold encoders of configs/dialogue_retriever.yaml (about an hour of training)"),
    Check("python -m eval.temporal --merge", "parse", "merges the outputs of the four runs above"),
    # 5. trends
    Check("--docs notes.csv", "parse", "a user's own documents (notes.csv)"),
    Check("How often did we talk about painting", "run",
          verify=(contains("topic read from the question: 'painting'"),
                  files("runs/trends/painting/report.md", "runs/trends/painting/volume.png"))),
    Check("python -m eval.trends --output runs/trends/eval.json", "run",
          verify=(files("runs/trends/eval.json"), contains("MAE"))),
    Check("python -m eval.trends --topic-model packaged", "run",
          verify=(files("runs/trends/eval_turns.json"), contains("  turns "))),
    Check("python -m train.topic_turns --chats eval/trial ", "run",
          verify=(contains("topic-turn model: 10 topics of 5 chats"),)),
    # 6. many processes
    Check("--multi_gpu --num_processes 8 -m train.dtr", "parse", "8 GPUs"),
    Check("--multi_gpu --num_processes 8 -m train.state_tracker", "parse", "8 GPUs"),
    Check("--num_machines 2", "parse", "two machines with 8 GPUs each"),
    Check("torchrun --nnodes 2", "parse", "two machines with 8 GPUs each"),
    Check("CUDA_VISIBLE_DEVICES= accelerate launch --multi_gpu --num_processes 2", "parse",
          LONG_TRAIN + ", as 2 processes"),
    Check("torchrun --nproc_per_node 2", "parse", LONG_TRAIN + ", as 2 processes"),
    # docs/command_line.md
    Check(r"^ctbls --help\b", "run", verify=(contains("usage: ctbls <group> <command>", "memory", "experiments"),)),
    Check(r"^ctbls memory ask --help\b", "run", verify=(contains("--log FILE", "--memory DIR"),)),
]


# ---- the pages' examples ----------------------------------------------------------------------------------
def all_examples() -> list[Example]:
    """Every page's examples: README.md's, then each docs/ page's, in order."""
    return [e for page in pages() for e in examples(page.read_text(encoding="utf-8"),
                                                     str(page.relative_to(REPO)))]


def examples(text: str, page: str = "README.md") -> list[Example]:
    """A page's bash commands and python blocks, in order."""
    out: list[Example] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        fence = re.match(r"^```(bash|python)\s*$", lines[i])
        if not fence:
            i += 1
            continue
        start, i = i + 1, i + 1
        while not lines[i].startswith("```"):
            i += 1
        block = lines[start:i]
        if fence.group(1) == "python":
            out.append(Example("python", start + 1, "\n".join(block), page=page))
        else:
            out += _commands(block, start + 1, page)
        i += 1
    return out


def _commands(block: list[str], first_line: int, page: str) -> list[Example]:
    out, assignments, j = [], [], 0
    while j < len(block):
        line, number = block[j], first_line + j
        while line.rstrip().endswith("\\") and j + 1 < len(block):
            j += 1
            line = line.rstrip()[:-1].rstrip() + " " + block[j].strip()
        j += 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        lang = "synopsis" if line.lstrip().startswith("[") else "bash"  # more options of the command above
        out.append(Example(lang, number, line.strip(), tuple(assignments), page))
        if re.fullmatch(r"""[A-Za-z_]\w*=("[^"]*"|'[^']*'|\S*)""", line.strip()):  # NAME=value, nothing after
            assignments.append(line.strip())
    return out


SYNOPSIS = Check("", "skip", "a synopsis of the options of the command above, not a command")


def check_of(example: Example) -> Check:
    if example.lang == "synopsis":
        return SYNOPSIS
    found = [c for c in CHECKS if re.search(c.match, example.text)]
    if len(found) != 1:
        raise SystemExit(f"{example.where}: {len(found)} checks match this example (want 1): "
                         f"{example.text[:100]!r}; add or narrow one in tests/readme_examples.py")
    return found[0]


def runnable(text: str) -> str:
    """The command with a synopsis's bracketed options dropped."""
    return re.sub(r"\s+\[[^\]]*\]", "", text)


# ---- the working copy --------------------------------------------------------------------------------------
def working_copy(root: Path, dtr: Path | None, tracker: Path | None) -> Path:
    """``root/work``: links to the repository, ``root/shared`` beside it, ``runs/dtr`` and ``runs/state_tracker``."""
    work = root / "work"
    work.mkdir(parents=True)
    for entry in REPO.iterdir():
        if entry.name not in NOT_LINKED:
            (work / entry.name).symlink_to(entry)
    shutil.copy(README, work / "README.md")
    (root / "shared").symlink_to((REPO.parent / "shared").resolve())
    runs = work / "runs"
    runs.mkdir()
    _place_model(dtr, runs / "dtr", _untuned_dtr)
    _place_model(tracker, runs / "state_tracker", _untuned_tracker)
    return work


def _place_model(source: Path | None, target: Path, untuned: Callable[[Path], None]) -> None:
    if source is None:
        untuned(target)
        return
    target.mkdir()
    for entry in source.iterdir():
        if entry.name not in ("index", "checkpoints", "last", "eval.json"):
            (target / entry.name).symlink_to(entry.resolve())


def _untuned_dtr(folder: Path) -> None:
    from models.dual_encoder import DualEncoder
    from retrieval.ctbls.table_retriever import DenseTableRetriever, TableTextSettings

    encoder = DualEncoder.from_backbone("packaged:minilm", max_query_length=64, max_document_length=128)
    DenseTableRetriever(encoder, TableTextSettings("header", 64)).save_pretrained(folder)


def _untuned_tracker(folder: Path) -> None:
    """The packaged MiniLM, untuned, with configs/state_tracker.yaml's lengths and cell text."""
    from models.dual_encoder import DualEncoder
    from retrieval.ctbls.cell_text import CellTextSettings
    from retrieval.ctbls.state_tracker import CellStateTracker

    encoder = DualEncoder.from_backbone("packaged:minilm", max_query_length=64, max_document_length=96)
    settings = CellTextSettings(row_context="row", max_row_words=24, passages=True, max_passage_words=40,
                                history_turns=0)
    CellStateTracker(encoder, settings).save_pretrained(folder)


def environment(cache_dir: Path) -> dict[str, str]:
    env = dict(os.environ, CTBLS_CACHE_DIR=str(cache_dir), HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.pop("PYTHONPATH", None)
    return env


# ---- running -----------------------------------------------------------------------------------------------
PARSE_HARNESS = """
import importlib, sys
sys.path.insert(0, ".")
class Parsed(Exception):
    pass
module = importlib.import_module(sys.argv[1])
parsers = [name for name in ("parse_config", "parse_command") if hasattr(module, name)]
if not parsers:
    sys.exit(f"{sys.argv[1]} has no parse_config or parse_command to stop after; not run")
for name in parsers:
    def parsed(*args, _real=getattr(module, name), **kwargs):
        _real(*args, **kwargs)
        raise Parsed
    setattr(module, name, parsed)
try:
    module.main(sys.argv[2:])
except Parsed:
    print("arguments parse")
    sys.exit(0)
sys.exit("the command ran instead of stopping after its parser")
"""

VALUE_HARNESS = """
import json, sys
sys.path.insert(0, ".")
code = open(sys.argv[1], encoding="utf-8").read()
namespace = {"__name__": "__main__"}
exec(compile(code, sys.argv[1], "exec"), namespace)
print("README-VALUE: " + json.dumps(eval(sys.argv[2], namespace), default=str))
"""


def parse_argv(example: Example) -> list[str]:
    """The command that only parses ``example``'s arguments."""
    text = runnable(example.text)
    for assignment in example.assignments:
        name, value = assignment.split("=", 1)
        text = text.replace(f"${name}", shlex.split(value)[0])
    argv = shlex.split(text, comments=True)
    while argv and re.match(r"^[A-Z_]+=", argv[0]):
        argv = argv[1:]
    if argv[0] == "make":
        return ["make", "-n", *argv[1:]]
    if argv[0] == "ctbls":  # ctbls GROUP COMMAND ...: the module and arguments the registry gives it
        from ctbls.cli import resolve

        _, target, rest = resolve(argv[1:])
        return [sys.executable, "-c", PARSE_HARNESS, target.partition(":")[0], *rest]
    if "-m" in argv:  # python -m x ..., accelerate launch [its options] -m train.x ..., torchrun ... -m train.x ...
        at = argv.index("-m")
        module, rest = argv[at + 1], argv[at + 2:]
    else:  # accelerate launch [its options] train/x.py ..., torchrun [its options] train/x.py ...
        script = next(k for k, a in enumerate(argv) if a.endswith(".py"))
        module, rest = argv[script][:-3].replace("/", "."), argv[script + 1:]
    return [sys.executable, "-c", PARSE_HARNESS, module, *rest]


def execute(example: Example, check: Check, work: Path, env: dict, timeout: int) -> Result:
    if check.mode == "parse":
        argv = parse_argv(example)
        done = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True, timeout=timeout)
    elif example.lang == "python":
        code = work / f"readme_{example.line}.py"
        code.write_text(example.text + "\n", encoding="utf-8")
        done = subprocess.run([sys.executable, "-c", VALUE_HARNESS, str(code), check.value or "None"], cwd=work,
                              env=env, capture_output=True, text=True, timeout=timeout)
    else:
        script = "\n".join([*example.assignments, runnable(example.text)])
        done = subprocess.run(["bash", "-c", script], cwd=work, env=env, input=check.stdin or "",
                              capture_output=True, text=True, timeout=timeout)
    return Result(done.returncode, done.stdout + done.stderr, done.stdout, work)


def verdict(result: Result, check: Check) -> str | None:
    if result.rc != 0:
        return f"exit code {result.rc}: {result.out.strip()[-600:]}"
    if check.mode == "parse":
        return None
    return next((m for v in check.verify if (m := v(result))), None)


def run_all(selected: list[tuple[Example, Check]], work: Path, env: dict, timeout: int) -> list[dict]:
    rows = []
    for example, check in selected:
        row = {"line": example.where, "mode": check.mode, "example": example.text.splitlines()[0][:110],
               "reason": check.reason}
        if check.mode == "skip":
            rows.append({**row, "status": "skipped", "seconds": 0})
            _print_row(rows[-1])
            continue
        started = time.perf_counter()
        try:
            result = execute(example, check, work, env, timeout)
            failure = verdict(result, check)
            outputs = work / "runs" / "readme_outputs"
            outputs.mkdir(exist_ok=True)
            (outputs / f"{example.where.replace('/', '_')}.txt").write_text(f"$ {example.text}\n{result.out}",
                                                                             encoding="utf-8")
        except subprocess.TimeoutExpired:
            failure = f"still running after {timeout} s"
        status = "FAILED" if failure else ("parsed" if check.mode == "parse" else "ok")
        rows.append({**row, "status": status, "seconds": round(time.perf_counter() - started, 1),
                     "failure": failure})
        _print_row(rows[-1])
    return rows


def _print_row(row: dict) -> None:
    note = row.get("failure") or row["reason"]
    print(f"{row['line']:<18} {row['status']:<8} {row['seconds']:>7.1f} s  {row['example']}"
          + (f"\n{'':15}{note}" if note else ""), flush=True)


def prepare(work: Path, env: dict) -> None:
    """Save runs/dtr's table index, as a user does once (python -m retrieval.ctbls.build_index)."""
    argv = [sys.executable, "-m", "retrieval.ctbls.build_index", "--dtr", "runs/dtr"]
    print(f"$ {shlex.join(argv[1:])}   (in {work})", flush=True)
    subprocess.run(argv, cwd=work, env=env, check=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--dtr", type=Path, default=REPO / "runs" / "dtr" if (REPO / "runs/dtr/table_retriever.json")
                   .is_file() else None, help="DTR checkpoint for runs/dtr (default: the repository's runs/dtr; "
                   "without one, the packaged MiniLM untuned)")
    p.add_argument("--tracker", type=Path, default=None,
                   help="tracker checkpoint for runs/state_tracker (default: the packaged MiniLM untuned)")
    p.add_argument("--cache-dir", type=Path, default=REPO / "runs" / "cache", help="CTBLS_CACHE_DIR for the examples")
    p.add_argument("--only", default=None, help="only the examples whose text contains this")
    p.add_argument("--timeout", type=int, default=3600, help="seconds per example")
    p.add_argument("--keep", type=Path, default=None, help="make the working copy here and keep it")
    p.add_argument("--report", type=Path, default=None, help="write the table as JSON here")
    p.add_argument("--list", action="store_true", help="list the examples and their checks; run nothing")
    a = p.parse_args(argv)
    selected = [(e, check_of(e)) for e in all_examples()]
    unused = [c.match for c in CHECKS if not any(c is chk for _, chk in selected)]
    if unused:
        print(f"checks matching no example (stale?): {unused}")
    if a.only:
        selected = [(e, c) for e, c in selected if a.only in e.text]
    if a.list:
        for e, c in selected:
            print(f"{e.where:<18} {c.mode:<6} {e.text.splitlines()[0][:100]}" + (f"  ({c.reason})"
                                                                                    if c.reason else ""))
        return 0
    sys.path.insert(0, str(REPO))
    root = a.keep or Path(tempfile.mkdtemp(prefix="readme-"))
    try:
        work = working_copy(root, a.dtr, a.tracker)
        env = environment(a.cache_dir.resolve())
        print(f"working copy {work}: runs/dtr from {a.dtr or 'the packaged MiniLM (untuned)'}, runs/state_tracker "
              f"from {a.tracker or 'the packaged MiniLM (untuned)'}; CTBLS_CACHE_DIR={env['CTBLS_CACHE_DIR']}")
        prepare(work, env)
        rows = run_all(selected, work, env, a.timeout)
    finally:
        if a.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    counts = {s: sum(r["status"] == s for r in rows) for s in ("ok", "parsed", "skipped", "FAILED")}
    print(", ".join(f"{n} {s}" for s, n in counts.items()))
    if a.report:
        a.report.parent.mkdir(parents=True, exist_ok=True)
        a.report.write_text(json.dumps(rows, indent=2))
    return 1 if counts["FAILED"] else 0


if __name__ == "__main__":
    sys.exit(main())
