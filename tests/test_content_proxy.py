"""experiments.content_proxy: the cut's figures on hand-made fused lists, the margin rule, the command on tiny
data."""

from __future__ import annotations

import json

import pytest

from experiments import content_proxy
from experiments.content_proxy import ProxyQuestion, cut_figures, ranking_figures, tightest_margin


def question(*evidence: int) -> ProxyQuestion:
    return ProxyQuestion("conv-x", 4, frozenset(evidence), [], [])


def test_cut_figures_count_what_the_margin_keeps():
    fused = [[(1, 1.0), (2, 0.9), (3, 0.0)], [(5, 1.0), (4, 0.5), (6, 0.0)]]  # spreads 1.0 and 1.0
    qs = [question(1), question(4)]
    assert cut_figures(qs, fused, 0.2, "top")["rows"] == 1.5  # within 0.2 of the best: 1, 2; 5
    assert cut_figures(qs, fused, 0.2 * 61, "top", "rrf") == cut_figures(qs, fused, 0.2, "top")  # a vote is 1/61
    tight = cut_figures(qs, fused, 0.0)  # the best alone: the first question right, the second wrong
    assert tight == {"recall": 50.0, "precision": 50.0, "f2": 50.0, "rows": 1.0}
    mid = cut_figures(qs, fused, 0.5)  # keeps 1, 2 (within 0.5) and 5, 4 (0.5 is exactly on the floor)
    assert mid["recall"] == 100.0 and mid["precision"] == 50.0 and mid["rows"] == 2.0
    assert mid["f2"] == pytest.approx(100 * 5 * 0.5 / (4 * 0.5 + 1), abs=0.01)
    assert cut_figures(qs, fused, None)["rows"] == 3.0 == cut_figures(qs, fused, 1.0)["rows"]
    assert ranking_figures(qs, fused) == {"top1": 50.0, "top3": 100.0, "top10": 100.0, "mrr@10": 0.75}


def test_the_pool_cut_measures_the_spread_to_the_last_candidate_not_the_kth():
    fused = [[(1, 3.0), (2, 2.0), (3, 1.8), (4, 0.0)]]  # k = 2: the spread to the 2nd is 1, to the last 3
    qs = [question(3)]
    assert cut_figures(qs, fused, 0.5, "spread", k=2)["rows"] == 1.0  # the head's spread: floor 2.5
    pool = cut_figures(qs, fused, 0.5, "pool", k=2)  # floor 3 - 0.5 * 3 = 1.5: rows 1, 2 (3 is past k)
    assert pool["rows"] == 2.0 and pool["recall"] == 0.0
    assert cut_figures(qs, fused, 0.3, "pool", k=2)["rows"] == 1.0  # floor 2.1: the best alone
    assert cut_figures(qs, fused, 0.4, "pool")["recall"] == 100.0  # no k: floor 1.8 keeps row 3 as well


def test_tightest_margin_is_the_smallest_reaching_the_target():
    grid = {0.0: {"recall": 50.0}, 0.3: {"recall": 89.9}, 0.5: {"recall": 90.0}, 0.9: {"recall": 99.0}}
    assert tightest_margin(grid, 0.9) == 0.5
    assert tightest_margin(grid, 0.995) is None


def locomo_file(tmp_path):
    def session(date, lines):
        return date, [{"speaker": s, "dia_id": d, "text": t} for s, d, t in lines]

    conv = {"speaker_a": "Ann", "speaker_b": "Bob"}
    for n, (date, turns) in enumerate([
            session("9:00 am on 5 May, 2023", [("Ann", "D1:1", "I adopted a beagle called Rex."),
                                               ("Bob", "D1:2", "Congratulations! How old is he?"),
                                               ("Ann", "D1:3", "He is two, and he loves the park.")]),
            session("8:00 am on 12 May, 2023", [("Bob", "D2:1", "I started pottery classes yesterday."),
                                                ("Ann", "D2:2", "Pottery sounds relaxing."),
                                                ("Bob", "D2:3", "My first bowl cracked in the kiln.")])], start=1):
        conv[f"session_{n}_date_time"], conv[f"session_{n}"] = date, turns
    qa = [{"question": "What did Ann adopt?", "answer": "a beagle", "evidence": ["D1:1"], "category": 4},
          {"question": "What class did Bob start?", "answer": "pottery", "evidence": ["D2:1"], "category": 1},
          {"question": "When did Bob start pottery?", "answer": "11 May 2023", "evidence": ["D2:1"], "category": 2},
          {"question": "What broke?", "answer": "a bowl", "evidence": ["D2:3", "D2:1"], "category": 4},
          {"question": "What did Bob adopt?", "evidence": ["D1:1"], "category": 5, "adversarial_answer": "a beagle"}]
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([{"sample_id": sid, "conversation": conv, "qa": qa} for sid in ("conv-a", "conv-b")]))
    return path


def test_command_chooses_on_development_and_reports_held_out(tmp_path, tiny_backbone, capsys):
    out = tmp_path / "proxy.json"
    code = content_proxy.main(["--locomo", str(locomo_file(tmp_path)), "--encoder", tiny_backbone, "--cache-dir", "",
                               "--dev-samples", "conv-a", "--output", str(out)])
    assert code == 0 and "held_out" in capsys.readouterr().out
    report = json.loads(out.read_text())
    assert report["held_out_samples"] == ["conv-b"]
    assert [(c["fusion"], c["prior"], c["cut"]) for c in report["candidates"]] == [("scores", 1.5, "pool"),
                                                                                   ("rrf", 0.3, "pool")]
    for fusion in report["candidates"]:
        dev = fusion["development"]
        assert dev["n_all"] == 3 and dev["n_single"] == 2  # categories 2 and 5 left out; one question has two turns
        grid = dev["grid_single"]
        assert fusion["margin"] == min(float(m) for m, g in grid.items() if g["recall"] >= 90)
        assert grid["1.0"]["recall"] == 100.0 and grid["1.0"]["rows"] == 3.0  # a day of three rows, all kept
        assert fusion["held_out"]["at_margin_single"] == fusion["held_out"]["grid_single"][str(fusion["margin"])]


def test_command_errors_name_the_input(tmp_path, tiny_backbone, capsys):
    tiny = ["--encoder", tiny_backbone, "--cache-dir", ""]
    assert content_proxy.main(["--locomo", str(tmp_path / "nope.json"), *tiny]) == 2
    assert "nope.json" in capsys.readouterr().err
    path = locomo_file(tmp_path)
    assert content_proxy.main(["--locomo", str(path), "--dev-samples", "conv-z", *tiny]) == 2
    assert "conv-z" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        content_proxy.main(["--locomo", str(path), "--target-recall", "1.5"])


def test_prior_weights_are_candidates(tmp_path, tiny_backbone):
    from models.dual_encoder import DualEncoder

    report = content_proxy.evaluate(str(locomo_file(tmp_path)), DualEncoder.from_backbone(tiny_backbone), ["conv-a"],
                                    ["scores", "rrf"], [1, 3, 4, 5], 10, 0.9, None, priors=[0.0, 2.0],
                                    cuts=["spread", "top"])
    assert [(c["fusion"], c["prior"], c["cut"]) for c in report["candidates"]] == [
        (f, p, c) for f in ("scores", "rrf") for p in (0.0, 2.0) for c in ("spread", "top")]
    assert all(c["development"]["n_all"] == 4 for c in report["candidates"])  # with category 5


def test_the_log_scope_ranks_every_row_of_the_conversation(tmp_path, tiny_backbone):
    from models.dual_encoder import DualEncoder

    encoder = DualEncoder.from_backbone(tiny_backbone)
    days, log = (content_proxy.evaluate(str(locomo_file(tmp_path)), encoder, ["conv-a"], ["scores"], [1, 3, 4], 10,
                                        0.9, None, scope=scope) for scope in ("days", "log"))
    assert log["scope"] == "log"
    rows = {name: r["candidates"][0]["development"]["grid_single"][1.0]["rows"] for name, r in (("days", days),
                                                                                                 ("log", log))}
    assert rows["log"] > rows["days"]  # the whole conversation, not the evidence's day
