"""The pictures: training curves (train/curves.py) and the evaluations' bar charts (eval/plots.py)."""

import numpy as np
import pytest

from eval import plots
from train.curves import plot_training, smoothed

PNG = b"\x89PNG"


def test_the_smoothed_loss_is_a_trailing_mean():
    assert smoothed([4.0, 2.0, 0.0, 2.0], window=2) == pytest.approx([4.0, 3.0, 1.0, 1.0])
    assert len(smoothed(list(np.linspace(1, 0, 101)))) == 101 and smoothed([]).size == 0


def test_training_curves_with_and_without_validation(tmp_path):
    loss = [[s, 1.0 / s] for s in range(1, 41)]
    epochs = [{"epoch": e, "step": 10 * (e + 1), "loss": 0.1, "mrr@10": 0.2 + 0.1 * e, "top1": 0.1, "top10": 0.5}
              for e in range(4)]
    assert plot_training(tmp_path / "a.png", loss, epochs, "mrr@10", "DTR").read_bytes().startswith(PNG)
    no_validation = [{"epoch": 0, "step": 40, "loss": 0.1}]
    assert plot_training(tmp_path / "b.png", loss, no_validation, "mrr@10", "x").read_bytes().startswith(PNG)
    assert plot_training(tmp_path / "c.png", [], [], "mrr@10") is None and not (tmp_path / "c.png").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.png", "b.png"]  # no partial file left


def test_grouped_bars_take_ragged_groups_and_write_whole(tmp_path):
    panels = [plots.Panel("a", {"g1": {"x": 0.5, "y": 0.7}, "g2 (a long group label)": {"x": 0.2}}, "MRR", 1.0),
              plots.Panel("b", {"g1": {"y": 30.0, "z": 40.0}}, "%", 100.0),
              plots.Panel("empty", {})]
    path = plots.grouped_bars(tmp_path / "chart.png", panels, "a title")
    assert path.read_bytes().startswith(PNG) and [p.name for p in tmp_path.iterdir()] == ["chart.png"]
    assert plots.chart_path("runs/demo/eval_retrieval.json").as_posix() == "runs/demo/eval_retrieval.png"
    assert plots.write_chart(plots.retrieval_chart, {}, None) is None  # no --output, no chart


def test_temporal_charts_show_the_rule_planner_then_the_baselines():
    methods = ["semantic@20", "rule@10", "rule/context", "semantic_meta@10", "rule", "rule@3", "semantic@10",
               "rule/rewrite", "rule [sample]", "llm_planner [sample]"]
    assert plots.temporal_series("time", methods) == [
        "rule", "rule/rewrite", "rule/context", "rule@3", "rule@10", "semantic@10", "semantic@20",
        "semantic_meta@10"]
    colours = plots.temporal_colours(plots.temporal_series("time", methods))
    assert len(set(colours.values())) == len(colours)  # every method its own colour


def test_the_demo_lists_the_pictures_it_wrote(tmp_path, capsys):
    from eval.demo import list_pictures

    for name in ("dtr/training_curves.png", "eval_retrieval.png", "trends_painting/volume.png",
                 ".eval_x.123-ab.partial.png", "dtr/README.md"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(PNG)
    listed = list_pictures(tmp_path)
    assert [p.relative_to(tmp_path).as_posix() for p in listed] == [
        "dtr/training_curves.png", "eval_retrieval.png", "trends_painting/volume.png"]  # no partial file
    assert "=== pictures (3)" in capsys.readouterr().out
