"""How soon the web page answers: start-up, page load, and the first answer on each tab, in a real browser.

    python -m benchmarks.app_first_answer --output runs/bench/app_first_answer.json [--llm none] [--repeats 5]

The page (``retrieval.app``) is started as ``ctbls app`` starts it, on the packaged models and the shipped data
(or the checkpoints given), then loaded ``--repeats`` times in headless Chromium (Debian's, as the suite drives it),
each time in a fresh browser context. Per load: the page's load (navigation to the question box ready), then on the
Tables tab the first question of another OTT-QA test conversation each time (so no answer comes from a cache of the
page's: the extractive answer shown, then the LLM's; ``--llm-cache ''`` keeps earlier runs' LLM answers out too),
then on the Memory tab the default question on the default log (the rows shown). A table's cells are encoded the
first time a conversation reaches it unless the embedding cache (``--cache-dir``) holds them: point it at an empty
folder to time a first visit. Each answer is timed from the page's navigation start
(what a person waits from opening the page) and from the click. The goal: a first answer within 2 s of the page
loading.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass

from benchmarks.common import RunArguments, command_line, limit_threads, machine, summary_ms, write_report
from retrieval.app.page import AppArguments, build_page, close_page, launch, load_services
from retrieval.config import option, parse_config, write_config

# As root, on a closed network: no sandbox, and none of Chromium's background calls out (the suite's browser tests
# use the same).
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]
WAIT_MS = 120_000


@dataclass(kw_only=True)
class AppBenchArguments(AppArguments, RunArguments):
    """Time the page's start-up, load and first answers in headless Chromium."""

    repeats: int = option(5, "page loads, each in a fresh browser context")
    chromium: str | None = option(None, "Chromium's binary (default: chromium on the PATH)")
    live: str | None = option("none", "the living memory's folder ('none': no Live tab, as here)")


def wait_text(page, selector: str, text: str) -> None:
    """Until the element's text holds ``text``."""
    page.wait_for_function("([s, t]) => { const e = document.querySelector(s); return e && e.innerText.includes(t); }",
                           arg=[selector, text], timeout=WAIT_MS)


def one_load(browser, url: str, question: str) -> dict[str, float]:
    """One fresh page: seconds to load, and to each answer from the navigation start and from its click."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    start = time.perf_counter()
    page.goto(url)
    page.wait_for_selector("#tables-question textarea")
    loaded = time.perf_counter()
    page.fill("#tables-question textarea", question)
    click = time.perf_counter()
    page.click("#tables-ask")
    wait_text(page, "#tables-answer", "Extractive answer")
    extractive = time.perf_counter()
    page.wait_for_function("() => !document.querySelector('#tables-answer').innerText.includes('writing')",
                           timeout=WAIT_MS)
    llm = time.perf_counter()
    page.get_by_role("tab", name="Memory").click()
    memory_click = time.perf_counter()
    page.click("#memory-ask")
    page.wait_for_function("() => document.querySelectorAll('#memory-rows tbody tr').length > 0", timeout=WAIT_MS)
    memory = time.perf_counter()
    context.close()
    return {"page_load": loaded - start, "table_answer_from_open": extractive - start,
            "table_answer_from_click": extractive - click, "llm_answer_from_click": llm - click,
            "memory_answer_from_click": memory - memory_click}


def main(argv: Sequence[str] | None = None) -> dict:
    from playwright.sync_api import sync_playwright

    a = parse_config(AppBenchArguments, argv, prog="python -m benchmarks.app_first_answer",
                     description=__doc__.split("\n")[0])
    limit_threads(a.threads)
    chromium = a.chromium or shutil.which("chromium")
    if chromium is None:
        raise SystemExit("error: no Chromium (install Debian's chromium, or pass --chromium BINARY)")
    started = time.perf_counter()
    services = load_services(a)
    startup = time.perf_counter() - started
    if services.tables is None:
        raise SystemExit(f"error: no OTT-QA tables under {a.data_dir}/ottqa")
    questions = [c.turns[0].query for s, c in services.tables.conversations.values() if s == "ottqa"]
    page = build_page(services)
    _, url = launch(page, a.host, None, block=False)
    loads = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=FLAGS)
            for n in range(a.repeats):
                loads.append(one_load(browser, url, questions[n % len(questions)]))
                print(f"load {n + 1}: " + ", ".join(f"{k} {v:.2f} s" for k, v in loads[-1].items()), flush=True)
            browser.close()
    finally:
        page.close()
        close_page(page)
    figures = {k: summary_ms([x[k] for x in loads]) for k in loads[0]}
    report = {"command": command_line("benchmarks.app_first_answer", argv), "machine": machine(),
              "startup_s": round(startup, 2), "questions": questions[:a.repeats], "llm": a.llm,
              "notes": list(services.notes) + list(services.tables.notes), "figures": figures, "loads": loads,
              "goal": "a first answer within 2 s of the page loading",
              "goal_met": figures["table_answer_from_click"]["p95_ms"] <= 2000}
    print(f"start-up {startup:.1f} s (models, tables' index, default log)")
    for k, v in figures.items():
        print(f"  {k:26s} median {v['median_ms'] / 1000:6.2f} s   p95 {v['p95_ms'] / 1000:6.2f} s")
    write_report(report, a.output)
    if a.output:
        write_config(a)
    return report


if __name__ == "__main__":
    main()
