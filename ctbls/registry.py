"""Every command of ``ctbls <group> <command>``, in one table: the dispatcher (:mod:`ctbls.cli`), the tests and
docs/command_line.md all read it, so a command that is not here is not a command.

Entries name their code by string (``"eval.retrieval:main"``); nothing is imported until a command runs, so
``ctbls --help`` stays fast. Each target is the module's own ``main(argv)``: ``python -m eval.retrieval ...`` and
``ctbls eval retrieval ...`` run the same function on the same flags.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Command:
    """One command: ``ctbls GROUP NAME [args]`` calls ``TARGET(PREFIX + args)``.

    ``name`` is empty where the group is itself the command (``ctbls chat``). ``prefix`` is the module's
    sub-command (``("ask",)`` for ``retrieval.trends.analysis``). ``by_flag`` replaces ``target`` where one
    command has two implementations told apart by a flag: ``(("--log FILE", "a:main"), ("--memory DIR", "b:main"))``.
    """

    group: str
    name: str
    target: str
    summary: str
    prefix: tuple[str, ...] = ()
    by_flag: tuple[tuple[str, str], ...] = ()

    @property
    def words(self) -> str:
        """The command as typed: ``ctbls eval retrieval``."""
        return " ".join(w for w in ("ctbls", self.group, self.name) if w)

    @property
    def targets(self) -> tuple[str, ...]:
        """Every ``module:function`` this command may call."""
        return tuple(t for _, t in self.by_flag) if self.by_flag else (self.target,)

    @property
    def modules(self) -> tuple[str, ...]:
        return tuple(t.partition(":")[0] for t in self.targets)


def load(target: str) -> Callable:
    """The function ``module:function`` names, its module imported now."""
    module, _, function = target.partition(":")
    return getattr(importlib.import_module(module), function)


# the file-based memory reads a chat log whole for each question; the living memory is a folder (or a database)
LOG_OR_MEMORY = (("--log FILE", "retrieval.memory.temporal_memory:main"),
                 ("--memory DIR", "retrieval.memory.live:main"))

GROUPS: dict[str, str] = {
    "train": "training (one process here; `accelerate launch -m train.<module>` for several)",
    "eval": "evaluations: the figures of the README and docs/",
    "memory": "the temporal memory: ask a chat log or a living memory; chat into, import into, recover a memory",
    "chat": "chat over tables with the cTBLS pipeline",
    "trends": "how much is said about a topic, period by period",
    "serve": "the memory service's HTTP API",
    "mcp": "one memory as an MCP server",
    "app": "the web page",
    "index": "a checkpoint's table and cell index",
    "data": "the benchmarks as Hugging Face datasets",
    "demo": "`make demo`: the main job end to end",
    "llm": "the LLM backends",
    "bench": "speed and scale benchmarks",
    "experiments": "the studies behind the memory's settings",
}

COMMANDS: tuple[Command, ...] = (
    Command("train", "dtr", "train.dtr:main", "the Dense Table Retriever (cTBLS stage 1)"),
    Command("train", "tracker", "train.state_tracker:main", "the coarse cell state tracker (cTBLS stage 2)"),
    Command("train", "dialogue-retriever", "train.dialogue_retriever:main",
            "the temporal memory's content encoder, on LoCoMo's questions and evidence turns"),
    Command("train", "memory-relevance", "train.memory_relevance:main",
            "the memory's relevance model, on LoCoMo's and Zyphra's questions and their rows"),
    Command("train", "topic-turns", "train.topic_turns:main",
            "the trend analysis's per-turn topic model, on chats a person marked"),
    Command("train", "state-rerank", "train.state_rerank:main", "a tracker's state-aware re-ranker, on SQA"),
    Command("eval", "retrieval", "eval.retrieval:main", "table retrieval: BM25, untuned, DTR, fusion"),
    Command("eval", "state-tracking", "eval.state_tracking:main", "cell tracking: BM25, untuned, tracker, fusion"),
    Command("eval", "answer-accuracy", "eval.answer_accuracy:main", "SQA's answer accuracy of the extractive stage"),
    Command("eval", "response", "eval.response:main", "cTBLS responses: ROUGE (OTT-QA), answer accuracy (SQA)"),
    Command("eval", "temporal", "eval.temporal:main", "the temporal memory on Zyphra's questions: recall, F2"),
    Command("eval", "locomo-temporal", "eval.locomo_temporal:main", "LoCoMo's temporal questions: recall@k"),
    Command("eval", "locomo-answers", "eval.locomo_answers:main", "LoCoMo's temporal questions answered"),
    Command("eval", "timex", "eval.timex:main", "time-expression resolvers on outside test suites"),
    Command("eval", "trends", "eval.trends:main", "trend counts against topics planted at known rates"),
    Command("eval", "user-trial", "eval.user_trial:main", "a hand-written chat and its questions, on both memories"),
    Command("eval", "trend-turn-folds", "eval.trend_turn_folds:main",
            "a learned per-turn topic count on the trials' trend questions, leave one chat out"),
    Command("eval", "memory-engines", "eval.memory_engines:main", "the memory's figures on each storage engine"),
    Command("eval", "relevance-calibration", "eval.relevance_calibration:main",
            "the relevance model's calibration and its weak-evidence warning, by folds"),
    Command("eval", "results-table", "eval.results_table:main", "README's results table, from results/*.json"),
    Command("memory", "ask", "", "ask a chat log (--log FILE) or a living memory (--memory DIR)", ("ask",),
            LOG_OR_MEMORY),
    Command("memory", "chat", "retrieval.memory.live:main", "chat into a living memory, asking as you go", ("chat",)),
    Command("memory", "import", "retrieval.memory.live:main", "append a chat log to a living memory", ("import",)),
    Command("memory", "recover", "retrieval.memory.live:main", "rebuild a damaged memory from its snapshot",
            ("recover",)),
    Command("chat", "", "retrieval.ctbls.chat:main", "interactive, one-shot JSON, or a replay of answered turns"),
    Command("trends", "ask", "retrieval.trends.analysis:main", "a topic's volume per period, with a report",
            ("ask",)),
    Command("serve", "", "retrieval.service.server:main", "serve memories over HTTP (and the page)", ("serve",)),
    Command("mcp", "", "retrieval.service.server:main", "one memory's tools for an agent (stdio or HTTP)", ("mcp",)),
    Command("app", "", "retrieval.app.page:main", "tables, memory, trends and a living memory in a browser"),
    Command("index", "build", "retrieval.ctbls.build_index:main", "save a checkpoint's table (and cell) index"),
    Command("data", "export", "retrieval.data.export:main", "a benchmark as save_to_disk, JSON lines and Parquet"),
    Command("demo", "", "eval.demo:main", "train and evaluate on the default data and packaged models"),
    Command("llm", "speed", "retrieval.llm.speed:main", "load time and generation throughput of a backend"),
    Command("bench", "encode", "benchmarks.encode:main", "encoding throughput against sentence-transformers"),
    Command("bench", "index", "benchmarks.index:main", "large indices: build, memory, queries/s, recall"),
    Command("bench", "relevance-cost", "benchmarks.relevance_cost:main",
            "the time the memory's relevance model adds per question"),
    Command("bench", "temporal-calls", "benchmarks.temporal_calls:main", "LLM calls per temporal question"),
    Command("bench", "temporal-scale", "benchmarks.temporal_scale:main", "temporal queries on large tables"),
    Command("bench", "train-throughput", "benchmarks.train_throughput:main",
            "the DTR's training loop against sentence-transformers' trainer"),
    Command("bench", "service-load", "benchmarks.service_load:main", "the memory service under load, and killed"),
    Command("bench", "app-first-answer", "benchmarks.app_first_answer:main", "how soon the web page answers"),
    Command("bench", "many-memories", "benchmarks.many_memories:main", "1,000 small memories on each engine"),
    Command("experiments", "temporal-bank", "experiments.temporal_bank:main",
            "a bank of temporal questions with gold rows from the logs"),
    Command("experiments", "content-variants", "experiments.content_variants:main",
            "content-ranking variants on the LoCoMo proxy"),
    Command("experiments", "content-proxy", "experiments.content_proxy:main",
            "where to fuse and cut, chosen on LoCoMo"),
    Command("experiments", "topic-decision", "experiments.topic_decision:main",
            "does a question name a topic: the rule planner measured"),
)


def group_commands(group: str) -> list[Command]:
    """The commands of ``group``, in the table's order."""
    return [c for c in COMMANDS if c.group == group]


def python_m(target: str, prefix: tuple[str, ...]) -> str:
    """The same command as ``python -m``: ``python -m retrieval.memory.live chat``."""
    return " ".join(["python -m", target.partition(":")[0], *prefix])


def markdown_table() -> str:
    """The table as docs/command_line.md shows it (a test checks the page holds exactly this)."""
    rows = ["| command | what it does | the same as |", "|---|---|---|"]
    for c in COMMANDS:
        same = "; ".join(f"`{spec}`: `{python_m(t, c.prefix)}`" for spec, t in c.by_flag) if c.by_flag \
            else f"`{python_m(c.target, c.prefix)}`"
        rows.append(f"| `{c.words}` | {c.summary} | {same} |")
    return "\n".join(rows) + "\n"
