"""One cache folder: every command's cache default is ``$CTBLS_CACHE_DIR`` (``runs/cache`` when unset), read when
its settings are made."""

from __future__ import annotations

from pathlib import Path

from retrieval.config import parse_command, parse_config
from retrieval.data.paths import default_cache_dir


def test_every_cache_defaults_to_one_folder(monkeypatch, tmp_path):
    from eval.locomo_temporal import LocomoTemporalArguments
    from eval.response import ResponseEvalArguments
    from eval.retrieval import RetrievalEvalArguments
    from eval.state_tracking import StateTrackingEvalArguments
    from eval.temporal import TemporalEvalConfig
    from eval.trends import TrendsEvalArguments
    from retrieval.ctbls.chat import ChatArguments
    from retrieval.llm.smollm2 import default_cache_dir as smollm2_cache
    from retrieval.memory.temporal_memory import AskArguments

    monkeypatch.delenv("CTBLS_CACHE_DIR", raising=False)
    assert default_cache_dir() == "runs/cache" and default_cache_dir("temporal") == "runs/cache/temporal"
    assert parse_config(RetrievalEvalArguments, []).cache_dir == "runs/cache"  # the figures' caches stay valid
    assert smollm2_cache() == Path("~/.cache/ctbls/smollm2-135m-instruct").expanduser()
    monkeypatch.setenv("CTBLS_CACHE_DIR", str(tmp_path))
    checkpoints = ["--dtr", "d", "--tracker", "t"]
    settings = {RetrievalEvalArguments: ([], {"cache_dir": ""}), StateTrackingEvalArguments: ([], {"cache_dir": ""}),
                TemporalEvalConfig: ([], {"cache_dir": "temporal"}),
                LocomoTemporalArguments: ([], {"cache_dir": "temporal"}),
                TrendsEvalArguments: ([], {"cache_dir": "trends"}),
                ResponseEvalArguments: (checkpoints, {"cache_dir": "", "cache": "generations.sqlite"}),
                ChatArguments: (checkpoints, {"cache_dir": "", "cache": "generations.sqlite"})}
    for cls, (argv, expected) in settings.items():
        parsed = parse_config(cls, argv)
        for name, sub in expected.items():
            assert getattr(parsed, name) == str(Path(tmp_path, sub)), (cls.__name__, name)
    _, ask = parse_command({"ask": (AskArguments, "")}, ["ask", "q", "--log", "l"])
    assert ask.cache_dir == str(tmp_path / "temporal")
    assert smollm2_cache() == tmp_path / "smollm2-135m-instruct"


def test_the_data_root_follows_its_variable(tmp_path):
    """``$CTBLS_DATA_DIR`` moves every data default; unset, the root is ../shared/data beside the repository."""
    import os
    import subprocess
    import sys

    show = ("from retrieval.data import ottqa, paths; "
            "print(paths.DATA_DIR, paths.LOCOMO_FILE, ottqa.DEFAULT_DATA_DIR, sep='|')")
    env = {k: v for k, v in os.environ.items() if k != "CTBLS_DATA_DIR"}
    moved = subprocess.run([sys.executable, "-c", show], env={**env, "CTBLS_DATA_DIR": str(tmp_path)},
                           capture_output=True, text=True, check=True).stdout.strip().split("|")
    assert moved == [str(tmp_path), str(tmp_path / "locomo" / "locomo_open.json"), str(tmp_path / "ottqa")]
    unset = subprocess.run([sys.executable, "-c", show], env=env, capture_output=True, text=True,
                           check=True).stdout.split("|")[0]
    assert unset.endswith("shared/data")
