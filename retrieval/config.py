"""One command-line convention for every command: a dataclass of settings, a YAML file of the same shape, flags on top.

    @dataclass
    class EvalArguments:
        dtr: str | None = option(None, "DTR folder", aliases=["--checkpoint"])
        ks: list[int] = option([1, 5], "cut-offs")
        ranker: str = option("hybrid", "content ranking", choices=RANKERS)
        output: str | None = option(None, "JSON file for the results")

    args = parse_config(EvalArguments, argv, prog="python -m eval.x")   # then write_config(args) beside --output

- ``--config FILE``: a flat YAML mapping whose keys are the dataclass's fields; a key that is not one ends the
  command with ``FILE: unknown key 'x'`` (exit code 2), a value of the wrong type with the key and file named.
- Every field is a flag ``--kebab-name``; ``--snake_name`` is accepted as an alias (not shown in ``--help``), and
  so is any old spelling listed in the field's ``aliases`` (as a flag, and as a key of a config file: a renamed
  setting's old files still read). Flags override the file, the file the defaults.
- Types come from the annotations: ``bool`` (``--x``, ``--no-x``, or ``--x true|false``), ``int``, ``float``,
  ``str``, ``X | None`` (the text ``none`` or ``null`` is None), ``list[X]`` (several values after the flag).
- :func:`option` is ``dataclasses.field`` with the field's metadata as arguments: ``help``; ``choices``;
  ``aliases`` (old flag spellings); ``parse`` (a function from the text, for a value with its own syntax);
  ``positional`` (an argument without a flag); ``nargs`` (for a list: 1 makes a flag to repeat, one value each
  time); ``metavar``. A field without a default is required (from the file or a flag).
- A ``ValueError`` from the dataclass's ``__post_init__`` is the command's one-line error.
- :func:`write_config` writes the resolved settings as YAML beside the outputs: ``OUTPUT_DIR/config.yaml``, or
  ``NAME.config.yaml`` beside ``--output NAME.json``; reading it back with ``--config`` gives the same settings.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import sys
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import yaml

from retrieval.atomic import write_text

if typing.TYPE_CHECKING:
    from _typeshed import DataclassInstance
T = typing.TypeVar("T", bound="DataclassInstance")  # a command's settings: a dataclass
NONE_WORDS = ("none", "null")
TRUE_WORDS = ("true", "yes", "1")
FALSE_WORDS = ("false", "no", "0")


class ConfigError(ValueError):
    """A config file is missing, not YAML, or has an unknown key or a value of the wrong type."""


def option(default: typing.Any = dataclasses.MISSING, help: str = "", *,
           default_factory: Callable[[], typing.Any] | None = None, **metadata) -> typing.Any:
    """A setting of a command: a dataclass field whose metadata says how it is a flag.

    ``option(64, "encoder batch size")``, ``option("hybrid", "content ranking", choices=RANKERS)``,
    ``option(None, "DTR folder", aliases=["--checkpoint"])``, ``option(help="the question", positional=True)``
    (no default: required). A list or mapping default is copied for each instance. ``default_factory``
    computes the default each time the settings are made, for a default read from the environment
    (``option(help="embedding cache", default_factory=default_cache_dir)``).
    """
    meta = {"help": help, **metadata}
    if default_factory is not None:
        return dataclasses.field(default_factory=default_factory, metadata=meta)
    if isinstance(default, list | dict | set):
        return dataclasses.field(default_factory=lambda: copy.copy(default), metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


# ---- types ---------------------------------------------------------------------------------------------------
def _arms(kind: object) -> tuple | None:
    """The members of a union annotation (``int | None``), or None when ``kind`` is not a union."""
    if isinstance(kind, types.UnionType) or typing.get_origin(kind) is typing.Union:
        return typing.get_args(kind)
    return None


def _strip_none(kind: object) -> object:
    arms = _arms(kind)
    if arms is None:
        return kind
    rest = tuple(a for a in arms if a is not type(None))
    return rest[0] if len(rest) == 1 else typing.Union[rest]  # noqa: UP007  (built at run time)


def _item_kind(kind: object) -> object | None:
    """``X`` for an annotation ``list[X]`` or ``list[X] | None``; None for anything else."""
    base = _strip_none(kind)
    return (typing.get_args(base) or (str,))[0] if typing.get_origin(base) in (list, Sequence) else None


def _name(kind: typing.Any) -> str:  # an annotation: a class, a union, a generic alias
    names = {bool: "a boolean", int: "an integer", float: "a number", str: "a string", dict: "a mapping"}
    arms = _arms(kind)
    if arms:
        return " or ".join("none" if a is type(None) else _name(a) for a in arms)
    if typing.get_origin(kind) is list:
        return "a list"
    return names.get(kind, getattr(kind, "__name__", str(kind)))


def from_text(kind: object, text: str) -> object:
    """A command-line string as a value of ``kind``; ``ValueError`` saying what was expected."""
    arms = _arms(kind)
    if arms is not None:
        if type(None) in arms and text.lower() in NONE_WORDS:
            return None
        if str in arms:
            return text
        for arm in arms:
            if arm is not type(None):
                try:
                    return from_text(arm, text)
                except ValueError:
                    pass
        raise ValueError(f"expected {_name(kind)}, got {text!r}")
    if kind is bool:
        if text.lower() not in TRUE_WORDS + FALSE_WORDS:
            raise ValueError(f"expected a boolean (true or false), got {text!r}")
        return text.lower() in TRUE_WORDS
    if kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            raise ValueError(f"expected {_name(kind)}, got {text!r}") from None
    if kind in (str, object, typing.Any):
        return text
    raise ValueError(f"expected {_name(kind)}, got {text!r}")


def from_yaml(kind: object, value: object) -> object:
    """A YAML value checked against ``kind`` (ints pass as floats, numbers as strings, text is parsed)."""
    arms = _arms(kind)
    if arms is not None:
        if type(None) in arms and (value is None or isinstance(value, str) and value.lower() in NONE_WORDS):
            return None
        for arm in arms:
            if arm is not type(None):
                try:
                    return from_yaml(arm, value)
                except ValueError:
                    pass
    elif typing.get_origin(kind) is list and isinstance(value, list | tuple):
        item = (typing.get_args(kind) or (object,))[0]
        return [from_yaml(item, v) for v in value]
    elif kind is bool and isinstance(value, bool):
        return value
    elif kind is int and isinstance(value, int) and not isinstance(value, bool):
        return value
    elif kind is float and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    elif kind is str and isinstance(value, str | int | float) and not isinstance(value, bool):
        return str(value)
    elif kind is dict and isinstance(value, dict):
        return value
    elif kind not in (bool, int, float, str, dict) and typing.get_origin(kind) is not list:
        return value  # an annotation this module does not check
    if isinstance(value, str) and kind is not str:
        return from_text(kind, value)  # "none", "3e-5" (a string to YAML 1.1), "true"
    raise ValueError(f"expected {_name(kind)}, got {value!r}")


# ---- the parser ----------------------------------------------------------------------------------------------
def _flag(name: str) -> str:
    return "--" + name.lstrip("-").replace("_", "-")


def _snake(flag: str) -> str:
    return "--" + flag.lstrip("-").replace("-", "_")


def _required(f: dataclasses.Field) -> bool:
    return f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING


def _default_text(f: dataclasses.Field) -> str:
    if _required(f):
        return " (required)"
    value = f.default if f.default_factory is dataclasses.MISSING else f.default_factory()
    if value is None or value is False or value in ("", []) or len(str(value)) > 60:
        return ""
    return f" (default: {' '.join(map(str, value)) if isinstance(value, list) else value})"


class _Bool(argparse.Action):
    """``--x`` is True, ``--no-x`` False (``--x false`` is rewritten to ``--no-x`` before parsing)."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, not option_string.startswith("--no-"))


def _converter(kind: object, parse: Callable[[str], object] | None) -> Callable[[str], object]:
    def convert(text: str) -> object:
        try:
            return parse(text) if parse else from_text(kind, text)
        except (ValueError, TypeError) as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    convert.__name__ = _name(kind)
    return convert


def add_fields(parser: argparse.ArgumentParser, cls: type) -> dict[str, str]:
    """A flag per field of ``cls`` (and ``--config``); returns {boolean option string: its kebab form}."""
    parser.add_argument("--config", metavar="FILE", default=argparse.SUPPRESS,
                        help="YAML file of these settings (flat, the keys are the flags' snake_case names)")
    hints, bools = typing.get_type_hints(cls), {}
    for f in dataclasses.fields(cls):
        kind, meta = hints[f.name], f.metadata
        # argparse %-formats help strings: a literal % (a strptime format in the text) must be doubled
        help_text = (meta.get("help", "") + _default_text(f)).replace("%", "%%")
        common: dict[str, typing.Any] = {"dest": f.name, "default": argparse.SUPPRESS}
        if meta.get("positional"):
            parser.add_argument(f.name, type=_converter(kind, meta.get("parse")),
                                help=meta.get("help", "").replace("%", "%%"),
                                metavar=meta.get("metavar", f.name.upper()))
            continue
        shown = [_flag(f.name), *meta.get("aliases", ())]
        hidden = [s for s in dict.fromkeys(map(_snake, shown)) if s not in shown]
        if _strip_none(kind) is bool:
            negative = [f"--no-{s[2:]}" for s in shown + hidden]
            bools.update({flag: shown[0] for flag in shown + hidden})
            parser.add_argument(*shown, negative[0], action=_Bool, help=help_text, **common)
            if hidden or negative[1:]:
                parser.add_argument(*hidden, *negative[1:], action=_Bool, help=argparse.SUPPRESS, **common)
            continue
        item = _item_kind(kind)
        choices = meta.get("choices")
        metavar = "{" + ",".join(map(str, choices)) + "}" if choices else f.name.upper()
        options = {"type": _converter(item or kind, meta.get("parse")), "metavar": meta.get("metavar", metavar),
                   **common}
        if item is not None:
            options.update(action="extend", nargs=meta.get("nargs", "+"))
        parser.add_argument(*shown, help=help_text, **options)
        if hidden:
            parser.add_argument(*hidden, help=argparse.SUPPRESS, **options)
    return bools


def _rewrite_bools(argv: Sequence[str], bools: Mapping[str, str]) -> list[str]:
    """``--x false`` / ``--x=false`` as ``--no-x``, ``--x true`` as ``--x``, for the boolean flags."""
    out: list[str] = []
    i, argv = 0, list(argv)
    while i < len(argv):
        token = argv[i]
        if token == "--":
            return out + argv[i:]
        flag, eq, value = token.partition("=")
        if flag in bools and not eq and i + 1 < len(argv) and argv[i + 1].lower() in TRUE_WORDS + FALSE_WORDS:
            value, eq, i = argv[i + 1], "=", i + 1
        if flag in bools and eq:
            if value.lower() not in TRUE_WORDS + FALSE_WORDS:
                raise ValueError(f"argument {flag}: expected a boolean (true or false), got {value!r}")
            out.append(bools[flag] if value.lower() in TRUE_WORDS else "--no-" + bools[flag][2:])
        else:
            out.append(token)
        i += 1
    return out


def read_config(cls: type, path: str | Path) -> dict:
    """The settings in a YAML file, checked against ``cls``'s fields; :class:`ConfigError` names file and key."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"{path}: file not found")
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        raise ConfigError(f"{path}: invalid YAML{where}: {getattr(e, 'problem', None) or e}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of settings, got {type(data).__name__}")
    known = {f.name: f for f in dataclasses.fields(cls)}
    for f in dataclasses.fields(cls):  # a renamed setting's old key
        known.update({_snake(a)[2:]: f for a in f.metadata.get("aliases", ()) if _snake(a)[2:] not in known})
    unknown = [str(k) for k in data if str(k).replace("-", "_") not in known]
    if unknown:
        raise ConfigError(f"{path}: unknown key{'s' if len(unknown) > 1 else ''} "
                          + ", ".join(repr(k) for k in unknown))
    hints, values = typing.get_type_hints(cls), {}
    for key, value in data.items():
        f = known[str(key).replace("-", "_")]
        try:
            parse = f.metadata.get("parse")
            values[f.name] = parse(value) if parse and isinstance(value, str) else from_yaml(hints[f.name], value)
            _check_choice(f, values[f.name])
        except (ValueError, TypeError) as e:
            raise ConfigError(f"{path}: key {key!r}: {e}") from None
    return values


def _check_choice(f: dataclasses.Field, value: object) -> None:
    choices = f.metadata.get("choices")
    for v in value if isinstance(value, list) else [value]:
        if choices is not None and v is not None and v not in choices:
            raise ValueError(f"{v!r} is not one of {list(choices)}")


def _resolve(parser: argparse.ArgumentParser, cls: type[T], ns: argparse.Namespace) -> T:
    """The dataclass from the defaults, then the ``--config`` file, then the flags given."""
    values: dict = {}
    if getattr(ns, "config", None):
        try:
            values.update(read_config(cls, ns.config))
        except ConfigError as e:
            parser.error(str(e))
    given = {f.name: vars(ns)[f.name] for f in dataclasses.fields(cls) if f.name in vars(ns)}
    for f in dataclasses.fields(cls):
        try:
            _check_choice(f, given.get(f.name))
        except ValueError as e:
            parser.error(f"argument {_flag(f.name)}: {e}")
    values.update(given)
    missing = [_flag(f.name) for f in dataclasses.fields(cls) if _required(f) and f.name not in values]
    if missing:
        parser.error(f"the following arguments are required: {', '.join(missing)}")
    try:
        return cls(**values)
    except ValueError as e:
        parser.error(str(e))


class _Parser(argparse.ArgumentParser):
    """argparse with every error on one line (no usage block above it; ``--help`` shows the usage)."""

    def error(self, message: str) -> typing.NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def _new_parser(prog: str | None, description: str | None) -> argparse.ArgumentParser:
    return _Parser(prog=prog, description=description, allow_abbrev=False,
                   formatter_class=argparse.RawDescriptionHelpFormatter)


def _parse(parser: argparse.ArgumentParser, argv: Sequence[str] | None, bools: Mapping[str, str]):
    try:
        argv = _rewrite_bools(sys.argv[1:] if argv is None else argv, bools)
    except ValueError as e:
        parser.error(str(e))
    return parser.parse_args(argv)


def parse_config(cls: type[T], argv: Sequence[str] | None = None, *, prog: str | None = None,
                 description: str | None = None) -> T:
    """``cls`` from its defaults, ``--config FILE`` and the flags in ``argv`` (default: ``sys.argv[1:]``)."""
    parser = _new_parser(prog, description)
    return _resolve(parser, cls, _parse(parser, argv, add_fields(parser, cls)))


def parse_command(commands: Mapping[str, tuple[type, str | None]], argv: Sequence[str] | None = None, *,
                  prog: str | None = None, description: str | None = None) -> tuple[str, typing.Any]:
    """For a command with sub-commands (``ask``): {name: (dataclass, help)} -> (the name given, its settings)."""
    parser = _new_parser(prog, description)
    sub = parser.add_subparsers(dest="command", required=True, metavar="{" + ",".join(commands) + "}")
    parsers, bools = {}, {}
    for name, (cls, help_text) in commands.items():
        parsers[name] = sub.add_parser(name, help=help_text, description=help_text, allow_abbrev=False,
                                       formatter_class=argparse.RawDescriptionHelpFormatter)
        bools.update(add_fields(parsers[name], cls))
    ns = _parse(parser, argv, bools)
    return ns.command, _resolve(parsers[ns.command], commands[ns.command][0], ns)


# ---- the resolved config beside the outputs ------------------------------------------------------------------
def _plain(value: object) -> object:
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


def save_config(config: DataclassInstance, path: str | Path) -> Path:
    """``config`` (a dataclass) as YAML at ``path``, in field order (whole or not at all)."""
    return write_text(path, yaml.safe_dump(_plain(dataclasses.asdict(config)), sort_keys=False, allow_unicode=True))


def config_path(config: object) -> Path | None:
    """Where the resolved config goes: ``output_dir/config.yaml``, else ``NAME.config.yaml`` beside ``output``."""
    output_dir, output = getattr(config, "output_dir", None), getattr(config, "output", None)
    if output_dir:
        return Path(output_dir) / "config.yaml"
    return Path(output).with_name(f"{Path(output).stem}.config.yaml") if output else None


def write_config(config: DataclassInstance) -> Path | None:
    """Write the resolved config beside the command's outputs (see :func:`config_path`); None when it has none."""
    path = config_path(config)
    return save_config(config, path) if path else None
