"""One command-line convention (retrieval/config.py): every command's flags, config file and resolved settings."""

from __future__ import annotations

import dataclasses
import importlib
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from ctbls.cli import main as ctbls
from ctbls.registry import COMMANDS
from retrieval import config
from retrieval.config import parse_command, parse_config, read_config, write_config
from retrieval.data.paths import DATA_DIR
from retrieval.llm import llm_spec

REPO = Path(__file__).resolve().parents[1]


def _help_argvs() -> list:
    """``ctbls GROUP [COMMAND] --help`` for every command of the registry (each of a command's flag choices)."""
    out = []
    for c in COMMANDS:
        words = [c.group, *([c.name] if c.name else [])]
        for flag in [spec.split()[0] for spec, _ in c.by_flag] or [None]:
            argv = [*words, *([flag, "x"] if flag else []), "--help"]
            out.append(pytest.param(argv, id=" ".join(argv[:-1])))
    return out


HELP_ARGVS = _help_argvs()


def run_help(argv: list[str], capsys) -> tuple[str, list[tuple[object, type]]]:
    """``ctbls ARGV`` in this process: what it printed, and each (parser, settings dataclass) it built."""
    built, real = [], config.add_fields

    def recording(parser, cls):
        built.append((parser, cls))
        return real(parser, cls)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(config, "add_fields", recording)
        with pytest.raises(SystemExit) as stop:
            ctbls(argv)
    assert stop.value.code == 0, capsys.readouterr().err
    return capsys.readouterr().out, built


def _settings(module: str, name: str) -> type:
    return getattr(importlib.import_module(module), name)


@pytest.mark.parametrize("argv", HELP_ARGVS)
def test_every_command_has_help(argv, capsys):
    text, built = run_help(argv, capsys)
    assert "--config FILE" in text and built
    for parser, cls in built:  # every sub-command's parser, not only the one printed
        shown = parser.format_help()
        for f in dataclasses.fields(cls):
            assert f.metadata.get("help"), f"{cls.__name__}.{f.name} has no help text"
            if not f.metadata.get("positional"):
                assert "--" + f.name.replace("_", "-") in shown  # shown in kebab-case ...
                assert "--" + f.name + " " not in shown or "_" not in f.name  # ... the snake_case alias is not


def test_data_dir_is_the_data_root_everywhere(capsys):
    """``--data-dir`` means one thing: the data root (retrieval.data.paths.DATA_DIR, $CTBLS_DATA_DIR); a flag for
    one dataset's folder names the dataset (--zyphra-dir), and no other setting defaults to the root."""
    checked = set()
    for param in HELP_ARGVS:
        for _, cls in run_help(param.values[0], capsys)[1]:
            for f in dataclasses.fields(cls):
                default = f.default if f.default_factory is dataclasses.MISSING else f.default_factory()
                if f.name == "data_dir":
                    assert f.metadata["help"].startswith("the data root, holding "), cls.__name__
                    assert default == str(DATA_DIR), cls.__name__
                    checked.add(cls.__name__)
                else:
                    assert default != str(DATA_DIR), f"{cls.__name__}.{f.name} is the data root: name it data_dir"
    assert {"DTRArguments", "ResponseEvalArguments", "ExportArguments", "TrendsEvalArguments"} <= checked


def test_no_command_builds_its_own_parser():
    """One mechanism: argparse appears only in retrieval/config.py."""
    users = [str(p.relative_to(REPO)) for pkg in ("models", "retrieval", "train", "eval", "benchmarks", "experiments",
                                                  "ctbls")
             for p in (REPO / pkg).rglob("*.py") if "import argparse" in p.read_text()]
    assert users == ["retrieval/config.py"]


# ---- spellings -------------------------------------------------------------------------------------------------
SAME = [  # (module, dataclass, the new spelling, an old or snake_case one)
    ("train.dtr", "DTRArguments",
     ["--output-dir", "x", "--num-train-epochs", "2", "--shared-encoder", "false", "--max-train-steps", "none"],
     ["--output_dir", "x", "--num_train_epochs", "2", "--shared_encoder", "false", "--max_train_steps", "none"]),
    ("train.dtr", "DTRArguments", ["--data-dir", "d", "--no-symmetric-loss"],
     ["--data_dir", "d", "--symmetric_loss=0"]),
    ("eval.retrieval", "RetrievalEvalArguments", ["--dtr", "runs/dtr", "--cache-dir", ""],
     ["--checkpoint", "runs/dtr", "--cache_dir", ""]),
    ("eval.state_tracking", "StateTrackingEvalArguments", ["--tracker", "t", "--history-turns", "all"],
     ["--checkpoint", "t", "--history_turns", "all"]),
    ("eval.locomo_temporal", "LocomoTemporalArguments", ["--locomo", "f.json", "--ks", "1", "2"],
     ["--data", "f.json", "--ks", "1", "2"]),
    ("eval.trends", "TrendsEvalArguments", ["--data-dir", "d", "--global-k", "5"], ["--data", "d", "--global_k", "5"]),
    ("eval.temporal", "TemporalEvalConfig", ["--no-turns", "--content-margin", "none", "--semantic-ks", "1", "2"],
     ["--turns", "false", "--content_margin", "none", "--semantic_ks", "1", "2"]),
    ("retrieval.llm.speed", "SpeedArguments", ["--llm", "openai:m", "--fresh-conversion"],
     ["--spec", "openai:m", "--fresh_conversion", "true"]),
    ("benchmarks.temporal_calls", "TemporalCallsArguments", ["--n-questions", "3", "--answer-rows", "2"],
     ["--questions", "3", "--answer_rows", "2"]),
    # renamed so that --data-dir is the data root everywhere: the old spellings still parse
    ("eval.temporal", "TemporalEvalConfig", ["--zyphra-dir", "z"], ["--data-dir", "z"]),
    ("experiments.temporal_bank", "BankConfig", ["--zyphra-dir", "z"], ["--data-dir", "z"]),
    ("eval.response", "ResponseEvalArguments", ["--tracker", "t", "--dataset", "sqa", "--data-dir", "d"],
     ["--tracker", "t", "--dataset", "sqa", "--sqa-data", "d"]),
]


@pytest.mark.parametrize("module, settings, new, old", SAME, ids=[f"{s[0]}:{s[2][0]}" for s in SAME])
def test_kebab_snake_and_old_spellings_parse_alike(module, settings, new, old):
    cls = _settings(module, settings)
    assert parse_config(cls, new) == parse_config(cls, old)


def test_a_renamed_settings_old_key_reads_in_a_config_file(tmp_path):
    from eval.response import ResponseEvalArguments
    from eval.temporal import TemporalEvalConfig

    old = tmp_path / "old.yaml"
    old.write_text("data_dir: z\n")  # eval.temporal's Zyphra folder before it was --zyphra-dir
    assert parse_config(TemporalEvalConfig, ["--config", str(old)]).zyphra_dir == "z"
    old.write_text("sqa_data: d\ntracker: t\ndataset: sqa\n")
    assert parse_config(ResponseEvalArguments, ["--config", str(old)]).data_dir == "d"


def test_subcommand_spellings_and_repeated_flags():
    from retrieval.memory.temporal_memory import AskArguments
    from retrieval.trends.analysis import TrendAskArguments

    commands = {"ask": (TrendAskArguments, "")}
    base = ["ask", "Is it growing?", "--docs", "d.csv"]
    new = parse_command(commands, [*base, "--output-dir", "o", "--n-samples", "4", "--threshold-value", "0.5",
                                   "--threshold", "fixed"])
    old = parse_command(commands, [*base, "--out", "o", "--samples", "4", "--threshold_value", "0.5",
                                   "--threshold", "fixed"])
    assert new == old and new[1].output_dir == "o" and new[1].trend_config().n_samples == 4
    _, ask = parse_command({"ask": (AskArguments, "")},
                           ["ask", "--log", "l.json", "--history", "one", "--json", "--history", "two", "Q?"])
    assert ask.history == ["one", "two"] and ask.question == "Q?" and ask.json is True


# ---- errors: one line, exit code 2 --------------------------------------------------------------------------
def _one_error_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.endswith("\n") and ": error: " in err, err  # no usage block, no traceback
    return err


@pytest.mark.parametrize("module, config, argv", [
    ("eval.temporal", "configs/temporal.yaml", []),
    ("train.dtr", "configs/dtr.yaml", []),
    ("retrieval.trends.analysis", "configs/trends.yaml", ["ask", "q", "--docs", "d", "--output-dir", "o"]),
])
def test_unknown_config_key_is_one_line_naming_key_and_file(module, config, argv, tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text((REPO / config).read_text() + "bogus_key: 1\n")
    with pytest.raises(SystemExit) as stop:
        importlib.import_module(module).main([*argv, "--config", str(bad)])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("\n") == 1
    assert f"{bad}: unknown key 'bogus_key'" in err


def test_old_eval_section_shape_is_an_unknown_key(tmp_path, capsys):
    from eval.temporal import main

    old = tmp_path / "old.yaml"
    old.write_text("eval:\n  content_k: 3\n")
    with pytest.raises(SystemExit) as stop:
        main(["--config", str(old)])
    assert stop.value.code == 2 and f"{old}: unknown key 'eval'" in _one_error_line(capsys)


def test_wrong_types_name_the_flag_or_the_key(tmp_path, capsys):
    from eval.temporal import TemporalEvalConfig

    with pytest.raises(SystemExit) as stop:
        parse_config(TemporalEvalConfig, ["--content-k", "many"])
    assert stop.value.code == 2 and "--content-k" in _one_error_line(capsys)
    with pytest.raises(SystemExit):
        parse_config(TemporalEvalConfig, ["--ranker", "psychic"])
    assert "--ranker" in _one_error_line(capsys)
    with pytest.raises(SystemExit):
        parse_config(TemporalEvalConfig, ["--turns=maybe"])
    assert "--turns" in _one_error_line(capsys)
    with pytest.raises(SystemExit):
        parse_config(TemporalEvalConfig, ["--content_kk", "3"])
    assert "unrecognized arguments: --content_kk" in _one_error_line(capsys)
    cfg = tmp_path / "c.yaml"
    for text, key in (("content_k: many\n", "content_k"), ("semantic_ks: 10\n", "semantic_ks"),
                      ("ranker: psychic\n", "ranker"), ("turns: 3\n", "turns")):
        cfg.write_text(text)
        with pytest.raises(SystemExit) as stop:
            parse_config(TemporalEvalConfig, ["--config", str(cfg)])
        assert stop.value.code == 2 and f"{cfg}: key '{key}'" in _one_error_line(capsys)


def test_missing_config_file_and_required_flags(tmp_path, capsys):
    from retrieval.ctbls.chat import ChatArguments

    with pytest.raises(SystemExit) as stop:
        parse_config(ChatArguments, ["--config", str(tmp_path / "nope.yaml")])
    assert stop.value.code == 2 and "nope.yaml: file not found" in _one_error_line(capsys)
    with pytest.raises(SystemExit):
        parse_config(ChatArguments, ["--dtr", "d"])
    assert "required: --tracker" in _one_error_line(capsys)
    with pytest.raises(SystemExit):  # __post_init__'s check is the command's error line
        parse_config(ChatArguments, ["--dtr", "d", "--tracker", "t", "--once", "q", "--show-turns", "2"])
    assert "--once and --show-turns" in _one_error_line(capsys)
    cfg = tmp_path / "chat.yaml"
    cfg.write_text("dtr: runs/dtr\ntracker: runs/tracker\nk: 5\n")  # required fields may come from the file
    assert parse_config(ChatArguments, ["--config", str(cfg), "--k", "2"]).k == 2


# ---- typed values and the resolved config --------------------------------------------------------------------
@dataclass
class Example:
    """A command's settings."""

    output_dir: str | None = field(default=None, metadata={"help": "results"})
    output: str | None = field(default=None, metadata={"help": "one result file"})
    rate: float = field(default=0.5, metadata={"help": "a number"})
    ks: list[int] = field(default_factory=lambda: [1, 5], metadata={"help": "several numbers"})
    limit: int | None = field(default=3, metadata={"help": "optional"})
    flag: bool = field(default=False, metadata={"help": "a switch"})
    llm: str | dict | None = field(default=None, metadata={"help": "a spec"})


def test_yaml_values_are_typed_and_flags_override(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("rate: 3e-5\nks: [2, 3]\nlimit: none\nflag: true\nllm: {backend: openai, model: m}\n")
    assert read_config(Example, cfg) == {"rate": 3e-5, "ks": [2, 3], "limit": None, "flag": True,
                                         "llm": {"backend": "openai", "model": "m"}}
    got = parse_config(Example, ["--config", str(cfg), "--ks", "7", "--flag", "false", "--rate", "1"])
    assert got == Example(rate=1.0, ks=[7], limit=None, flag=False, llm={"backend": "openai", "model": "m"})
    assert parse_config(Example, ["--flag"]).flag is True and parse_config(Example, ["--flag=yes"]).flag is True


def test_resolved_config_goes_beside_the_outputs_and_reads_back(tmp_path):
    folder = Example(output_dir=str(tmp_path / "run"), ks=[4], limit=None)
    assert write_config(folder) == tmp_path / "run" / "config.yaml"
    assert parse_config(Example, ["--config", str(tmp_path / "run" / "config.yaml")]) == folder
    one_file = Example(output=str(tmp_path / "eval" / "report.json"), flag=True)
    assert write_config(one_file) == tmp_path / "eval" / "report.config.yaml"
    assert yaml.safe_load((tmp_path / "eval" / "report.config.yaml").read_text())["flag"] is True
    assert write_config(Example()) is None  # no outputs, nothing written


def test_llm_spec_is_read_one_way():
    assert llm_spec(None) is None and llm_spec("none") is None and llm_spec("") is None
    assert llm_spec("smollm2") == {"backend": "smollm2"}
    assert llm_spec("openai:gpt-x") == {"backend": "openai", "model": "gpt-x"}
    assert llm_spec('{"backend": "openai", "model": "m"}') == {"backend": "openai", "model": "m"}
    assert llm_spec({"backend": "smollm2", "cache": "c"}) == {"backend": "smollm2", "cache": "c"}
    with pytest.raises(ValueError, match="invalid JSON"):
        llm_spec('{"backend": ')


def test_demo_commands_parse(monkeypatch, capsys, tmp_path):
    """Every command `make demo` runs is accepted by that command's parser (nothing is run)."""
    from eval import demo

    ran = []
    monkeypatch.chdir(REPO)  # the demo names configs/*.yaml from the repository root
    # not the checkout's runs/demo, which a real demo may have filled
    monkeypatch.setattr(demo, "RUNS", tmp_path / "demo")
    monkeypatch.setattr(demo.subprocess, "run", lambda cmd, check: ran.append(cmd))
    with pytest.raises(FileNotFoundError):  # the summary reads outputs the stages did not write
        demo.main(["--force"])
    registered = {m for c in COMMANDS for m in c.modules}
    for cmd in ran:
        # python -m module ..., or python -m accelerate.commands.launch [its options] -m train.x ...: the last -m
        at = max(i for i, part in enumerate(cmd) if part == "-m")
        assert cmd[at + 1] in registered, cmd
        assert parses(cmd[at + 1], cmd[at + 2:], monkeypatch), cmd
    assert len(ran) == 15


class Parsed(Exception):
    pass


def parses(module_name: str, argv: list[str], monkeypatch) -> bool:
    """Whether ``module_name``'s main accepts ``argv``: it stops right after its parser (nothing runs)."""
    module = importlib.import_module(module_name)
    for name in ("parse_config", "parse_command"):
        if hasattr(module, name):
            def parsed(*args, _real=getattr(module, name), **kwargs):
                _real(*args, **kwargs)
                raise Parsed
            monkeypatch.setattr(module, name, parsed)
    try:
        module.main(argv)
    except Parsed:
        return True
    return False


def test_the_shipped_trends_config_reads_as_the_defaults_it_states():
    from retrieval.config import parse_command
    from retrieval.trends.analysis import TrendAskArguments, TrendConfig

    _, args = parse_command({"ask": (TrendAskArguments, "")}, ["ask", "q", "--docs", "d", "--output-dir", "o",
                                                                "--config", str(REPO / "configs/trends.yaml")])
    config, default = args.trend_config(), TrendConfig()
    assert (config.threshold, config.topic_model, config.relevance) == (default.threshold, default.topic_model,
                                                                         default.relevance) == ("auto", "packaged",
                                                                                                "packaged")
