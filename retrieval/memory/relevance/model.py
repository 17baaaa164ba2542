"""The relevance model: a logistic regression over :data:`~retrieval.memory.relevance.features.FEATURES` (and, at
``degree`` 2, every product of two of them), whose output is the probability that a candidate row is evidence for the
question, and the cut on that probability.

    model = RelevanceModel.load("runs/memory_relevance")          # a folder: relevance.json and a model card
    p = model.probabilities(x)                                     # (n,) in [0, 1]
    model.save("runs/memory_relevance_copy")

Why not a cross-encoder: one that reads (question, utterance with its turn) pairs, MiniLM-L6 at 128 tokens, costs
about 20 ms per pair on one CPU thread here (600 ms for the 30 candidates of one question; 230 ms cut to two layers:
``python -m benchmarks.relevance_cost``), ten to twenty times the 30 ms a question may add. The first stage's
scores, the row's facts and its neighbours' scores cost under a millisecond per question, and a linear model over
them is calibrated by its loss (a probability, so the cut is a probability too) and trains in seconds, so every
choice can be made inside folds. The folder is plain JSON (no pickle): it loads anywhere numpy does.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import ClassVar

import numpy as np

from retrieval.atomic import write_json, write_text
from retrieval.data.jsonio import DataError, read_json
from retrieval.memory.relevance.features import CANDIDATES, FEATURES

MODEL_FILE = "relevance.json"
CUT_RULES = ("expected_f2", "threshold")
DEGREES = (1, 2)  # the features alone; also every product of two (a quadratic model: "a high dense score counts
# for more when the row states a time", without a hand-made interaction)
FORMAT = 1


def expanded(x: np.ndarray, degree: int) -> np.ndarray:
    """The model's inputs from rows of features ``x`` (n, f): ``x`` itself at degree 1; at degree 2 also
    ``x[:, i] * x[:, j]`` for every i <= j, row-major (f + f (f + 1) / 2 columns)."""
    if degree == 1:
        return x
    i, j = np.triu_indices(x.shape[1])
    return np.concatenate([x, x[:, i] * x[:, j]], axis=1)


def input_names(features: tuple[str, ...], degree: int) -> list[str]:
    """The name of each column of :func:`expanded` ("a*b" for a product)."""
    if degree == 1:
        return list(features)
    i, j = np.triu_indices(len(features))
    return [*features, *(f"{features[a]}*{features[b]}" for a, b in zip(i, j))]


@dataclass
class RelevanceModel:
    """Standardisation, weights and intercept of the logistic regression; ``threshold``: the probability a row must
    reach to be returned when the plan asks for a cut (chosen inside the training folds); ``training``: what it was
    fitted on and the figures of its inner folds; ``degree``: the inputs (:func:`expanded`), chosen inside the
    training folds with the L2 strength."""

    mean: list[float]
    scale: list[float]
    coef: list[float]
    intercept: float
    threshold: float
    cut: str = "expected_f2"  # how many rows a cut keeps: one of CUT_RULES (chosen inside the training folds)
    features: tuple[str, ...] = FEATURES
    candidates: int = CANDIDATES
    training: dict = field(default_factory=dict)
    degree: int = 1
    # what a subclass over other features changes: the features it reads, its file, the command that trains it
    FEATURE_NAMES: ClassVar[tuple[str, ...]] = FEATURES
    FILE: ClassVar[str] = MODEL_FILE
    TRAIN: ClassVar[str] = "python -m train.memory_relevance"

    def __post_init__(self):
        if self.degree not in DEGREES:
            raise DataError(f"relevance model: degree {self.degree!r} is not one of {DEGREES}")
        n = len(input_names(tuple(self.features), self.degree))
        if tuple(self.features) != self.FEATURE_NAMES:
            raise DataError(f"relevance model: features {list(self.features)} are not this version's "
                            f"{list(self.FEATURE_NAMES)}; retrain it ({self.TRAIN})")
        if not (len(self.mean) == len(self.scale) == len(self.coef) == n):
            raise DataError(f"relevance model: mean, scale and coef must each have {n} values (degree {self.degree})")
        if not 0.0 <= self.threshold <= 1.0:
            raise DataError(f"relevance model: threshold {self.threshold} is not a probability")
        if self.cut not in CUT_RULES:
            raise DataError(f"relevance model: cut {self.cut!r} is not one of {CUT_RULES}")

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        """P(evidence) of each row of ``x`` (n, len(FEATURES))."""
        z = (expanded(x, self.degree) - np.asarray(self.mean)) / np.asarray(self.scale)
        logit = z @ np.asarray(self.coef) + self.intercept
        return 1.0 / (1.0 + np.exp(-np.clip(logit, -50, 50)))

    @classmethod
    def fit(cls, x: np.ndarray, y: np.ndarray, c: float = 1.0, threshold: float = 0.5, cut: str = "expected_f2",
            training: dict | None = None, degree: int = 1) -> RelevanceModel:
        """Fit on rows ``x`` and labels ``y`` (1: evidence); ``c``: the inverse L2 strength; ``cut`` and
        ``threshold``: how a cut is made (:meth:`kept`); ``degree``: the inputs (:func:`expanded`)."""
        from sklearn.linear_model import LogisticRegression

        if len(set(y.tolist())) < 2:
            raise DataError("relevance model: the training rows need both evidence and non-evidence")
        z = expanded(x, degree)
        mean, scale = z.mean(axis=0), z.std(axis=0)
        scale[scale == 0] = 1.0
        lr = LogisticRegression(C=c, max_iter=2000).fit((z - mean) / scale, y)
        return cls(mean.tolist(), scale.tolist(), lr.coef_[0].tolist(), float(lr.intercept_[0]), threshold, cut,
                   training=training or {}, degree=degree)

    def kept(self, p: np.ndarray, k: int, min_rows: int = 1) -> np.ndarray:
        """The positions of the rows a cut keeps, best first: of the ``k`` likeliest, those at or above the threshold
        (``threshold``), or the number of them that maximises the expected F2 under ``p`` (``expected_f2``); at
        least ``min_rows``."""
        return kept_positions(p, k, self.cut, self.threshold, min_rows)

    def fits_encoder(self, encoder_id: str) -> bool:
        """Whether the first stage of an encoder named ``encoder_id`` scores rows as the one this model was trained
        on did: the same model and pooling, and the same weights or a cast of them (a ``|bfloat16-weights``
        identity). True for a model that does not record its encoder."""
        trained = self.training.get("encoder")
        if not trained:
            return True
        a, b = str(trained).split("|"), str(encoder_id).split("|")
        cast = len(a) > 3 or len(b) > 3
        return a[:2] == b[:2] and (cast or a[:3] == b[:3])

    def save(self, folder: str | Path, card: str | None = None) -> Path:
        """Write :attr:`FILE` (``relevance.json``; and, given, the model card ``README.md``) into ``folder``, each
        atomically."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        write_json(folder / self.FILE, {"format": FORMAT, **asdict(self), "features": list(self.features)},
                   indent=2)
        if card is not None:
            write_text(folder / "README.md", card)
        return folder

    @classmethod
    def load(cls, folder: str | Path) -> RelevanceModel:
        """The model saved in ``folder`` (or the ``relevance.json`` named); a DataError naming what is wrong."""
        path = Path(folder)
        path = path / cls.FILE if path.is_dir() else path
        if not path.is_file():
            raise DataError(f"{path}: no relevance model here (train one: {cls.TRAIN})")
        try:
            raw = read_json(path)
        except (DataError, OSError, UnicodeDecodeError) as e:
            raise DataError(f"{path}: not a relevance model ({e})") from e
        if not isinstance(raw, dict) or raw.get("format") != FORMAT:
            raise DataError(f"{path}: relevance model format {raw.get('format') if isinstance(raw, dict) else None}"
                            f", not {FORMAT}")
        raw.pop("format")
        try:
            return cls(**{**raw, "features": tuple(raw.get("features", ()))})
        except TypeError as e:
            raise DataError(f"{path}: {e}") from e


def kept_positions(p: np.ndarray, k: int, cut: str, threshold: float, min_rows: int = 1) -> np.ndarray:
    """:meth:`RelevanceModel.kept` for a given cut rule and threshold.

    ``expected_f2``: the plug-in decision of Nan Ye et al. (ICML 2012, "Optimizing F-measures"): with calibrated
    probabilities, the top ``n`` maximising 5 * (sum of their p) / (n + 4 * (sum of every candidate's p)). A sure
    question comes back with its one row, an unsure one with more: no threshold to choose."""
    order = np.argsort(-p, kind="stable")[:k]
    if cut == "threshold":
        keep = [n for n, j in enumerate(order) if n < min_rows or p[j] >= threshold]
        return order[keep]
    expected_relevant = max(float(p.sum()), 1e-9)
    gains = 5 * np.cumsum(p[order]) / (np.arange(1, len(order) + 1) + 4 * expected_relevant)
    n = max(int(np.argmax(gains)) + 1, min(min_rows, len(order)))
    return order[:n]
