"""eval.retrieval on tiny data: every pool, method and metric from one run."""

import json

from ctbls_fixtures import write_checkpoints, write_tiny_ottqa

from eval import retrieval


def test_eval_retrieval_reports_all_methods_and_pools(tiny_backbone, tmp_path, capsys):
    data = write_tiny_ottqa(tmp_path / "ottqa")
    dtr, _ = write_checkpoints(tiny_backbone, tmp_path / "ckpt")
    out = tmp_path / "res.json"
    retrieval.main(["--dtr", str(dtr), "--tables", str(data / "tables.jsonl"),
                    "--questions", str(data / "questions_dev.json"), "--split", "test",
                    "--baseline", tiny_backbone, "--cache-dir", str(tmp_path / "cache"), "--output", str(out)])
    results = json.loads(out.read_text())
    assert set(results) == {"all_tables", "split_tables", "_data"}
    assert (tmp_path / "res.png").read_bytes().startswith(b"\x89PNG")  # the chart beside the JSON
    for pool in ("all_tables", "split_tables"):
        assert {"bm25", "untuned", "dtr", "bm25+dtr (rrf)"} <= set(results[pool])
        for metrics in (v for k, v in results[pool].items() if not k.startswith("_")):
            assert {"mrr@10", "top1", "top3", "top10", "first_turn_mrr@10"} <= set(metrics)
            assert metrics["n"] == 6 and metrics["first_turn_n"] == 3
    # The three tables have disjoint vocabularies: BM25 finds every one from its questions.
    assert results["all_tables"]["bm25"]["top1"] == 1.0
    assert results["_data"]["questions"] == 6 and results["_data"]["questions_with_missing_table"] == 0
    assert "all_tables (3 tables, 6 questions)" in capsys.readouterr().out
    assert list((tmp_path / "cache").glob("docs-*.npy"))  # embeddings cached for reruns
