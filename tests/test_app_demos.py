"""The page's logic without a browser: each tab's answer, its baseline beside it, and bad input said plainly."""

from __future__ import annotations

import pandas as pd
import pytest
from app_fixtures import tiny_services

from retrieval.app.memory_demo import rows_table, shipped_logs
from retrieval.app.render import ROW_CHARS, cut, rankings_html, table_html, when_html
from retrieval.app.tables_demo import Dialogue
from retrieval.app.trends_demo import periods_frame
from retrieval.data.jsonio import DataError
from retrieval.data.types import Cell, Table


@pytest.fixture(scope="module")
def services(tiny_backbone, tmp_path_factory):
    s = tiny_services(tiny_backbone, tmp_path_factory.mktemp("app"))
    yield s
    for m in s.memory.memories.values():
        m.close()


def test_typed_question_finds_a_table_beside_bm25(services):
    demo, dialogue = services.tables, Dialogue()
    turn = demo.extract(dialogue, "Which river flows through Egypt?")
    assert [u for u, _ in turn.bm25][0] == next(u for u, t in demo.pipe(dialogue).tables.items()
                                                   if t.title == "Longest rivers")
    assert len(turn.dtr) == len(demo.pipe(dialogue).tables) == 3  # all three tables ranked by each
    assert turn.answer.extractive == turn.answer.answer  # before the LLM
    demo.respond(dialogue, turn)
    assert turn.answer.llm_ok and turn.answer.prompt  # the fake LLM wrote it from the cells
    dialogue.turns.append(turn)
    follow = demo.extract(dialogue, "And how long is it?")
    assert follow.answer.table_id == turn.answer.table_id  # a conversation keeps the table its first query found
    assert follow.dtr == turn.dtr


def test_replayed_sqa_sequence_keeps_its_table_and_marks_the_gold_cells(services):
    demo = services.tables
    label = next(k for k, (src, _) in demo.conversations.items() if src == "sqa")
    source, conversation = demo.conversations[label]
    dialogue = Dialogue(source, conversation)
    query, reference, cells = demo.next_reference(dialogue)
    turn = demo.extract(dialogue, query, (reference, cells))
    assert turn.answer.table_id == conversation.table_id and turn.dtr == [] and turn.bm25 == []
    assert turn.gold == list(cells)
    page = table_html(demo.table(dialogue, turn.answer.table_id), [i for i, _, _ in turn.answer.cells],
                      gold=turn.gold)
    assert page.count('class="cell-tracker') == len(turn.answer.cells)
    assert page.count("cell-gold") == len(cells)


def test_empty_question_is_refused_with_a_reason(services):
    with pytest.raises(ValueError, match="empty"):
        services.tables.extract(Dialogue(), "   ")


def test_table_html_escapes_and_cuts_long_cells():
    rows = [[Cell("<script>x</script>" + "y" * 200), Cell("short")]] + [[Cell(str(i)), Cell("")]
                                                                       for i in range(1, 101)]
    table = Table("t", "A <b>title</b>", ["name", "note"], rows)
    page = table_html(table, [("t", 90, 0)], max_rows=10)
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "…" in page and 'title="&lt;script&gt;x&lt;/script&gt;' + "y" * 200 in page  # the whole text on demand
    assert "<details" in cut("z" * 400, 50) and cut("short") == "short"
    assert "A &lt;b&gt;title" in page and page.count("<tr>") == 1 + 11  # the header, 10 rows and the marked one
    assert 'data-row="90"' in page and "90 more rows not shown" in page and 'class="gap"' in page


def test_rankings_html_puts_two_rankers_side_by_side(services):
    tables = services.tables.pipe(Dialogue()).tables
    a, b = sorted(tables)[:2]
    page = rankings_html({"DTR": [(a, 0.9), (b, 0.5)], "BM25": [(b, 3.0)]}, tables, gold=b)
    assert "<th>rank</th><th>DTR</th><th>BM25</th>" in page
    assert page.count("<tr>") == 3 and page.count("✓") == 2 and "0.900" in page and "3.000" in page
    assert "no table to rank" in rankings_html({"DTR": [], "BM25": []}, tables)


def test_memory_question_rows_reading_plan_and_baseline(services):
    memory = services.memory.memory("tiny log")
    got = services.memory.ask(memory, "What did we discuss on May 2nd?")
    assert list(got.result.rows["text"]) == ["My guitar lesson was cancelled today", "Shame, guitar lessons are fun"]
    reading = dict(got.reading_rows())
    assert any(k.startswith("time: 'on may 2nd'") or k.startswith("time: 'may 2nd'") for k in reading)
    assert any("2023-05-02T00:00:00+00:00 .. 2023-05-03T00:00:00+00:00" in v for v in reading.values())
    assert any("keep rows with timestamp in [2023-05-02" in s for s in got.plan_steps())
    assert len(got.semantic) == 10 and "score" in got.semantic  # the baseline ranks every row, dates ignored
    shown = rows_table(got.result.rows, got.result.execution.scores)
    assert list(shown.columns) == ["id", "session", "when", "speaker", "text", "score"]
    assert shown["when"][0] == "2023-05-02 18:00"


def test_when_question_shows_date_derivation_and_evidence(services):
    memory = services.memory.memory("tiny log")
    got = services.memory.ask(memory, "When did Ann book the trip to Lisbon?")
    html = when_html(got.result.answer)
    assert got.result.answer is not None and "Derivation" in html
    assert when_html(None).startswith('<p class="note">Not a when-question')


def test_bad_upload_names_the_file(services, tmp_path):
    bad = tmp_path / "broken.json"
    bad.write_text("{not json")
    with pytest.raises((DataError, ValueError), match="broken.json"):
        services.memory.upload(bad)
    with pytest.raises((DataError, ValueError), match="broken.json"):
        services.trends.upload(bad)


def test_trend_written_as_a_folder_with_periods(services):
    result, paths = services.trends.analyse("tiny log", "How has the talk about guitars evolved?", "day")
    assert paths["plot"].is_file() and paths["report"].is_file()
    frame = periods_frame(result)
    assert list(frame.columns) == ["period", "documents", "relevant", "share %", "samples"]
    assert frame["documents"].sum() == 12
    with pytest.raises(ValueError, match="empty"):
        services.trends.analyse("tiny log", " ")


def test_shipped_logs_list_zyphra_and_locomo(data_dir):
    logs = shipped_logs(data_dir)
    assert any(k.startswith("Zyphra log") for k in logs) and any(k.startswith("LoCoMo conv-") for k in logs)
    assert shipped_logs(data_dir / "nowhere") == {}


def test_rows_table_keeps_whole_texts_for_the_page_to_cut():
    frame = pd.DataFrame({"session": [1], "date": ["2023-05-01"], "time": ["10:00:00"], "speaker": ["Ann"],
                          "text": ["x" * 500]}, index=[7])
    shown = rows_table(frame)
    assert shown["id"][0] == 7 and shown["text"][0] == "x" * 500 and shown["score"][0] is None


def test_page_mounts_in_a_fastapi_service(services):
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    from retrieval.app.page import build_page, mount_page

    page = build_page(services)
    app = mount_page(FastAPI(), page, "/app")
    with TestClient(app) as client:
        response = client.get("/app/")
        assert response.status_code == 200 and "text/html" in response.headers["content-type"]
        config = client.get("/app/config").json()
        props = {c.get("props", {}).get("elem_id"): c.get("props", {}) for c in config["components"]}
        assert {"tables-question", "memory-question", "trends-question", "live-line"} <= set(props)
        for table in ("memory-rows", "memory-semantic", "live-rows", "trends-periods"):  # long texts cut, whole on
            assert props[table]["max_chars"] == ROW_CHARS  # a click


def test_sqa_state_reranker_marks_its_cells(tiny_backbone, tmp_path):
    import numpy as np
    from ctbls_fixtures import write_checkpoints, write_tiny_ottqa
    from sqa_fixtures import sqa_folder

    from retrieval.app.tables_demo import TablesDemo
    from retrieval.ctbls.state_features import FEATURES
    from retrieval.ctbls.state_rerank import RerankSettings, StateReranker

    dtr, tracker = write_checkpoints(tiny_backbone, tmp_path / "checkpoints")
    rng = np.random.default_rng(0)
    StateReranker(RerankSettings(n_estimators=5, max_depth=2)).fit(
        rng.random((200, len(FEATURES))), rng.integers(0, 2, 200)).save(tracker)
    demo = TablesDemo.load(write_tiny_ottqa(tmp_path / "ottqa"), sqa_folder(tmp_path / "sqa"), str(dtr), str(tracker),
                           str(tracker), None)
    assert demo.reranker is not None and not any("re-ranker" in n for n in demo.notes)
    source, conversation = next(v for v in demo.conversations.values() if v[0] == "sqa")
    dialogue = Dialogue(source, conversation)
    for _ in range(2):  # the second turn reads the first's answer as the previous state
        query, reference, cells = demo.next_reference(dialogue)
        turn = demo.extract(dialogue, query, (reference, cells))
        dialogue.turns.append(demo.respond(dialogue, turn))
        assert len(turn.reranked) == demo.pipe(dialogue).k
        assert all(uid == conversation.table_id for (uid, _, _), _ in turn.reranked)
        assert all(0.0 <= p <= 1.0 for _, p in turn.reranked)
    page = table_html(demo.table(dialogue, conversation.table_id), reranked=[i for i, _ in turn.reranked])
    assert page.count("cell-rerank") == demo.pipe(dialogue).k
