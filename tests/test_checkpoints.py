"""Model folders complete when they appear: staged and renamed, settings last in; a folder without its
settings refuses to load instead of loading with the defaults."""

from pathlib import Path

import pytest

import train.checkpoints as checkpoints
from models.dual_encoder import DualEncoder
from retrieval.ctbls.cell_text import CellTextSettings
from retrieval.ctbls.state_tracker import CellStateTracker
from retrieval.ctbls.table_retriever import DenseTableRetriever, TableTextSettings
from train.checkpoints import latest_checkpoint, write_model, write_model_into

SETTINGS = TableTextSettings("paper", 10)


@pytest.fixture(scope="module")
def encoder(tiny_backbone):
    return DualEncoder.from_backbone(tiny_backbone, max_document_length=32)


def _fail(folder):
    raise KeyboardInterrupt("stopped mid-save")


def test_a_folder_without_its_settings_is_refused(encoder, tmp_path):
    encoder.save_pretrained(tmp_path / "encoder_only")
    with pytest.raises(FileNotFoundError, match=r"encoder_only: no table_retriever.json, so this is not a complete "
                                                r"Dense Table Retriever checkpoint.*train/dtr.py"):
        DenseTableRetriever.from_pretrained(tmp_path / "encoder_only")
    with pytest.raises(FileNotFoundError, match=r"encoder_only: no state_tracker.json.*cell state tracker"):
        CellStateTracker.from_pretrained(tmp_path / "encoder_only")
    SETTINGS.save(tmp_path / "encoder_only")  # what the message says to do, for settings one knows
    assert DenseTableRetriever.from_pretrained(tmp_path / "encoder_only").settings == SETTINGS


def test_a_model_folder_is_renamed_into_place_complete(encoder, tmp_path):
    write_model(encoder, tmp_path / "last", SETTINGS.save)
    assert DenseTableRetriever.from_pretrained(tmp_path / "last").settings == SETTINGS
    assert sorted(p.name for p in tmp_path.iterdir()) == ["last"]  # no staging folder left behind
    write_model(encoder, tmp_path / "last", CellTextSettings(row_context="row").save)  # replaces the older one
    assert CellStateTracker.from_pretrained(tmp_path / "last").settings.row_context == "row"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["last"]


def test_an_interrupted_save_leaves_no_half_folder(encoder, tmp_path):
    with pytest.raises(KeyboardInterrupt):
        write_model(encoder, tmp_path / "last", _fail)  # weights written, then stopped before the settings
    assert list(tmp_path.iterdir()) == []
    write_model(encoder, tmp_path / "last", SETTINGS.save)
    with pytest.raises(KeyboardInterrupt):
        write_model(encoder, tmp_path / "last", _fail)
    assert DenseTableRetriever.from_pretrained(tmp_path / "last").settings == SETTINGS  # the older one, whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["last"]


def test_the_run_folder_takes_the_model_settings_last(encoder, tmp_path, monkeypatch):
    root = tmp_path / "run"
    (root / "checkpoints" / "step_2").mkdir(parents=True)
    (root / "config.yaml").write_text("seed: 0\n")
    with pytest.raises(KeyboardInterrupt):  # stopped while staging: the root is untouched
        write_model_into(encoder, root, _fail)
    assert sorted(p.name for p in root.iterdir()) == ["checkpoints", "config.yaml"]
    write_model_into(encoder, root, SETTINGS.save)
    assert DenseTableRetriever.from_pretrained(root).settings == SETTINGS
    assert {"checkpoints", "config.yaml", "model.safetensors"} <= {p.name for p in root.iterdir()}
    assert not [p.name for p in root.iterdir() if p.name.startswith(".")]

    moves = []

    def replace_then_stop(src, dst):  # stopped while moving the staged files into the root
        if Path(dst).parent != root:
            return real_replace(src, dst)
        if len(moves) == 3:
            raise KeyboardInterrupt("stopped mid-move")
        moves.append(dst)
        return real_replace(src, dst)

    real_replace = checkpoints.os.replace
    monkeypatch.setattr(checkpoints.os, "replace", replace_then_stop)
    with pytest.raises(KeyboardInterrupt):
        write_model_into(encoder, root, TableTextSettings("header_rows", 5).save)
    monkeypatch.undo()
    assert moves and all(m.name not in ("dual_encoder.json", "table_retriever.json") for m in moves)
    with pytest.raises(FileNotFoundError, match="no table_retriever.json"):  # not the old settings, new weights
        DenseTableRetriever.from_pretrained(root)
    with pytest.raises(FileNotFoundError, match="no dual_encoder.json"):
        DualEncoder.from_pretrained(root)
    assert (root / "checkpoints" / "step_2").is_dir() and (root / "config.yaml").is_file()
    assert not [p.name for p in root.iterdir() if p.name.startswith(".")]


def test_a_state_being_written_is_never_the_latest(tmp_path):
    for name in ("step_2", "step_10", ".step_12.staging", "step_x"):
        (tmp_path / "checkpoints" / name).mkdir(parents=True)
    assert latest_checkpoint(tmp_path) == tmp_path / "checkpoints" / "step_10"
