"""The state-aware re-ranker: its features read the dialogue state, its JSON model scores as scikit-learn does."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.ensemble import GradientBoostingClassifier, HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression

from retrieval.ctbls.state_features import FEATURES, StateFeaturizer, TurnState
from retrieval.ctbls.state_rerank import RERANK_FILE, RerankSettings, StateReranker, find_reranker, previous_cells
from retrieval.data.jsonio import DataError
from retrieval.data.types import Cell, Table

TABLE = Table("t", "Concerts", ["Year", "City", "Venue"],
              [[Cell("1990"), Cell("Atlanta"), Cell("The Dome")], [Cell("1991"), Cell("Boston"), Cell("Garden")],
               [Cell("1992"), Cell("Atlanta"), Cell("Stadium")]])


def _column(name: str) -> int:
    return FEATURES.index(name)


def _ranked(order: list[tuple[int, int]]) -> list:
    return [(("t", r, c), 1.0 - 0.1 * i) for i, (r, c) in enumerate(order)]


def test_features_read_the_previous_answer_the_question_and_the_tracker():
    ranked = _ranked([(0, 2), (2, 2), (1, 2), (0, 1)])  # the rest of the table left out of the ranking
    state = TurnState("which of those venues were in 1992?", 1, previous_cells([(0, 2), (2, 2)]))
    ids, x = StateFeaturizer()(ranked, TABLE, state)
    assert len(ids) == 9 and x.shape == (9, len(FEATURES))
    f = {cell: dict(zip(FEATURES, row)) for cell, row in zip(ids, x)}
    assert f[("t", 0, 2)]["score_gap"] == 0 and f[("t", 0, 2)]["inverse_rank"] == 1.0
    assert f[("t", 1, 0)]["score"] == pytest.approx(0.7)  # left out: the ranking's lowest
    assert f[("t", 0, 2)]["in_previous"] == 1 and f[("t", 1, 2)]["in_previous"] == 0
    assert f[("t", 2, 0)]["previous_row"] == 1 and f[("t", 1, 0)]["previous_row"] == 0
    assert f[("t", 1, 2)]["previous_column"] == 1 and f[("t", 1, 1)]["previous_column"] == 0
    assert f[("t", 2, 0)]["value_named"] == 1 and f[("t", 2, 2)]["row_named"] == 1
    assert f[("t", 0, 2)]["row_named"] == 0 and f[("t", 2, 0)]["row_named"] == 0  # the named cell itself
    assert f[("t", 0, 2)]["header_overlap"] > 0 and f[("t", 0, 1)]["header_overlap"] == 0  # "venues" -> Venue
    assert f[("t", 2, 0)]["bm25_value"] == 1.0 and f[("t", 0, 0)]["bm25_value"] == 0
    assert f[("t", 0, 0)]["numeric_column"] == 1 and f[("t", 0, 1)]["numeric_column"] == 0
    assert f[("t", 0, 0)]["points_back"] == 1 and f[("t", 0, 0)]["position"] == 1
    assert f[("t", 0, 0)]["previous_row_share"] == pytest.approx(2 / 3)
    ids, x = StateFeaturizer()(ranked, TABLE, TurnState("what are the venues?", 0))
    first = {cell[1:]: dict(zip(FEATURES, row)) for cell, row in zip(ids, x)}
    assert first[(0, 0)]["has_previous"] == 0 and first[(0, 0)]["previous_row"] == 0
    assert first[(0, 0)]["points_back"] == 0 and first[(0, 0)]["wants_most"] == 0
    assert first[(1, 2)]["header_best"] == 1 and first[(1, 0)]["header_best"] == 0
    assert first[(1, 2)]["first_row"] == 0 and first[(0, 1)]["first_row"] == 1  # no previous: the whole table


def test_extremes_and_order_are_taken_among_the_previous_rows():
    state = TurnState("which of these had the most recent year?", 2, frozenset({(1, 2), (2, 2)}))
    ids, x = StateFeaturizer()(_ranked([(0, 0)]), TABLE, state)
    f = {cell[1:]: dict(zip(FEATURES, row)) for cell, row in zip(ids, x)}
    assert f[(0, 0)]["wants_most"] == 1 and f[(0, 0)]["wants_least"] == 0 and f[(0, 0)]["order_word"] == 0
    assert f[(2, 0)]["column_max"] == 1 and f[(1, 0)]["column_min"] == 1 and f[(0, 0)]["column_min"] == 0
    assert f[(1, 1)]["first_row"] == 1 and f[(2, 1)]["last_row"] == 1 and f[(0, 1)]["first_row"] == 0
    assert f[(0, 1)]["column_max"] == 0  # the city column holds no numbers
    assert f[(2, 0)]["header_best"] == 1 and f[(2, 2)]["header_best"] == 0  # "year" names the Year column


GAMES = Table("g", "Season", ["Date", "Opponent", "Attendance", "Notes"],
              [[Cell("September 3, 1995"), Cell("Dallas"), Cell("71,317"), Cell("")],
               [Cell("October 8, 1995"), Cell("Miami"), Cell("80,101"), Cell("home")],
               [Cell("December 3, 1995"), Cell("Denver"), Cell("40,778"), Cell("")],
               [Cell("Date"), Cell("Opponent"), Cell("Attendance"), Cell("Notes")]])


def _games(question: str, position: int = 1, previous=frozenset(), previous_query: str = "") -> dict:
    ids, x = StateFeaturizer()(_ranked([(0, 0)]), GAMES, TurnState(question, position, previous, previous_query))
    return {cell[1:]: dict(zip(FEATURES, row)) for cell, row in zip(ids, x)}


def test_the_row_holding_the_named_columns_extreme_is_marked_among_the_rows_in_play():
    f = _games("which date had the highest attendance?")
    assert f[(1, 0)]["row_max_named"] == 1 and f[(0, 0)]["row_max_named"] == 0  # the Date cell of that row
    assert f[(2, 1)]["row_min_named"] == 1 and f[(1, 1)]["row_min_named"] == 0
    assert f[(1, 0)]["wants_most"] == 1 and f[(1, 0)]["wants_least"] == 0
    assert f[(1, 0)]["wh_head_header"] == 1 and f[(1, 1)]["wh_head_header"] == 0  # "which date" -> Date
    assert f[(1, 2)]["column_max"] == 1  # the Attendance cell itself, as a quantity ("80,101")
    assert f[(2, 0)]["column_max"] == 1 and f[(0, 0)]["column_min"] == 1  # dates order as dates
    among = _games("of those, which had the highest attendance?", previous=frozenset({(0, 1), (2, 1)}))
    assert among[(0, 1)]["row_max_named"] == 1 and among[(1, 1)]["row_max_named"] == 0  # row 1 is not in play


def test_comparisons_empty_cells_negation_and_header_rows():
    f = _games("which opponents drew more than 50000 attendance?")
    assert f[(0, 1)]["comparison_holds"] == 1 and f[(1, 1)]["comparison_holds"] == 1
    assert f[(2, 1)]["comparison_holds"] == 0
    assert _games("which drew fewer than 50000 attendance?")[(2, 1)]["comparison_holds"] == 1
    assert _games("which games have no notes?")[(0, 1)]["row_empty_named"] == 1
    assert _games("which games have no notes?")[(1, 1)]["row_empty_named"] == 0
    assert f[(0, 1)]["negation"] == 0 and _games("which were not at home?")[(0, 1)]["negation"] == 1
    assert f[(3, 2)]["header_like"] == 1 and f[(1, 2)]["header_like"] == 0
    assert f[(0, 0)]["numeric_column"] == pytest.approx(0.75) and f[(0, 1)]["numeric_column"] == 0
    assert f[(0, 1)]["first_text_column"] == 1 and f[(0, 0)]["first_text_column"] == 0
    assert f[(0, 3)]["column_position"] == 1 and f[(0, 0)]["column_position"] == 0
    later = _games("and which one was it?", previous_query="who was the opponent?")
    assert later[(0, 1)]["previous_question_header"] == 1 and later[(0, 2)]["previous_question_header"] == 0


def _data(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(400, len(FEATURES)))
    y = (x[:, 0] + 2 * x[:, 3] * (x[:, 5] > 0) + rng.normal(scale=0.5, size=400) > 0.5).astype(int)
    return x, y


def test_the_json_trees_score_exactly_as_scikit_learn_does():
    x, y = _data()
    s = RerankSettings("gbm", 30, 3, 0.1, subsample=0.8, seed=1)
    ours = StateReranker(s).fit(x, y)
    theirs = GradientBoostingClassifier(n_estimators=30, max_depth=3, learning_rate=0.1, subsample=0.8,
                                        init="zero", random_state=1).fit(x, y)
    test = _data(1)[0]
    np.testing.assert_allclose(ours.decision(test), theirs.decision_function(test), rtol=1e-9, atol=1e-9)


def test_the_histogram_boosting_trees_score_exactly_as_scikit_learn_does(tmp_path):
    x, y = _data()
    ours = StateReranker(RerankSettings("hgb", 40, 4, 0.1, seed=1)).fit(x, y)
    theirs = HistGradientBoostingClassifier(max_iter=40, max_depth=4, learning_rate=0.1, early_stopping=False,
                                            random_state=1).fit(x, y)
    test = _data(3)[0]
    np.testing.assert_allclose(ours.decision(test), theirs.decision_function(test), rtol=1e-9, atol=1e-9)
    loaded = StateReranker.load(ours.save(tmp_path / "r.json"))
    np.testing.assert_allclose(loaded.decision(test), theirs.decision_function(test), rtol=1e-9, atol=1e-9)
    with pytest.raises(ValueError, match="finite"):
        StateReranker(RerankSettings("hgb", 5, 2)).fit(np.where(x > 2, np.nan, x), y)


def test_the_logistic_model_scores_as_scikit_learn_does():
    x, y = _data()
    ours = StateReranker(RerankSettings("logistic", c=0.5)).fit(x, y)
    mean, scale = x.mean(axis=0), x.std(axis=0)
    theirs = LogisticRegression(C=0.5, max_iter=2000, random_state=0).fit((x - mean) / scale, y)
    test = _data(2)[0]
    np.testing.assert_allclose(ours.decision(test), theirs.decision_function((test - mean) / scale), rtol=1e-6)


def test_save_and_load_round_trip_and_refuse_other_features(tmp_path):
    x, y = _data()
    model = StateReranker(RerankSettings("gbm", 10, 2)).fit(x, y)
    model.report = {"chosen": "gbm"}
    model.save(tmp_path)
    loaded = StateReranker.load(tmp_path)
    np.testing.assert_array_equal(loaded.decision(x), model.decision(x))
    assert loaded.settings == model.settings and loaded.report == {"chosen": "gbm"}
    assert find_reranker("auto", tmp_path) is not None and find_reranker("none", tmp_path) is None
    assert find_reranker("auto", tmp_path / "elsewhere") is None  # a tracker without one: no re-ranking
    saved = json.loads((tmp_path / RERANK_FILE).read_text())
    saved["features"] = saved["features"][:-1]
    (tmp_path / "other.json").write_text(json.dumps(saved))
    with pytest.raises(ValueError, match="refit"):
        StateReranker.load(tmp_path / "other.json")
    with pytest.raises(FileNotFoundError, match="no state re-ranker"):
        find_reranker(str(tmp_path / "missing.json"), None)
    (tmp_path / "truncated.json").write_text('{"features": [')
    with pytest.raises(DataError, match="truncated.json: invalid JSON"):
        StateReranker.load(tmp_path / "truncated.json")
    (tmp_path / "foreign.json").write_text('{"x": 1}')
    with pytest.raises(DataError, match="foreign.json: not a state re-ranker"):
        StateReranker.load(tmp_path / "foreign.json")
    with pytest.raises(ValueError, match=rf"\(N, {len(FEATURES)}\)"):
        StateReranker().fit(x[:, :3], y)
    with pytest.raises(RuntimeError, match="not fitted"):
        StateReranker().decision(x)


def test_a_fitted_reranker_lifts_the_previous_rows_over_the_trackers_order():
    # Training turns where the answer is the previous answer's row's cell in the asked column, whatever the tracker
    # says; the re-ranker learns it and re-orders a new turn the same way.
    featurizer, xs, ys = StateFeaturizer(), [], []
    rng = np.random.default_rng(0)
    cells = [(r, c) for r in range(3) for c in range(3)]
    for _ in range(60):
        row = int(rng.integers(3))
        order = [cells[i] for i in rng.permutation(9)]
        ids, x = featurizer(_ranked(order), TABLE, TurnState("which of those?", 1, frozenset({(row, 1)})))
        xs.append(x)
        ys.append([int(r == row and c == 2) for _, r, c in ids])
    model = StateReranker(RerankSettings("gbm", 50, 2)).fit(np.concatenate(xs), np.concatenate(ys))
    reranked = model.rerank(_ranked([(0, 0), (1, 2), (2, 2), (0, 2)]), TABLE,
                            TurnState("which of those?", 1, frozenset({(0, 1)})))
    assert reranked[0][0] == ("t", 0, 2) and len(reranked) == 9
    assert all(0 <= p <= 1 for _, p in reranked)


def test_the_demo_refits_a_re_ranker_fitted_on_other_features(tmp_path):
    from eval.demo import _stale_reranker

    assert not _stale_reranker(tmp_path / "none.json")
    fitted = StateReranker(RerankSettings("hgb", 5, 2)).fit(*_data()).save(tmp_path / "now.json")
    assert not _stale_reranker(fitted)
    old = json.loads(fitted.read_text())
    old["features"] = old["features"][:27]
    (tmp_path / "old.json").write_text(json.dumps(old))
    assert _stale_reranker(tmp_path / "old.json")
