"""``ctbls <group> <command> [options]``: the commands of :mod:`ctbls.registry` behind one name.

    ctbls                                  # the groups and their commands
    ctbls eval --help                      # one group's commands
    ctbls eval retrieval --help            # a command's options (its own parser, retrieval/config.py)
    ctbls memory ask --log chat.jsonl "When did we last talk about the dog?"

A command runs as its module's ``main(argv)`` with the module's sub-command first (``ctbls memory chat ...`` is
``python -m retrieval.memory.live chat ...``). Bad input ends it with one line and exit code 2, as does an
unknown group or command.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from ctbls.registry import COMMANDS, GROUPS, Command, group_commands, load, python_m

HELP = ("-h", "--help")


def error(prog: str, message: str) -> SystemExit:
    """One line on stderr, as every command's parser ends (exit code 2); raise what it returns."""
    sys.stderr.write(f"{prog}: error: {message}\n")
    return SystemExit(2)


def listing(group: str | None = None) -> str:
    """The groups and their commands (``ctbls --help``), or one group's (``ctbls GROUP --help``)."""
    lines = ["usage: ctbls <group> <command> [options]", "",
             "  ctbls <group> --help             a group's commands",
             "  ctbls <group> <command> --help   a command's options (each also runs as python -m <module>)", ""]
    width = max(len(c.name) for c in COMMANDS) + 2
    for name, about in GROUPS.items():
        if group not in (None, name):
            continue
        lines.append(f"{name:<{width}}{about}")
        lines += [f"  {c.name:<{width}}{c.summary}" for c in group_commands(name) if c.name]
    return "\n".join(lines)


def _flag_given(argv: Sequence[str], flag: str) -> bool:
    words = list(argv)[:list(argv).index("--")] if "--" in argv else argv
    return any(w == flag or w.startswith(flag + "=") for w in words)


def _config_keys(argv: Sequence[str], words: str) -> set[str]:
    """The keys of a ``--config FILE`` among ``argv`` (none when it is absent); a file that cannot be read or is not
    YAML ends ``words`` (the command) with one line saying so."""
    path = next((argv[i + 1] for i, w in enumerate(argv[:-1]) if w == "--config"), None)
    path = path or next((w.partition("=")[2] for w in argv if w.startswith("--config=")), None)
    if path is None:
        return set()
    import yaml

    try:
        with open(path, encoding="utf-8") as f:
            data = yaml.safe_load(f)
    except OSError as e:
        raise error(words, f"--config {path}: {e.strerror or e}") from e
    except (yaml.YAMLError, UnicodeDecodeError) as e:
        where = getattr(e, "problem_mark", None)
        raise error(words, f"--config {path}: invalid YAML" + (f" at line {where.line + 1}" if where else "")) from e
    return {str(k).replace("_", "-") for k in data} if isinstance(data, dict) else set()


def choose_target(command: Command, argv: Sequence[str]) -> str:
    """The ``module:function`` that runs ``command`` on ``argv``: its one target, or the one its flag picks."""
    if not command.by_flag:
        return command.target
    spelled = [spec for spec, _ in command.by_flag]  # "--log FILE"
    flags = [spec.split()[0] for spec in spelled]
    configured = _config_keys(argv, command.words)
    given = [f for f in flags if _flag_given(argv, f)] or [f for f in flags if f[2:] in configured]
    if len(given) == 1:
        return command.by_flag[flags.index(given[0])][1]
    if not given and any(w in HELP for w in argv):
        print(f"usage: {command.words} ({' | '.join(spelled)}) [options]\n\n{command.summary}; the options of each:")
        width = max(map(len, spelled)) + 2
        for spec, target in command.by_flag:
            print(f"  {command.words} {spec:<{width}}--help   ({python_m(target, command.prefix)})")
        raise SystemExit(0)
    raise error(command.words, f"give one of {' or '.join(spelled)}" if not given
                else f"{' and '.join(given)} are two ways to name the memory; give one")


def resolve(argv: Sequence[str]) -> tuple[Command, str, list[str]]:
    """``ctbls``'s arguments -> (the command, the ``module:function`` to call, the arguments to call it with).

    Prints the listing and exits for ``--help`` or a missing command; one error line (exit 2) for an unknown one.
    """
    argv = list(argv)
    if not argv or argv[0] in HELP:
        print(listing(), file=sys.stdout if argv else sys.stderr)
        raise SystemExit(0 if argv else 2)
    group, rest = argv[0], argv[1:]
    if group not in GROUPS:
        raise error("ctbls", f"unknown group {group!r} (choose from {', '.join(GROUPS)})")
    commands = group_commands(group)
    if commands[0].name:
        if not rest or rest[0] in HELP:
            print(listing(group), file=sys.stdout if rest else sys.stderr)
            raise SystemExit(0 if rest else 2)
        command = next((c for c in commands if c.name == rest[0]), None)
        if command is None:
            raise error(f"ctbls {group}", f"unknown command {rest[0]!r} (choose from "
                        f"{', '.join(c.name for c in commands)})")
        rest = rest[1:]
    else:
        command = commands[0]
    return command, choose_target(command, rest), [*command.prefix, *rest]


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``ctbls GROUP COMMAND ARGS`` (default: ``sys.argv[1:]``); returns the exit code."""
    _, target, args = resolve(sys.argv[1:] if argv is None else argv)
    function = load(target)

    from retrieval.data.jsonio import run_cli

    return run_cli(lambda: function(args))
