"""The web page driven in a real browser: headless Chromium (Debian's ``chromium``) under Playwright, against the page
served on 127.0.0.1 over tiny models and tiny data.

Each tab: a known question gives the known rows or cells, a bad upload gives a readable error on the page, and a
screenshot is written (``$CTBLS_SCREENSHOTS``, else the test's temporary folder; the path is printed). Skipped, with
the reason, when Chromium or Playwright is missing (``make test`` installs Playwright; ``.ci/run`` installs Chromium).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from app_fixtures import tiny_services

from benchmarks.app_first_answer import FLAGS, wait_text

CHROMIUM = next((c for c in (os.environ.get("CTBLS_CHROMIUM"), shutil.which("chromium"),
                              shutil.which("chromium-browser")) if c and Path(c).is_file()), None)
try:
    from playwright.sync_api import sync_playwright
except ImportError:  # pragma: no cover - make test installs it
    sync_playwright = None

MISSING = ("no Chromium: install Debian's chromium (.ci/run does) or set CTBLS_CHROMIUM to its binary"
           if CHROMIUM is None else "Playwright is not installed (pip install playwright)" if sync_playwright is None
           else None)
# .ci/run sets CTBLS_REQUIRE_BROWSER: there a missing browser fails the tests instead of skipping them
REQUIRED = os.environ.get("CTBLS_REQUIRE_BROWSER", "") not in ("", "0")
pytestmark = pytest.mark.skipif(MISSING is not None and not REQUIRED, reason=MISSING or "")


@pytest.fixture(scope="module")
def served(tiny_backbone, tmp_path_factory):
    from retrieval.app.page import build_page, close_page, launch

    page = build_page(tiny_services(tiny_backbone, tmp_path_factory.mktemp("app")))
    _, url = launch(page, port=None, block=False)
    yield url
    page.close()
    close_page(page)


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    folder = Path(os.environ.get("CTBLS_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    print(f"screenshots in {folder}")
    return folder


@pytest.fixture(scope="module")
def browser():
    if MISSING:
        pytest.fail(f"CTBLS_REQUIRE_BROWSER is set, but {MISSING}")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


@pytest.fixture
def page(browser, served):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    tab = context.new_page()
    tab.set_default_timeout(60_000)
    tab.goto(served)
    tab.wait_for_selector("#tables-question textarea")
    yield tab
    context.close()


def open_tab(page, name: str) -> None:
    page.get_by_role("tab", name=name).click()


def pick(page, dropdown: str, text: str) -> None:
    """Choose the dropdown's first option holding ``text``."""
    page.click(f"{dropdown} input")
    page.get_by_role("option").filter(has_text=text).first.click()


def test_tables_tab_typed_question_and_replay(page, shots):
    page.click("#tables-ask")  # nothing typed: said on the page
    wait_text(page, "#tables-error", "the question is empty")
    page.fill("#tables-question textarea", "Which river flows through Egypt?")
    page.click("#tables-ask")
    wait_text(page, "#tables-answer", "LLM answer")
    page.wait_for_function("() => !document.querySelector('#tables-answer').innerText.includes('writing')")
    assert "empty" not in page.inner_text("#tables-error")  # the earlier error is cleared
    assert page.locator("#tables-table td.cell-tracker").count() == 3  # the tracker's top k cells, numbered
    rankings = page.inner_text("#tables-rankings")
    assert "DTR" in rankings and "BM25" in rankings and "Longest rivers" in rankings
    assert "Which river flows through Egypt?" in page.inner_text("#tables-history")
    page.screenshot(path=str(shots / "tables-typed.png"), full_page=True)

    pick(page, "#tables-replay", "SQA")
    page.click("#tables-next")
    wait_text(page, "#tables-answer", "Reference")
    assert "given with the sequence" in page.inner_text("#tables-answer")
    assert page.locator("#tables-table td.cell-gold").count() >= 1  # the reference answer's cells outlined
    page.screenshot(path=str(shots / "tables-sqa.png"), full_page=True)


def test_memory_tab_known_rows_and_bad_upload(page, shots, tmp_path):
    open_tab(page, "Memory")
    page.fill("#memory-question textarea", "What did we discuss on May 2nd?")
    page.click("#memory-ask")
    wait_text(page, "#memory-rows", "My guitar lesson was cancelled today")
    rows = page.inner_text("#memory-rows")
    assert "Shame, guitar lessons are fun" in rows and "beagle" not in rows  # only May 2nd's rows
    assert "Rex" in page.inner_text("#memory-semantic") or page.locator("#memory-semantic tbody tr").count() >= 10
    assert "2023-05-02" in page.inner_text("#memory-reading")
    assert "keep rows with timestamp in" in page.inner_text("#memory-plan")
    page.wait_for_selector("#memory-timeline img")  # matplotlib figures are drawn as an image
    page.screenshot(path=str(shots / "memory.png"), full_page=True)

    page.fill("#memory-question textarea", "When did Ann book the trip to Lisbon?")
    page.click("#memory-ask")
    wait_text(page, "#memory-when", "Derivation")
    page.fill("#memory-question textarea", "What did we discuss a few weeks back?")
    page.click("#memory-ask")
    wait_text(page, "#memory-when", "unreadable time phrase 'a few weeks back'")  # said first, above the answer

    bad = tmp_path / "broken.json"
    bad.write_text("{not json")
    page.set_input_files("#memory-upload input[type=file]", str(bad))
    wait_text(page, "#memory-error", "broken.json: cannot be read as a log")
    page.screenshot(path=str(shots / "memory-bad-upload.png"), full_page=True)


def test_trends_tab_plot_and_periods(page, shots, tmp_path):
    open_tab(page, "Trends")
    bad = tmp_path / "notes.csv"
    bad.write_text("when,what\n")
    page.set_input_files("#trends-upload input[type=file]", str(bad))
    wait_text(page, "#trends-error", "notes.csv: cannot be read as documents")
    page.fill("#trends-question textarea", "How has the talk about guitars evolved day by day?")
    page.click("#trends-go")
    page.wait_for_selector("#trends-volume img")
    wait_text(page, "#trends-periods", "2023-05-02")
    assert "relevant" in page.inner_text("#trends-periods")
    page.screenshot(path=str(shots / "trends.png"), full_page=True)


def test_live_tab_records_and_answers(page, shots):
    open_tab(page, "Live")
    page.click("#live-say")
    wait_text(page, "#live-error", "the message is empty")
    long = "My sister Jo moved to Porto " + "and she loves the river and the bridges " * 8 + "said Jo at last"
    page.fill("#live-line textarea", long)
    page.click("#live-say")
    wait_text(page, "#live-chat", "recorded [0]")
    page.fill("#live-line textarea", "What did I say about Porto?")
    page.click("#live-ask")
    wait_text(page, "#live-rows", "My sister Jo moved to Porto")
    assert "said Jo at last" not in page.inner_text("#live-rows")  # cut at the page's width of a cell
    page.locator("#live-rows [role=gridcell]").filter(has_text="My sister Jo").first.click()
    wait_text(page, "#live-rows", "said Jo at last")  # the whole text on a click
    page.screenshot(path=str(shots / "live.png"), full_page=True)


def test_narrow_window_has_no_sideways_scroll(browser, served, shots):
    context = browser.new_context(viewport={"width": 420, "height": 860})
    tab = context.new_page()
    tab.goto(served)
    tab.wait_for_selector("#tables-question textarea")
    tab.fill("#tables-question textarea", "Which river flows through Egypt?")
    tab.click("#tables-ask")
    wait_text(tab, "#tables-answer", "LLM answer")
    width = tab.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    tab.screenshot(path=str(shots / "narrow.png"), full_page=True)
    context.close()
    assert width[0] <= width[1] + 1, f"the page scrolls sideways at 420 px: {width}"
