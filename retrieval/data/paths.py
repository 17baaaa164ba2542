"""Where the data lives by default: ``../shared/data`` beside the repository.

Every command takes its data paths as arguments; this is only their default. Each dataset's folder is a
sub-folder of :data:`DATA_DIR` (``ottqa/``, ``zyphra_temporal/``, ``locomo/``, ``sqa/``).
"""

from __future__ import annotations

from pathlib import Path

DATA_DIR = Path(__file__).resolve().parents[3] / "shared" / "data"
OTTQA_DIR = DATA_DIR / "ottqa"
ZYPHRA_DIR = DATA_DIR / "zyphra_temporal"
LOCOMO_FILE = DATA_DIR / "locomo" / "locomo_open.json"
SQA_DIR = DATA_DIR / "sqa"
