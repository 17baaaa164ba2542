"""The fine-stage switch of eval.response: spans through the OTT-QA grid, and the SQA path (answer accuracy)."""

from __future__ import annotations

import json

import pytest
from ctbls_fixtures import FakeLLM, tiny_response_setup
from sqa_fixtures import sqa_folder
from test_llm import tiny_lm_dir  # noqa: F401  (the tiny random Llama fixture)

from eval import response
from eval.fine_stage import SpanStage, exact_match
from retrieval.ctbls.spans import normalise
from retrieval.ctbls.state_tracker import CellStateTracker
from retrieval.ctbls.table_retriever import DenseTableRetriever
from retrieval.llm import load_backend


def test_exact_match_ignores_case_and_spacing():
    assert exact_match(["Madrid ", "x"], ["madrid", "y"]) == 0.5 and exact_match([], []) == 0.0


@pytest.fixture(scope="module")
def tiny(tiny_backbone, tmp_path_factory):
    return tiny_response_setup(tiny_backbone, tmp_path_factory.mktemp("fine_stage"))


def test_spans_answers_are_phrases_of_the_top_cells(tiny, tiny_lm_dir):  # noqa: F811
    llm = load_backend(f"transformers:{tiny_lm_dir}")
    stage = SpanStage(k=2, shots=0)
    results, records = response.evaluate(
        tiny["conversations"], tiny["tables"], tiny["passages"], DenseTableRetriever.from_pretrained(tiny["dtr"]),
        CellStateTracker.from_pretrained(tiny["tracker"]), llm, fine_stages=["spans", "extractive"],
        table_settings=["gold"], span_stage=stage)
    assert set(results) == {"spans/gold", "extractive/gold", "failures", "_data"}
    assert results["spans/gold"]["failed"] == 0 and results["spans/gold"]["n"] == 6
    assert 0.0 <= results["spans/gold"]["exact"] <= 1.0 and results["_data"]["span_stage"]["k"] == 2
    for record in records:
        top = [tiny["tables"][uid].cell(r, c) for (uid, r, c), _ in record["cells"]["gold"][:2]]
        knowledge = " ".join(normalise(cell.text) + " " + " ".join(normalise(tiny["passages"].get(link, ""))
                                                                   for link in cell.links) for cell in top)
        assert normalise(record["answers"]["spans/gold"]) in knowledge


def test_spans_without_a_local_model_fall_back_to_the_top_span_and_say_so(tiny):
    results, _ = response.evaluate(
        tiny["conversations"], tiny["tables"], tiny["passages"], DenseTableRetriever.from_pretrained(tiny["dtr"]),
        CellStateTracker.from_pretrained(tiny["tracker"]), FakeLLM(), fine_stages=["spans"], table_settings=["gold"],
        span_stage=SpanStage(shots=0))
    assert results["spans/gold"]["failed"] == 6
    assert "local transformers model" in results["failures"][0]["error"]


def test_sqa_command_scores_every_fine_stage(tiny, tiny_lm_dir, tmp_path, monkeypatch, capsys):  # noqa: F811
    folder = sqa_folder(tmp_path / "sqa")
    tiny_llm = load_backend(f"transformers:{tiny_lm_dir}")
    monkeypatch.setattr("retrieval.llm.load_backend", lambda spec, cache=None: tiny_llm)
    out, preds = tmp_path / "sqa.json", tmp_path / "sqa.jsonl"
    results = response.main(["--dataset", "sqa", "--data-dir", str(folder.parent), "--tracker", str(tiny["tracker"]),
                             "--split", "validation", "--cache", "", "--cache-dir", "", "--span-k", "3",
                             "--span-shots", "1", "--span-margin", "0.5", "--max-new-tokens", "4",
                             "--output", str(out), "--predictions", str(preds)])
    assert json.loads(out.read_text()) == json.loads(json.dumps(results))
    rows = results["answer_accuracy"]
    assert set(rows) == {"extractive", "free", "spans"} and results["_data"]["questions"] == 4
    for row in rows.values():
        assert 0.0 <= row["all"] <= 1.0 and row["n"] == 4 and row["sequences"] == 2
    assert set(rows["spans"]["margin_grid_all"]) == {"None", "0.5", "1.0", "2.0", "4.0", "8.0"}
    assert rows["extractive"]["rule_chosen_on"] == "dev" and "rouge1_p" in rows["free"] and "rouge1_p" in rows["spans"]
    assert results["_data"]["few_shot_examples"][0][2] == "Boston"  # the train table's single-cell answer
    record = json.loads(preds.read_text().splitlines()[0])
    assert len(record["ranked"]) == 3 and 1 <= len(record["scores"]) <= 3 and record["error"] is None  # distinct values
    assert "theirs: DynSP" in capsys.readouterr().out


def test_sqa_refuses_a_withheld_split(tmp_path, capsys):
    with pytest.raises(SystemExit):
        response.main(["--dataset", "sqa", "--tracker", "t", "--split", "test"])
    assert "SQA's test set is withheld" in capsys.readouterr().err


def _pipe(tiny, llm, **kw):
    from retrieval.ctbls.pipeline import CTBLSPipeline

    return CTBLSPipeline.from_pretrained(tiny["dtr"], tiny["tracker"], llm=llm, tables=tiny["data"] / "tables.jsonl",
                                         passages=tiny["data"] / "passages_dev.jsonl", cache_dir=tiny["root"] / "c",
                                         **kw)


def test_pipeline_fine_stage_switch(tiny, tiny_lm_dir):  # noqa: F811
    query = "Which river flows through Egypt?"
    spans = _pipe(tiny, load_backend(f"transformers:{tiny_lm_dir}"), k=2, fine_stage="spans",
                  span_examples=[(["City : Cairo"], "Which city?", "Cairo")])
    a = spans.answer([], query)
    assert a.llm_ok and a.answer and a.prompt[2] == {"role": "assistant", "content": "Cairo"}  # the few-shot reply
    knowledge = normalise(a.prompt[-1]["content"])
    assert normalise(a.answer) in knowledge and f"query: {normalise(query)}" in knowledge
    fallback = _pipe(tiny, FakeLLM(), fine_stage="spans").answer([], query)
    assert not fallback.llm_ok and fallback.answer == fallback.extractive and "local transformers" in fallback.error
    llm = FakeLLM()
    extractive = _pipe(tiny, llm, fine_stage="extractive").answer([], query)
    assert extractive.answer == extractive.extractive and not llm.calls and extractive.prompt == []
    with pytest.raises(ValueError, match="fine_stage"):
        _pipe(tiny, llm, fine_stage="nope")
