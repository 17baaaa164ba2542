"""Response evaluation: ROUGE, the grid of settings, failures recorded, reruns identical, the command's output."""

import json

import pytest
from ctbls_fixtures import FakeLLM, tiny_response_setup

from eval import generation, response
from retrieval.ctbls.state_tracker import CellStateTracker
from retrieval.ctbls.table_retriever import DenseTableRetriever


@pytest.fixture(scope="module")
def tiny(tiny_backbone, tmp_path_factory):
    return tiny_response_setup(tiny_backbone, tmp_path_factory.mktemp("response"))


def _evaluate(tiny, llm, **kw):
    return response.evaluate(tiny["conversations"], tiny["tables"], tiny["passages"],
                             DenseTableRetriever.from_pretrained(tiny["dtr"]),
                             CellStateTracker.from_pretrained(tiny["tracker"]), llm, **kw)


def test_rouge_precision_recall_f1():
    s = generation.rouge_scores(["the Nile river", "x"], ["Nile", "y"])
    assert s["rouge1_p"] == pytest.approx((1 / 3 + 0) / 2) and s["rouge1_r"] == pytest.approx(0.5)
    assert s["rouge1_f"] == pytest.approx((0.5 + 0) / 2) and s["rouge2_p"] == 0.0
    assert generation.rouge_scores(["a b"], ["a b"])["rougeL_p"] == 1.0


def test_every_setting_is_scored_and_reruns_are_identical(tiny):
    llm = FakeLLM()
    results, records = _evaluate(tiny, llm)
    for name in response.setting_names():
        assert results[name]["n"] == 6 and results[name]["failed"] == 0
        assert 0.0 <= results[name]["rouge1_p"] <= 1.0
    d = results["_data"]
    assert d["turns"] == 6 and d["conversations"] == 3 and d["failed_generations"] == 0
    # BM25 finds each tiny table from its first question; gold is gold.
    assert d["first_turn_table_found"]["bm25"] == 3 and all(r["tables"]["gold"] for r in records)
    # The fake answers with the top cell's value, as the extractive baseline does.
    assert results["top1/gold"]["rouge1_p"] == pytest.approx(results["extractive/gold"]["rouge1_p"])
    assert d["distinct_prompts"] < d["generations"]  # identical prompts are generated once
    assert results["none"]["rouge1_p"] == 0.0  # "I do not know" shares nothing with the references
    again, _ = _evaluate(tiny, FakeLLM())
    strip = lambda r: {k: v for k, v in r.items() if k != "_data"}  # noqa: E731
    assert strip(again) == strip(results)


def test_failures_are_recorded_and_the_run_finishes(tiny):
    results, records = _evaluate(tiny, FakeLLM(fail_when="[3]"))  # every top-3 prompt times out
    assert all(results[f"top3/{t}"]["failed"] == 6 for t in response.TABLE_SETTINGS)
    assert results["top1/gold"]["failed"] == 0 and results["top3/gold"]["rouge1_p"] == 0.0
    assert len(results["failures"]) == 18 and results["failures"][0]["error"] == "timed out after 60s"
    assert results["_data"]["failed_generations"] == 18
    assert all("top3/gold" in r["errors"] for r in records)

    results, _ = _evaluate(tiny, FakeLLM(raise_error=True))
    assert results["_data"]["failed_generations"] == 42  # 7 LLM settings x 6 turns
    assert "ConnectionError: server unreachable" in results["failures"][0]["error"]
    assert results["extractive/gold"]["failed"] == 0


def test_command_prints_and_writes_results_and_predictions(tiny, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(response, "load_backend", lambda spec, cache=None: FakeLLM())
    data = tiny["data"]
    out, preds = tmp_path / "r.json", tmp_path / "p.jsonl"
    results = response.main([
        "--dtr", str(tiny["dtr"]), "--tracker", str(tiny["tracker"]), "--tables", str(data / "tables.jsonl"),
        "--questions", str(data / "questions_dev.json"), "--passages", str(data / "passages_dev.jsonl"),
        "--cache", "", "--cache-dir", "", "--max-conversations", "2", "--output", str(out),
        "--predictions", str(preds)])
    assert json.loads(out.read_text()) == json.loads(json.dumps(results))
    assert (tmp_path / "r.png").read_bytes().startswith(b"\x89PNG")  # the chart beside the JSON
    assert results["_data"]["conversations"] == 2 and results["_data"]["max_conversations"] == 2
    assert len(preds.read_text().splitlines()) == 4
    printed = capsys.readouterr().out
    assert "R1-P" in printed and "extractive/dtr" in printed and "failed generations: 0" in printed
