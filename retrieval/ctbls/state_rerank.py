"""The state-aware re-ranking stage of the coarse state tracker: a small learned model over the dialogue state.

The tracker ranks a table's cells by a dense cosine to the history; :class:`StateReranker` re-scores each cell from
the features of :mod:`retrieval.ctbls.state_features` (the tracker's score and rank, BM25, whether the cell, its
row or its column is in the previous answer, the question's words in the header and the cell, its position, ...)
with a pointwise model fitted on training turns (an answer cell against the table's other cells):

- ``kind="gbm"``: scikit-learn's ``GradientBoostingClassifier`` (log-loss, ``init="zero"``), whose trees are kept
  as plain arrays;
- ``kind="hgb"``: scikit-learn's ``HistGradientBoostingClassifier`` (log-loss, no early stopping), its trees
  kept the same way (with its baseline); much faster to fit on many rows, so deeper and longer ensembles fit here;
- ``kind="logistic"``: a ``LogisticRegression`` over standardised features, kept as its coefficients.

Either way the fitted model is written as JSON (``state_rerank.json`` beside the tracker's weights: no pickle) and
scored from that JSON by numpy, so what is loaded is exactly what was evaluated after fitting. A cell's new score is
the model's probability that it is an answer cell. ``train/state_rerank.py`` fits it (train tables), chooses its
settings (dev tables) and saves it; ``eval.state_tracking`` and ``eval.answer_accuracy`` load it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from retrieval.atomic import write_json
from retrieval.ctbls.cell_text import CellId
from retrieval.ctbls.state_features import FEATURES, StateFeaturizer, TurnState
from retrieval.ctbls.state_tracker import CellStateTracker
from retrieval.data.jsonio import DataError, read_json
from retrieval.data.types import Conversation, Table

RERANK_FILE = "state_rerank.json"
KINDS = ("gbm", "hgb", "logistic")


@dataclass(frozen=True)
class RerankSettings:
    """The model and its size: chosen on dev tables (train/state_rerank.py)."""

    kind: str = "gbm"
    n_estimators: int = 200
    max_depth: int = 3
    learning_rate: float = 0.1
    subsample: float = 0.8
    c: float = 1.0  # the logistic regression's inverse regularisation
    seed: int = 0

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown re-ranker kind {self.kind!r}; choose from {KINDS}")

    @property
    def name(self) -> str:
        if self.kind == "logistic":
            return f"logistic C={self.c:g}"
        return f"{self.kind} {self.n_estimators} trees depth {self.max_depth} lr {self.learning_rate:g}"


def _fit_gbm(x: np.ndarray, y: np.ndarray, s: RerankSettings) -> dict:
    from sklearn.ensemble import GradientBoostingClassifier

    model = GradientBoostingClassifier(n_estimators=s.n_estimators, max_depth=s.max_depth, init="zero",
                                       learning_rate=s.learning_rate, subsample=s.subsample, random_state=s.seed)
    model.fit(x, y)
    trees = []
    for (estimator,) in model.estimators_:
        t = estimator.tree_
        trees.append({"feature": t.feature.tolist(), "threshold": t.threshold.tolist(),
                      "left": t.children_left.tolist(), "right": t.children_right.tolist(),
                      "value": t.value[:, 0, 0].tolist()})
    return {"learning_rate": s.learning_rate, "trees": trees, "float32": True}


def _fit_hgb(x: np.ndarray, y: np.ndarray, s: RerankSettings) -> dict:
    """Its trees as :func:`_fit_gbm` keeps them (leaves already scaled by the learning rate), read from the fitted
    predictors' node arrays (a leaf's children are -1), and its baseline log-odds. The features have no missing
    values, so a node's rule is only x[f] <= threshold (checked against ``decision_function`` in the tests)."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    if not np.isfinite(x).all():
        raise ValueError("the re-ranker's features must be finite")
    model = HistGradientBoostingClassifier(max_iter=s.n_estimators, max_depth=s.max_depth,
                                           learning_rate=s.learning_rate, early_stopping=False, random_state=s.seed)
    model.fit(x, y)
    trees = []
    for (predictor,) in model._predictors:
        nodes = predictor.nodes
        leaf = nodes["is_leaf"].astype(bool)
        left, right = (np.where(leaf, -1, nodes[side].astype(np.int64)).tolist() for side in ("left", "right"))
        trees.append({"feature": nodes["feature_idx"].tolist(), "threshold": nodes["num_threshold"].tolist(),
                      "left": left, "right": right, "value": nodes["value"].tolist()})
    return {"learning_rate": 1.0, "baseline": float(np.ravel(model._baseline_prediction)[0]), "trees": trees,
            "float32": False}


def _fit_logistic(x: np.ndarray, y: np.ndarray, s: RerankSettings) -> dict:
    from sklearn.linear_model import LogisticRegression

    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    model = LogisticRegression(C=s.c, max_iter=2000, random_state=s.seed).fit((x - mean) / scale, y)
    return {"mean": mean.tolist(), "scale": scale.tolist(), "coef": model.coef_[0].tolist(),
            "intercept": float(model.intercept_[0])}


def _tree_values(tree: dict, x: np.ndarray) -> np.ndarray:
    """One regression tree's leaf values for ``x`` (N, F); sklearn's rule: go left when x[f] <= threshold (``x``
    already read as its trees read it)."""
    feature, threshold = np.asarray(tree["feature"]), np.asarray(tree["threshold"])
    left, right, value = np.asarray(tree["left"]), np.asarray(tree["right"]), np.asarray(tree["value"])
    node = np.zeros(len(x), dtype=np.int64)
    while True:
        inner = left[node] != -1
        if not inner.any():
            return value[node]
        f = feature[node[inner]]
        go_left = x[np.flatnonzero(inner), f] <= threshold[node[inner]]
        node[inner] = np.where(go_left, left[node[inner]], right[node[inner]])


class StateReranker:
    """Re-scores a turn's ranked cells from the dialogue state; fitted, saved and loaded as JSON."""

    def __init__(self, settings: RerankSettings | None = None, params: dict | None = None, report: dict | None = None):
        self.settings = settings or RerankSettings()
        self.params = params
        self.report = report or {}
        self.featurizer = StateFeaturizer()

    def fit(self, x: np.ndarray, y: np.ndarray) -> StateReranker:
        """Fit on (N, len(FEATURES)) features and (N,) labels (1 = an answer cell)."""
        if x.ndim != 2 or x.shape[1] != len(FEATURES) or len(x) != len(y):
            raise ValueError(f"expected features (N, {len(FEATURES)}) and N labels, got {x.shape} and {len(y)}")
        if len(set(np.asarray(y).tolist())) < 2:
            raise ValueError("the re-ranker needs answer cells and other cells among its training rows")
        fit = {"gbm": _fit_gbm, "hgb": _fit_hgb, "logistic": _fit_logistic}[self.settings.kind]
        self.params = fit(np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.int64), self.settings)
        return self

    def decision(self, x: np.ndarray) -> np.ndarray:
        """(N,) log-odds that each row is an answer cell."""
        if self.params is None:
            raise RuntimeError("the re-ranker is not fitted: call fit() or load()")
        x = np.asarray(x, dtype=np.float64)
        p = self.params
        if self.settings.kind == "logistic":
            return ((x - np.asarray(p["mean"])) / np.asarray(p["scale"])) @ np.asarray(p["coef"]) + p["intercept"]
        if p.get("float32", True):  # DecisionTreeRegressor compares in float32
            x = x.astype(np.float32).astype(np.float64)
        trees = sum((_tree_values(t, x) for t in p["trees"]), np.zeros(len(x)))
        return p.get("baseline", 0.0) + p["learning_rate"] * trees

    def rerank(self, ranked: Sequence[tuple[CellId, float]], table: Table, state: TurnState
               ) -> list[tuple[CellId, float]]:
        """Every cell of ``table`` as ((uid, row, col), probability of being an answer cell), best first; ties keep
        the tracker's order. ``ranked``: the tracker's ((uid, row, col), score), best first (the whole table, or
        its top: a cell left out scores as the lowest)."""
        ids, x = self.featurizer(ranked, table, state)
        if not ids:
            return []
        prob = 1.0 / (1.0 + np.exp(-self.decision(x)))
        tracker_rank = {cell: i for i, (cell, _) in enumerate(ranked)}
        order = sorted(range(len(ids)), key=lambda i: (-prob[i], tracker_rank.get(ids[i], len(ranked))))
        return [(ids[i], float(prob[i])) for i in order]

    def save(self, path: str | Path) -> Path:
        """To ``path``: a tracker folder (its state_rerank.json) or a .json file."""
        if self.params is None:
            raise RuntimeError("the re-ranker is not fitted: nothing to save")
        path = Path(path)
        file = path if path.suffix == ".json" else path / RERANK_FILE
        return write_json(file, {"features": list(FEATURES), "settings": asdict(self.settings),
                                                        "params": self.params, "report": self.report})

    @classmethod
    def load(cls, path: str | Path) -> StateReranker:
        """From a tracker folder holding ``state_rerank.json`` or from the file itself."""
        path = Path(path)
        file = path / RERANK_FILE if path.is_dir() else path
        if not file.is_file():
            raise FileNotFoundError(f"{file}: no state re-ranker here (fit one with python -m train.state_rerank)")
        saved = read_json(file)
        if not isinstance(saved, dict) or not {"settings", "params"} <= saved.keys():
            raise DataError(f"{file}: not a state re-ranker (expected an object with 'features', 'settings' and "
                            "'params', as python -m train.state_rerank writes)")
        if saved.get("features") != list(FEATURES):
            raise DataError(f"{file}: fitted on features {saved.get('features')}, this code computes "
                            f"{list(FEATURES)}; refit it")
        return cls(RerankSettings(**saved["settings"]), saved["params"], saved.get("report"))


def previous_cells(targets: Sequence[tuple[int, int]] | None) -> frozenset[tuple[int, int]]:
    """A previous answer's (row, col) cells (from a turn's targets or from chosen cell ids (uid, row, col))."""
    return frozenset((cell[-2], cell[-1]) for cell in targets or ())


def find_reranker(spec: str | None, tracker: str | Path | None) -> StateReranker | None:
    """``spec``: 'none', a file or folder, or 'auto' (the tracker folder's state_rerank.json when it has one, so a
    tracker without one, OTT-QA's, runs without re-ranking)."""
    if spec in (None, "", "none"):
        return None
    if spec == "auto":
        return StateReranker.load(tracker) if tracker and (Path(tracker) / RERANK_FILE).is_file() else None
    return StateReranker.load(spec)


def whole_table_rankings(tracker: CellStateTracker, anchors: list[str], table_uids: list[str], batch_size: int = 64
                         ) -> list[list[tuple[CellId, float]]]:
    """The tracker's ranking of every cell of each anchor's table (the re-ranker sees the whole table)."""
    k = max((len(tracker.cells_of.get(uid, [])) for uid in table_uids), default=0)
    return tracker.rank_texts(anchors, table_uids, max(k, 1), batch_size) if anchors else []


def reference_state(conversation: Conversation, position: int) -> TurnState:
    """Turn ``position``'s state with the reference previous answer (as the tracker is trained and evaluated)."""
    before = conversation.turns[position - 1] if position else None
    return TurnState(conversation.turns[position].query, position, previous_cells(before.targets if before else None),
                     before.query if before else "")
