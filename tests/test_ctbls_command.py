"""``ctbls <group> <command>``: one registry (ctbls/registry.py) holds every command, and the dispatcher reads it."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ctbls import cli
from ctbls.registry import COMMANDS, GROUPS, markdown_table
from retrieval.data.jsonio import DataError

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("retrieval", "eval", "train", "benchmarks", "experiments")
# modules with a top-level main-like function that are not commands of their own
NOT_COMMANDS = {"eval.response_sqa": "eval.response --dataset sqa (main_sqa), not a command of its own"}


def _modules_with_main() -> set[str]:
    found = set()
    for pkg in PACKAGES:
        for path in (REPO / pkg).rglob("*.py"):
            if re.search(r"^def (main|cli)\w*\(", path.read_text(encoding="utf-8"), re.M):
                found.add(".".join(path.relative_to(REPO).with_suffix("").parts))
    return found


def test_every_module_with_a_main_is_a_command():
    """A command cannot be forgotten: a new module with a main fails here until the registry names it."""
    registered = {m for c in COMMANDS for m in c.modules}
    missing = _modules_with_main() - registered - set(NOT_COMMANDS)
    assert not missing, f"add these to ctbls/registry.py (or to NOT_COMMANDS, saying why): {sorted(missing)}"
    for c in COMMANDS:
        for target in c.targets:
            module, _, function = target.partition(":")
            assert callable(getattr(importlib.import_module(module), function)), target


def test_registry_is_one_table_of_unique_commands():
    words = [c.words for c in COMMANDS]
    assert len(words) == len(set(words))
    assert set(GROUPS) == {c.group for c in COMMANDS}
    for c in COMMANDS:
        assert re.fullmatch(r"[a-z]+(-[a-z]+)*", c.group) and re.fullmatch(r"([a-z]+(-[a-z]+)*)?", c.name)
        assert bool(c.target) != bool(c.by_flag), c.words
        others = [o for o in COMMANDS if o.group == c.group and o is not c]
        assert c.name or not others, f"{c.words}: a group that is a command has no other commands"


def test_the_page_shows_the_registry():
    page = (REPO / "docs" / "command_line.md").read_text(encoding="utf-8")
    assert markdown_table() in page, "docs/command_line.md: paste ctbls.registry.markdown_table()'s output"


def test_listing_names_every_group_and_command(capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["--help"])
    out = capsys.readouterr().out
    assert stop.value.code == 0 and "usage: ctbls <group> <command>" in out
    for c in COMMANDS:
        assert re.search(rf"^{c.group}\s", out, re.M) and (not c.name or re.search(rf"^  {c.name}\s", out, re.M))
    with pytest.raises(SystemExit) as stop:
        cli.main(["eval", "--help"])
    out = capsys.readouterr().out
    assert stop.value.code == 0 and "  user-trial " in out and "  dtr " not in out
    with pytest.raises(SystemExit) as stop:
        cli.main([])  # no command: the listing, as a usage error
    assert stop.value.code == 2 and "usage: ctbls" in capsys.readouterr().err


def _one_error_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and ": error: " in err, err
    return err


@pytest.mark.parametrize("argv, named", [
    (["trian", "dtr"], ["unknown group 'trian'", "train, eval, memory"]),
    (["train", "dtx"], ["ctbls train: error: unknown command 'dtx'", "dtr, tracker, dialogue-retriever"]),
    (["memory", "ask", "When?"], ["ctbls memory ask: error:", "--log FILE or --memory DIR"]),
    (["memory", "ask", "--log", "a.json", "--memory=m", "When?"], ["--log and --memory"]),
])
def test_unknown_or_ambiguous_is_one_line(argv, named, capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(argv)
    err = _one_error_line(capsys)
    assert stop.value.code == 2 and all(n in err for n in named), err


def test_memory_ask_goes_where_its_flag_says(tmp_path, capsys):
    ask = next(c for c in COMMANDS if c.words == "ctbls memory ask")
    file_based, living = (t for _, t in ask.by_flag)
    assert cli.resolve(["memory", "ask", "--log", "c.json", "Q?"])[1:] == (file_based, ["ask", "--log", "c.json", "Q?"])
    assert cli.resolve(["memory", "ask", "--memory=m", "Q?"])[1:] == (living, ["ask", "--memory=m", "Q?"])
    cfg = tmp_path / "ask.yaml"
    cfg.write_text("memory: runs/m\n")
    assert cli.resolve(["memory", "ask", "--config", str(cfg), "Q?"])[1] == living
    with pytest.raises(SystemExit) as stop:
        cli.main(["memory", "ask", "--help"])
    out = capsys.readouterr().out
    assert stop.value.code == 0 and "--log FILE" in out and "--memory DIR" in out


def test_a_command_gets_its_subcommand_and_arguments(monkeypatch, capsys):
    calls = []

    def fake(target):
        def main(argv):
            calls.append((target, argv))
            if "--bad" in argv:
                raise DataError("x.json: file not found")
            return {"a": 1} if target.startswith("eval.") else 3
        return main

    monkeypatch.setattr(cli, "load", fake)
    assert cli.main(["memory", "chat", "--memory", "m"]) == 3
    assert calls[-1] == ("retrieval.memory.live:main", ["chat", "--memory", "m"])
    assert cli.main(["serve", "--port", "1"]) == 3 and calls[-1][1] == ["serve", "--port", "1"]
    assert cli.main(["eval", "retrieval", "--dtr", "d"]) == 0  # a command that returns its results: exit code 0
    assert calls[-1] == ("eval.retrieval:main", ["--dtr", "d"])
    with pytest.raises(SystemExit) as stop:  # bad input: one line, exit code 2
        cli.main(["data", "export", "--bad"])
    assert stop.value.code == 2 and capsys.readouterr().err == "error: x.json: file not found\n"


def test_old_console_scripts_are_registered_commands():
    """``ctbls`` is the command; the old ``ctbls-*`` scripts (kept one release) run registered commands' modules."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts.pop("ctbls") == "ctbls.cli:main"
    registered = {m for c in COMMANDS for m in c.modules}
    for name, target in scripts.items():
        module, _, function = target.partition(":")
        assert name.startswith("ctbls-") and module in registered, name
        assert callable(getattr(importlib.import_module(module), function)), name


def test_installed_entry_point_runs_and_imports_no_command():
    script = Path(sys.executable).with_name("ctbls")
    assert script.exists(), "no ctbls script: pip install -e . (make setup does)"
    done = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "memory" in done.stdout and "experiments" in done.stdout, done.stderr
    probe = "import sys; from ctbls.cli import listing; listing(); print(' '.join(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, cwd=REPO)
    loaded = {m.split(".")[0] for m in done.stdout.split()}
    assert loaded and not loaded & {"torch", "pandas", "train", "eval", "retrieval"}, done.stderr  # --help is fast


def test_module_help_lists_its_subcommands(capsys):
    for module in ("retrieval.memory.temporal_memory", "retrieval.trends.analysis", "retrieval.memory.live"):
        with pytest.raises(SystemExit) as stop:
            importlib.import_module(module).main(["--help"])
        assert stop.value.code == 0 and "ask" in capsys.readouterr().out


def test_page_examples_parse_through_the_registry():
    """tests/readme_examples.py's parse mode reads ``ctbls GROUP COMMAND ...`` as the registry dispatches it."""
    import readme_examples as rx

    argv = rx.parse_argv(rx.Example("bash", 1, 'CTBLS_ADMIN_KEY=k ctbls memory ask --memory m "When?" [--json]'))
    assert argv[3:] == ["retrieval.memory.live", "ask", "--memory", "m", "When?"]
    argv = rx.parse_argv(rx.Example("bash", 1, "ctbls train dtr --config configs/dtr.yaml"))
    assert argv[3:] == ["train.dtr", "--config", "configs/dtr.yaml"]
