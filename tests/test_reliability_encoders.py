"""Only an encoder loads as an encoder: a causal LM, an empty, missing or incomplete folder and truncated weights
are refused with one line naming the path, by the loaders and by the commands that take ``--encoder``,
``--baseline``, ``--dtr`` or ``--tracker``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch
from conftest import tiny_backbone_folder
from ctbls_fixtures import write_checkpoints, write_tiny_ottqa
from reliability_helpers import one_line_error

from eval import retrieval, state_tracking, temporal
from models.dual_encoder import CONFIG_NAME, DualEncoder, load_encoder
from models.encoder_folder import EncoderLoadError
from retrieval.ctbls.cell_text import CellTextSettings
from retrieval.ctbls.state_tracker import CellStateTracker


def causal_lm_folder(path: Path, kind: str = "gpt2") -> Path:
    """A 1-layer GPT-2 with its LM head (``GPT2LMHeadModel``), or a Llama base model (``LlamaModel``: the
    architecture looks harmless, the model type gives it away), with the MiniLM tokenizer."""
    from transformers import AutoTokenizer, GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaModel

    from models.packaged import default_encoder_path

    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(default_encoder_path())
    if kind == "gpt2":
        model = GPT2LMHeadModel(GPT2Config(vocab_size=tokenizer.vocab_size, n_embd=32, n_layer=1, n_head=2,
                                           n_positions=128, bos_token_id=0, eos_token_id=0))
    else:
        model = LlamaModel(LlamaConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, intermediate_size=64,
                                       num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2))
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("encoders")
    out = {"gpt2": causal_lm_folder(root / "gpt2"), "llama": causal_lm_folder(root / "llama", "llama"),
           "empty": root / "empty", "missing": root / "missing"}
    out["empty"].mkdir()
    bert = tiny_backbone_folder(root / "bert")
    out["truncated"] = root / "truncated"
    shutil.copytree(bert, out["truncated"])
    weights = out["truncated"] / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])  # a copy that was cut short
    out["no_tokenizer"] = root / "no_tokenizer"
    shutil.copytree(bert, out["no_tokenizer"])
    for name in ("tokenizer.json", "vocab.txt"):
        (out["no_tokenizer"] / name).unlink(missing_ok=True)
    return out


@pytest.mark.parametrize("kind, message", [
    ("gpt2", r"gpt2: a causal language model \(GPT2LMHeadModel\), not an encoder"),
    ("llama", r"llama: a causal language model \(model type 'llama'\), not an encoder"),
    ("empty", r"empty: an empty folder, not an encoder"),
    ("missing", r"missing: no such folder"),
    ("truncated", r"truncated/model.safetensors: the weights do not load \(.*\); the file may be truncated"),
    ("no_tokenizer", r"no_tokenizer: not a complete encoder folder: no tokenizer files"),
])
def test_a_folder_that_is_not_an_encoder_is_refused(folders, kind, message):
    with pytest.raises(EncoderLoadError, match=message):
        DualEncoder.from_backbone(str(folders[kind]))
    with pytest.raises(EncoderLoadError, match=message):
        load_encoder(str(folders[kind]))


def test_an_encoder_still_loads(tiny_backbone):
    assert load_encoder(tiny_backbone).dim == 32 and load_encoder().dim == 384  # a folder; the packaged MiniLM


def test_a_hub_name_not_in_the_cache_names_itself():
    with pytest.raises(EncoderLoadError, match=r"^runs/no-such-model: no such folder, nor a model of that name"):
        load_encoder("runs/no-such-model")


def test_a_checkpoint_with_a_causal_or_damaged_tower_is_refused(folders, tiny_backbone, tmp_path):
    lm = tmp_path / "lm_tracker"  # a causal LM dressed up as a tracker checkpoint: settings and all
    shutil.copytree(folders["gpt2"], lm)
    (lm / CONFIG_NAME).write_text('{"base_model": "gpt2"}')
    CellTextSettings().save(lm)
    with pytest.raises(EncoderLoadError, match=r"lm_tracker: a causal language model"):
        CellStateTracker.from_pretrained(lm)
    separate = tmp_path / "separate"
    DualEncoder.from_backbone(tiny_backbone, shared=False).save_pretrained(separate)
    shutil.rmtree(separate / "document_encoder")
    with pytest.raises(EncoderLoadError, match=r"separate/document_encoder: no such folder"):
        DualEncoder.from_pretrained(separate)
    (separate / CONFIG_NAME).write_text("{not json")
    with pytest.raises(EncoderLoadError, match=r"separate/dual_encoder.json: not a dual encoder's settings"):
        DualEncoder.from_pretrained(separate)


def test_the_commands_end_with_one_line_naming_the_folder(folders, tiny_backbone, tmp_path, capsys):
    data = write_tiny_ottqa(tmp_path / "ottqa")
    files = ["--tables", str(data / "tables.jsonl"), "--questions", str(data / "questions_dev.json"),
             "--cache-dir", ""]
    err = one_line_error(capsys, retrieval.main, [*files, "--baseline", str(folders["gpt2"])])
    assert f"{folders['gpt2']}: a causal language model" in err
    dtr, tracker = write_checkpoints(tiny_backbone, tmp_path / "ckpt")
    weights = dtr / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:100])  # a save that was cut short
    err = one_line_error(capsys, retrieval.main, [*files, "--dtr", str(dtr), "--baseline", tiny_backbone])
    assert f"{weights}: the weights do not load" in err
    err = one_line_error(capsys, state_tracking.main, [*files, "--tracker", str(folders["empty"]),
                                                       "--passages", str(data / "passages_dev.jsonl")])
    assert f"{folders['empty']}: no state_tracker.json" in err
    err = one_line_error(capsys, state_tracking.main, [*files, "--tracker", str(folders["missing"]),
                                                       "--passages", ""])
    assert f"{folders['missing']}: no such folder" in err


def test_temporal_and_trend_commands_refuse_a_causal_encoder(folders, tmp_path, capsys):
    from retrieval.memory import temporal_memory
    from retrieval.trends import analysis
    from tests.test_eval_temporal import zyphra_folder

    data = zyphra_folder(tmp_path / "zyphra")
    assert temporal.main(["--zyphra-dir", str(data), "--encoder", str(folders["llama"]), "--cache-dir", ""]) == 2
    assert f"{folders['llama']}: a causal language model" in capsys.readouterr().err
    log = data / "ConversationData" / "1.json"
    assert temporal_memory.main(["ask", "--log", str(log), "what did we discuss?", "--encoder",
                                 str(folders["gpt2"]), "--cache-dir", ""]) == 2
    assert f"{folders['gpt2']}: a causal language model" in capsys.readouterr().err
    assert analysis.main(["ask", "--docs", str(log), "pottery?", "--llm", "none", "--encoder", str(folders["empty"]),
                          "--cache-dir", "", "--output-dir", str(tmp_path / "out")]) == 2
    assert f"{folders['empty']}: an empty folder" in capsys.readouterr().err
