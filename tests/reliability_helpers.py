"""What the reliability tests share: running a command to its one-line error.

Imported by test modules (``from reliability_helpers import ...``; pytest puts ``tests/`` on the path).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from retrieval.data.jsonio import run_cli


def one_line_error(capsys, main: Callable, argv: list[str]) -> str:
    """The error line of ``main(argv)`` run as a command, after checking it ended with exit code 2 and no
    traceback (progress bars of the loading before it may come first)."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as stop:
        run_cli(lambda: main(argv))
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.endswith("\n"), err
    errors = [line for line in err.splitlines() if "error" in line]
    assert len(errors) == 1 and errors[0].startswith("error: "), err
    return errors[0]
