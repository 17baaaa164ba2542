"""eval.temporal and eval.locomo_temporal end to end on tiny data, plus the rule planner on a real log slice."""

from __future__ import annotations

import json

import pytest

from eval import locomo_temporal, temporal
from retrieval.config import parse_config
from retrieval.data.conversation_log import read_zyphra_log
from retrieval.data.jsonio import DataError
from retrieval.data.zyphra_temporal import read_questions
from retrieval.memory.conversation_table import utterance_frame
from retrieval.memory.planner import RulePlanner
from retrieval.memory.table_ops import execute
from tests.test_conversation_table import ZYPHRA


def zyphra_folder(tmp_path):
    (tmp_path / "ConversationData").mkdir(parents=True)
    (tmp_path / "ConversationData" / "1.json").write_text(json.dumps(ZYPHRA))
    tests = {
        "time_qs/test_dates.json": [{"questions": ["What did we chat about on May 5th?",
                                                   "Tell me what we discussed May fifth."], "relevant_docs": [0, 1]}],
        "time_qs/test_rel_session.json": [{"questions": ["What did we discuss last time?"], "relevant_docs": [2, 3]}],
        "content_time_qs/content_time_qs.json": [{"questions": ["What class did Bob start on May 12th?"],
                                                  "relevant_docs": [2]}],
        "ambiguous_time_qs/test_dates.json": [{"questions": [[
            {"speaker": "Ann", "text": "I see in my calendar that we talked on May 12th."},
            {"speaker": "Bob", "text": "Yes! We did talk then."},
            {"speaker": "Ann", "text": "I enjoy them too! Can you summarize what we discussed?"}]],
            "relevant_docs": [2, 3]}],
    }
    for name, items in tests.items():
        path = tmp_path / "TestData" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"file_indexes": [1], "file_1": items}))
    return tmp_path


def test_read_questions(tmp_path):
    qs = read_questions(zyphra_folder(tmp_path))
    assert len(qs) == 5 and {q.kind for q in qs} == {"time", "time+content", "ambiguous"}
    (amb,) = [q for q in qs if q.kind == "ambiguous"]
    assert amb.question.endswith("discussed?") and len(amb.history) == 2 and amb.relevant == {2, 3}


def test_eval_temporal_end_to_end(tmp_path, tiny_backbone, capsys):
    folder = zyphra_folder(tmp_path / "data")
    out = tmp_path / "report.json"
    code = temporal.main(["--zyphra-dir", str(folder), "--encoder", tiny_backbone, "--cache-dir", str(tmp_path / "c"),
                          "--semantic-ks", "1", "2", "--content-k", "1", "--content-cutoffs", "1", "2",
                          "--output", str(out)])
    printed = capsys.readouterr().out
    assert code == 0 and "== time questions" in printed and "semantic_meta@2" in printed and "p95" in printed
    report = json.loads(out.read_text())
    assert (tmp_path / "report.png").read_bytes().startswith(b"\x89PNG")  # the chart beside the JSON
    rule = report["results"]["rule"]["time"]
    assert rule["dates"]["recall"] == 100.0 and rule["dates"]["f2"] == 100.0 and rule["all"]["n"] == 3
    assert report["results"]["rule/rewrite"]["ambiguous"]["all"]["recall"] == 100.0
    assert report["results"]["rule/context"]["ambiguous"]["all"]["recall"] == 100.0
    assert "rule/original" in report["results"] and report["latency"]["all"]["n"] == 7
    resolved = tmp_path / "report.config.yaml"  # the settings beside the report; --config reads them back
    assert temporal.TemporalEvalConfig(**report["config"]) == parse_config(temporal.TemporalEvalConfig,
                                                                           ["--config", str(resolved)])
    content = {m: report["results"][m]["time+content"]["content"] for m in ("rule", "rule@1", "rule@2")}
    assert content["rule@2"]["recall"] == 100.0 and content["rule@2"]["precision"] == 50.0  # the day's 2 rows
    assert content["rule"] == content["rule@1"]  # content_k 1: the cutoffs re-ask with k = max(cutoffs)
    other = tmp_path / "report_2.json"  # the same figures as if from a second log
    other.write_text(json.dumps({**report, "logs": ["2"]}))
    merged_path = tmp_path / "merged.json"
    assert temporal.main(["--merge", str(out), str(other), "--output", str(merged_path)]) == 0
    merged = json.loads(merged_path.read_text())
    assert merged["results"]["rule"]["time"]["all"] == {**rule["all"], "n": 6}
    assert (tmp_path / "merged.png").is_file()
    assert merged["latency"]["all"]["n"] == 14 and merged["logs"] == ["1", "2"]
    capsys.readouterr()
    assert temporal.main(["--merge", str(out), str(out)]) == 2  # the same log twice would count double
    assert "['1'] appear in more than one" in capsys.readouterr().err


def test_eval_temporal_rejects_a_wrong_folder(tmp_path, capsys):
    assert temporal.main(["--zyphra-dir", str(tmp_path)]) == 2
    assert "ConversationData" in capsys.readouterr().err


def test_locomo_temporal_end_to_end(tmp_path, tiny_backbone):
    from models.dual_encoder import DualEncoder

    conv = dict(ZYPHRA, session_1_date_time="9:00 am on 5 May, 2023", session_2_date_time="8:00 am on 12 May, 2023")
    qa = [{"question": "When did Bob start pottery?", "answer": "May 2023", "evidence": ["D2:1"], "category": 2},
          {"question": "What did Bob start on May 12th?", "answer": "pottery", "evidence": ["D2:1"], "category": 2},
          {"question": "Who adopted Rex?", "answer": "Ann", "evidence": ["D1:1"], "category": 4}]
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([{"sample_id": "conv-x", "conversation": conv, "qa": qa}]))
    report = locomo_temporal.evaluate(path, DualEncoder.from_backbone(tiny_backbone), ks=(1, 2))
    assert report["n_questions"] == 2 and report["n_with_time_filter"] == 1
    assert set(report["results"]) == {"semantic", "semantic_meta", "time_aware", "time_aware_hybrid"}
    for method in ("time_aware", "time_aware_hybrid"):  # the dated question finds D2:1 in its 2 rows
        assert report["results"][method]["recall@2"] >= 50.0
    with pytest.raises(DataError, match=r"no samples \['conv-q'\]"):
        locomo_temporal.evaluate(path, DualEncoder.from_backbone(tiny_backbone), ks=(1,), only=["conv-x", "conv-q"])


def test_locomo_temporal_merge_weights_by_questions(tmp_path, capsys):
    def report(samples, n, r1):
        return {"data": "d", "samples": samples, "encoder": "e", "n_questions": n, "n_with_time_filter": 1,
                "results": {"semantic": {"recall@1": r1, "recall@5": 100.0}}}
    paths = []
    for i, r in enumerate([report(["conv-a"], 1, 10.0), report(["conv-b", "conv-c"], 3, 50.0)]):
        paths.append(tmp_path / f"{i}.json")
        paths[-1].write_text(json.dumps(r))
    out = tmp_path / "merged.json"
    assert locomo_temporal.main(["--merge", *map(str, paths), "--output", str(out)]) == 0
    merged = json.loads(out.read_text())
    assert merged["n_questions"] == 4 and merged["samples"] == ["conv-a", "conv-b", "conv-c"]
    assert (tmp_path / "merged.png").read_bytes().startswith(b"\x89PNG")
    assert merged["results"]["semantic"] == {"recall@1": 40.0, "recall@5": 100.0}
    assert "recall@5" in capsys.readouterr().out
    assert locomo_temporal.main(["--merge", str(paths[0]), str(paths[0])]) == 2  # overlapping samples
    assert "disjoint" in capsys.readouterr().err
    (tmp_path / "other.json").write_text(json.dumps({"results": {}}))
    for module in (locomo_temporal, temporal):  # a missing file, or JSON that is not such a report
        assert module.main(["--merge", str(tmp_path / "missing.json")]) == 2
        assert "missing.json: file not found" in capsys.readouterr().err
        assert module.main(["--merge", str(tmp_path / "other.json")]) == 2
        assert "other.json: not a report of this command" in capsys.readouterr().err


@pytest.mark.slow
def test_rule_planner_on_a_real_log(data_dir):
    """Time questions need no encoder: the rule plans alone, on one real log (skipped without the data)."""
    root = data_dir / "zyphra_temporal"
    if not (root / "ConversationData" / "26.json").is_file():
        pytest.skip("Zyphra log 26 is not present")
    frame = utterance_frame(read_zyphra_log(root / "ConversationData" / "26.json"))
    now = frame["timestamp"].max().to_pydatetime()
    planner = RulePlanner()
    recalls = []
    for q in read_questions(root, {"26"}):
        if q.kind != "time":
            continue
        ids = set(execute(planner.plan(q.question, now).ops, frame, ranker=lambda *a: []).ids)
        recalls.append(len(ids & q.relevant) / len(q.relevant))
    assert len(recalls) > 500 and sum(recalls) / len(recalls) > 0.95
