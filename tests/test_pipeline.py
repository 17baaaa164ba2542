"""The cTBLS pipeline and chat command: table kept across turns, ranked cells, LLM failures, JSON output."""

import json

import pytest
from ctbls_fixtures import FakeLLM, write_checkpoints, write_tiny_ottqa

from retrieval.ctbls import chat
from retrieval.ctbls.pipeline import CTBLSPipeline, conversation_query
from retrieval.data.ottqa import load_passages, load_tables


@pytest.fixture(scope="module")
def tiny(tiny_backbone, tmp_path_factory):
    root = tmp_path_factory.mktemp("pipeline")
    data = write_tiny_ottqa(root / "ottqa")
    dtr, tracker = write_checkpoints(tiny_backbone, root)
    return {"data": data, "dtr": dtr, "tracker": tracker, "cache": root / "cache"}


def _pipe(tiny, llm=None, **kw):
    return CTBLSPipeline.from_pretrained(tiny["dtr"], tiny["tracker"], llm=llm, tables=tiny["data"] / "tables.jsonl",
                                         passages=tiny["data"] / "passages_dev.jsonl", cache_dir=tiny["cache"], **kw)


def test_answer_carries_table_cells_prompt_and_llm_answer(tiny):
    llm = FakeLLM()
    pipe = _pipe(tiny, llm, k=2)
    a = pipe.answer([], "Which river flows through Egypt?")
    assert a.table_id in pipe.tables and a.table_title == pipe.tables[a.table_id].title
    assert isinstance(a.table_score, float) and len(a.cells) == 2
    assert all(cell_id[0] == a.table_id for cell_id, _, _ in a.cells)
    assert [s for *_, s in a.cells] == sorted((s for *_, s in a.cells), reverse=True)
    prompt = a.prompt[-1]["content"]
    assert "Query: Which river flows through Egypt?" in prompt and f"[1] {a.cells[0][1]}" in prompt
    assert a.llm_ok and a.error is None and a.answer == llm._text(a.prompt)
    assert a.extractive == pipe.tables[a.table_id].cell(*a.cells[0][0][1:]).text
    assert json.loads(json.dumps(a.as_dict()))["cells"][0]["cell_id"] == list(a.cells[0][0])


def test_table_of_the_first_query_is_kept_for_later_turns(tiny):
    pipe = _pipe(tiny, table_retrieval="bm25")
    first = pipe.answer([], "Which Kishore Kumar song was in the film Faraar?")
    assert pipe.tables[first.table_id].title == "Kishore Kumar songs"
    # Alone, this query finds the rivers table; in the conversation, the songs table stays.
    alone = pipe.answer([], "Which river flows through Egypt?")
    later = pipe.answer([("Which Kishore Kumar song was in the film Faraar?", first.answer)],
                        "Which river flows through Egypt?")
    assert alone.table_id != first.table_id and later.table_id == first.table_id
    assert conversation_query([("q1", "a1"), ("q2", "a2")], "q3") == "q1"
    pinned = pipe.answer([], "Which river flows through Egypt?", table_id=first.table_id)
    assert pinned.table_id == first.table_id and pinned.table_score is None


def test_without_llm_the_answer_is_the_top_cell(tiny):
    a = _pipe(tiny).answer([], "How long is the Amazon river?")
    assert a.prompt == [] and a.llm_ok and a.answer == a.extractive != ""


@pytest.mark.parametrize("llm", [FakeLLM(fail_when="Query"), FakeLLM(raise_error=True)])
def test_llm_failure_falls_back_to_the_top_cell_with_its_reason(tiny, llm):
    a = _pipe(tiny, llm).answer([], "How long is the Amazon river?")
    assert not a.llm_ok and a.error and a.answer == a.extractive and a.prompt


def test_chat_once_prints_json_with_history(tiny, tmp_path, capsys):
    history = tmp_path / "history.json"
    history.write_text(json.dumps([{"query": "Which river flows through Egypt?", "answer": "Nile"}]))
    data = tiny["data"]
    chat.main(["--dtr", str(tiny["dtr"]), "--tracker", str(tiny["tracker"]), "--llm", "none",
               "--tables", str(data / "tables.jsonl"), "--passages", str(data / "passages_dev.jsonl"),
               "--cache-dir", "", "--history", str(history), "--once", "How long is the Amazon river?", "--k", "2"])
    out = json.loads(capsys.readouterr().out)
    assert set(out) >= {"answer", "table_id", "table_score", "cells", "prompt", "llm_ok", "error"}
    assert len(out["cells"]) == 2 and out["answer"]


def test_show_turns_prints_each_turn_in_full(tiny, capsys):
    pipe = _pipe(tiny, FakeLLM(answer="an answer"))
    answers = chat.show_turns(pipe, tiny["data"] / "questions_dev.json", 2)
    out = capsys.readouterr().out
    assert len(answers) == 2 and out.count("--- turn") == 2
    for part in ("history:", "table:", "top cells:", "answer: an answer", "reference:"):
        assert part in out


def test_read_history_accepts_pairs_and_objects_and_rejects_junk(tmp_path):
    f = tmp_path / "h.json"
    f.write_text(json.dumps([["q1", "a1"], {"query": "q2", "answer": None}]))
    assert chat.read_history(f) == [("q1", "a1"), ("q2", "")]
    f.write_text(json.dumps([["only one"]]))
    with pytest.raises(ValueError, match="turn 0"):
        chat.read_history(f)


def test_pipeline_takes_loaded_tables_and_passages(tiny):
    tables = load_tables(tiny["data"] / "tables.jsonl")
    pipe = CTBLSPipeline.from_pretrained(tiny["dtr"], tiny["tracker"], llm=None, tables=list(tables.values()),
                                         passages=load_passages(tiny["data"] / "passages_dev.jsonl"))
    a = pipe.answer([], "Which club does José Duarte play for?")
    cells = pipe.rank_cells([], "Which club does José Duarte play for?", a.table_id, k=9)
    assert a.table_id in tables and len(cells) == 9 and any("txt:" in c.text for c in cells)
