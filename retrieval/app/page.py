"""The web page: tables, memory, trends and a live memory, each result beside its baseline (Gradio Blocks).

    python -m retrieval.app.page     # http://127.0.0.1:7860, packaged models, shipped data
    ctbls app --dtr runs/demo/dtr --tracker runs/demo/state_tracker --llm none --port 7861   # the same, as a script

Tabs:

- **Tables**: type a question, or replay an OTT-QA test conversation or an SQA sequence turn by turn. The tables
  the DTR ranks beside BM25's, the chosen table with the tracker's top cells numbered (and the state re-ranker's, on
  SQA; the reference answer outlined when replayed), the extractive answer at once and the LLM's when it is written.
- **Memory**: a shipped log, an uploaded one (Zyphra, LoCoMo or JSONL) or the living memory; a question in plain
  words. How it was read (who / when / what, each time expression with its interval and reading), the plan as
  steps, the rows on a timeline of sessions and as a table, the when-answer with its evidence and derivation, and
  semantic-only search's rows beside them.
- **Trends**: a topic over a log or an uploaded CSV / JSONL of documents: the volume plot, the samples per period
  and the report (each analysis also written under ``--output-dir``).
- **Live**: what you type is recorded in a living memory (``--live``, a folder kept across restarts); "Ask" answers
  from what was said before.

The checkpoints default to ``make demo``'s (``runs/demo/...``) when they exist, else the packaged MiniLM untuned
(the page says so). Models are loaded and the default log embedded before the page is served, so a first question
is answered at once. :func:`build_page` returns the Blocks, which a FastAPI service mounts with
:func:`mount_page` (``mount_page(app, page, "/app")``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from retrieval.app.live_tab import build_live_tab
from retrieval.app.memory_demo import LiveMemory, MemoryDemo, shipped_logs
from retrieval.app.memory_tab import build_memory_tab
from retrieval.app.render import PAGE_ERRORS
from retrieval.app.tables_demo import TablesDemo
from retrieval.app.tables_tab import build_tables_tab
from retrieval.app.trends_demo import TrendsDemo
from retrieval.app.trends_tab import build_trends_tab
from retrieval.config import option, parse_config
from retrieval.data.paths import data_dir_option, default_cache_dir
from retrieval.memory.relevance.choices import AUTO, RELEVANCE_HELP

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")  # no calls home from a page on a closed network

DEMO_RUNS = Path("runs/demo")

CSS = """
.ctbls-table { border-collapse: collapse; font-size: 13px; }
.ctbls-table th, .ctbls-table td { border: 1px solid #ccc; padding: 3px 6px; vertical-align: top; }
.ctbls-table th { background: #f2f2f2; }
.table-wrap { max-height: 420px; overflow: auto; max-width: 100%; }
td.cell-tracker { background: #ffe8a3; }
.rankings td.gold { background: #eef7ee; } .gold-mark { color: #2ca02c; font-weight: 700; }
td.cell-rerank { box-shadow: inset 0 0 0 2px #2ca02c; }
.cell-gold { outline: 2px dashed #d62728; outline-offset: -3px; }
.cell-gold.legend { padding: 0 4px; outline-offset: 1px; }
.badge { display: inline-block; min-width: 1.2em; margin-right: 4px; border-radius: 8px; font-size: 11px;
         text-align: center; color: white; }
.badge.tracker { background: #c98a00; } .badge.rerank { background: #2ca02c; }
.legend, .note { color: #666; font-size: 12px; }
.error-box { color: #b00020; font-weight: 600; }
.warning { color: #8a5a00; background: #fff6e0; padding: 4px 8px; border-radius: 4px; }
.when-answer { font-size: 16px; }
details.more summary { cursor: pointer; }
"""


@dataclass
class Services:
    """What the page serves from: each tab's demo (``tables`` None: the tab says the tables are missing)."""

    tables: TablesDemo | None
    memory: MemoryDemo
    trends: TrendsDemo
    live_folder: str | None = None
    default_log: str | None = None
    notes: Sequence[str] = ()


def build_page(services: Services):
    """The Gradio Blocks of the page (see the module docstring); its living memory is ``page.live``
    (:func:`close_page` closes it)."""
    import gradio as gr

    live = LiveMemory(services.live_folder, services.memory.encoder, services.memory.relevance,
                      services.memory.evidence_rule)
    with gr.Blocks(title="cTBLS: conversational retrieval over tables and over time") as page:
        gr.Markdown("# Conversational retrieval over tables and over time\nEach result is shown beside its "
                    "baseline: the DTR beside BM25, the memory's plan beside semantic-only search."
                    + "".join(f"\n\n> {n}" for n in services.notes))
        with gr.Tab("Tables", id="tables"):
            build_tables_tab(services.tables)
        with gr.Tab("Memory", id="memory"):
            build_memory_tab(services.memory, live, services.default_log)
        with gr.Tab("Trends", id="trends"):
            build_trends_tab(services.trends, services.default_log)
        with gr.Tab("Live", id="live"):
            build_live_tab(services.memory, live)
    page.live = live
    return page


def close_page(page) -> None:
    """Close what the page opened (the living memory: its snapshot written, its lock released)."""
    if getattr(page, "live", None) is not None:
        page.live.close()


# ---- the command ---------------------------------------------------------------------------------------------
def _demo_default(name: str) -> str | None:
    path = DEMO_RUNS / name
    return str(path) if path.is_dir() else None


@dataclass(kw_only=True)
class AppArguments:
    """Start the web page: tables, memory, trends and a live memory, each beside its baseline."""

    data_dir: str = data_dir_option("ottqa/, sqa/, zyphra_temporal/ and locomo/")
    dtr: str | None = option(help="Dense Table Retriever checkpoint (default: make demo's, else the packaged MiniLM)",
                             default_factory=lambda: _demo_default("dtr"))
    tracker: str | None = option(help="cell state tracker checkpoint (default: make demo's, else the packaged MiniLM)",
                                 default_factory=lambda: _demo_default("state_tracker"))
    sqa_tracker: str | None = option(help="SQA tracker with its state re-ranker (default: make demo's)",
                                     default_factory=lambda: _demo_default("state_tracker_sqa"))
    encoder: str | None = option(None, "the memory's dual encoder (default: the packaged MiniLM)")
    relevance: str = option(AUTO, "the memory tabs: " + RELEVANCE_HELP + " (the Trends tab counts by the trend "
        "analysis's own default, the per-turn topic model over a conversation: the relevance model counts topics "
        "worse, docs/trends.md)")
    llm: str | dict = option("smollm2", "LLM for table answers and trend reports ('none': extractive only)")
    split: str = option("test", "OTT-QA's split: its tables and conversations", choices=("train", "val", "test"))
    sqa_split: str = option("validation", "SQA's split: its sequences", choices=("train", "dev", "validation"))
    max_conversations: int = option(50, "conversations offered for replay, per dataset")
    live: str | None = option("runs/app/live_memory", "the living memory's folder ('none': no Live tab)")
    output_dir: str = option("runs/app", "where trend analyses are written")
    cache_dir: str = option(help="embedding cache ('' for none)", default_factory=default_cache_dir)
    llm_cache: str = option(help="sqlite cache of LLM answers ('' for none)",
                            default_factory=lambda: default_cache_dir("generations.sqlite"))
    host: str = option("127.0.0.1", "address to serve on (127.0.0.1: this machine only)")
    port: int = option(7860, "port (0: the first free one from 7860)")


def load_services(a: AppArguments) -> Services:
    """Load the models and data the page serves from; the default log is embedded now, not at the first question."""
    from models.dual_encoder import load_encoder
    from retrieval.llm import llm_spec, load_backend

    data = Path(a.data_dir)
    cache = a.cache_dir or None
    spec = llm_spec(a.llm)
    backend = load_backend(spec, cache=a.llm_cache or None) if spec else None
    notes = []
    ottqa = data / "ottqa"
    tables = None
    if (ottqa / "tables.jsonl").is_file():
        tables = TablesDemo.load(ottqa, data / "sqa", a.dtr, a.tracker, a.sqa_tracker, backend, a.split,
                                 a.max_conversations, cache, a.sqa_split)
    else:
        notes.append(f"no OTT-QA tables under {ottqa}: the Tables tab is empty")
    encoder = load_encoder(a.encoder)
    logs = shipped_logs(data)
    memory = MemoryDemo(encoder, logs, default_cache_dir("temporal") if cache else None, a.relevance)
    default_log = next(iter(logs), None)
    if default_log:  # embedded now, and every encoder run once: the first question pays neither
        memory.memory(default_log).table.encode_query("warm up")
    if tables is not None:
        tables.pipes["ottqa"].retriever.encoder.encode_queries(["warm up"])
        tables.pipes["ottqa"].tracker.encoder.encode_queries(["warm up"])
    trends = TrendsDemo(encoder, logs, Path(a.output_dir) / "trends", memory.cache_dir, backend)
    live = None if a.live in (None, "", "none") else a.live
    return Services(tables, memory, trends, live, default_log, notes)


def theme():
    """Gradio's default theme on the system's fonts (its own are fetched from the web, which a closed network
    refuses)."""
    import gradio as gr

    return gr.themes.Default(font=["system-ui", "sans-serif"], font_mono=["ui-monospace", "monospace"])


def mount_page(app, page, path: str = "/app"):
    """Serve ``page`` under ``path`` of a FastAPI ``app`` (a service's), with the page's theme and styles."""
    import gradio as gr

    return gr.mount_gradio_app(app, page, path=path, theme=theme(), css=CSS, show_error=True,
                               footer_links=["api", "settings"])


def launch(page, host: str = "127.0.0.1", port: int | None = 7860, block: bool = True):
    """Serve the page; (app, local url). ``block``: serve until interrupted (then close the page)."""
    app, url, _ = page.launch(server_name=host, server_port=port, prevent_thread_lock=True, quiet=True,
                              theme=theme(), css=CSS, show_error=True, footer_links=["api", "settings"])
    if block:
        print(f"serving on {url} (Ctrl-C to stop)", flush=True)
        try:
            page.block_thread()
        finally:
            close_page(page)
    return app, url


def main(argv: Sequence[str] | None = None) -> int:
    a = parse_config(AppArguments, argv, prog="python -m retrieval.app.page", description=__doc__.split("\n")[0])
    try:
        services = load_services(a)
    except PAGE_ERRORS as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    launch(build_page(services), a.host, a.port or None)
    return 0


def cli() -> int:
    return main()


if __name__ == "__main__":
    sys.exit(main())
