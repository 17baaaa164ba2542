"""JSON and JSON-lines reading with errors that name the file and line."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from models.encoder_folder import EncoderLoadError


class DataError(ValueError):
    """Input data is missing or malformed; the message names the file and place."""


# Bad input a command reports in one line: data (DataError), a path that is not there, a model that is not an
# encoder or does not load (models/ raises its own error: it sits below retrieval/ and cannot raise DataError).
INPUT_ERRORS = (DataError, FileNotFoundError, EncoderLoadError)


def not_utf8(where: str | Path, e: UnicodeDecodeError) -> DataError:
    """The error for a file that is not UTF-8 text (``where``: the file, or the file and line)."""
    return DataError(f"{where}: not UTF-8 text (byte {e.object[e.start]:#04x} at {e.start} of what was read); save it "
                     "as UTF-8")


def read_json(path: str | Path) -> object:
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: file not found")
    try:
        with path.open(encoding="utf-8") as f:
            return json.load(f)
    except json.JSONDecodeError as e:
        raise DataError(f"{path}: invalid JSON at line {e.lineno}, column {e.colno}: {e.msg}") from e
    except UnicodeDecodeError as e:
        raise not_utf8(path, e) from e


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, dict]]:
    """Yield (line number, object) for each non-blank line of a JSON-lines file."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: file not found")
    with path.open("rb") as f:  # decoded line by line, so that a line that is not UTF-8 is named
        for lineno, raw in enumerate(f, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise not_utf8(f"{path}:{lineno}", e) from e
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                raise DataError(f"{path}:{lineno}: invalid JSON: {e.msg}") from e
            if not isinstance(obj, dict):
                raise DataError(f"{path}:{lineno}: expected a JSON object, got {type(obj).__name__}")
            yield lineno, obj


def run_cli(main: Callable[[], object]) -> int:
    """Run a command; bad input ends it with one clear line (exit code 2) instead of a traceback.

    Returns the exit code: ``main``'s own when it returns an int, else 0 (a command that returns its results).
    """
    try:
        result = main()
    except INPUT_ERRORS as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
    return result if isinstance(result, int) and not isinstance(result, bool) else 0

