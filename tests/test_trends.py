"""Temporal trends: thresholds, LLM confirmation without monotonicity, document loading with bad timestamps,
empty periods, question parsing, reports that survive an LLM failure, the command line, the evaluation's metrics."""

from __future__ import annotations

import json
import random
import re
import zlib
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest
import yaml

from eval.trend_metrics import count_metrics
from eval.trends import plant_topics
from retrieval.data.conversation_log import Utterance
from retrieval.llm import GenerationResult
from retrieval.memory.time_resolver import normalise
from retrieval.trends.analysis import TrendConfig, analyse_trend
from retrieval.trends.corpus import load_corpus
from retrieval.trends.periods import enumerate_periods
from retrieval.trends.question import extract_topic, parse_trend_question, period_from_question
from retrieval.trends.relevance import (
    binary_search_boundary,
    confirm_stratified,
    inversion_rate,
    labelled_threshold,
    mixture_threshold,
    null_threshold,
    parse_yes_no,
    reference_threshold,
)
from retrieval.trends.report import write_trend_outputs

UTC = timezone.utc


class BagOfWordsEncoder:
    """A deterministic stand-in for DualEncoder: hashed word counts, L2-normalised (cosine = word overlap)."""

    dim = 256
    identity = "bag-of-words-test"

    def _encode(self, texts):
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for r, text in enumerate(texts):
            for w in re.findall(r"[a-z]+", text.lower()):
                out[r, zlib.crc32(w.encode()) % self.dim] += 1.0
            out[r, 0] += 0.3  # a shared component, so unrelated texts score a little above zero
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    def encode_queries(self, texts, batch_size=64, show_progress_bar=False):
        return self._encode(texts)

    def encode_documents(self, texts, batch_size=64, show_progress_bar=False):
        return self._encode(texts)


class FakeBackend:
    """An LLM backend whose answers are scripted: a string, a failure, or an exception."""

    identity = "fake-llm"

    def __init__(self, answer: str | None = None, raises: bool = False):
        self.answer, self.raises, self.calls = answer, raises, 0

    def generate(self, conversations, max_new_tokens=256, temperature=0.0, stop=None):
        self.calls += 1
        if self.raises:
            raise RuntimeError("the model crashed")
        ok = self.answer is not None
        return [GenerationResult(self.answer or "", ok, None if ok else "server error", 0.0, "fake", "fake-llm")
                for _ in conversations]


def write_docs(path, rows):
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


@pytest.fixture
def docs_file(tmp_path):
    """Electric-car talk in January (1) and March (3), none in February (no documents at all), two bad rows."""
    rows = [
        {"id": "n1", "text": "electric cars are great", "timestamp": "2023-01-05T10:00:00", "source": "ann"},
        {"id": "n2", "text": "the weather is nice today", "timestamp": "2023-01-06T10:00:00", "source": "bob"},
        {"id": "n3", "text": "lunch with friends", "timestamp": "2023-01-20T10:00:00"},
        {"id": "n4", "text": "my new electric cars dealer called", "timestamp": "2023-03-02T10:00:00"},
        {"id": "n5", "text": "electric cars charging station", "timestamp": "2023-03-03T10:00:00"},
        {"id": "n6", "text": "we love electric cars", "timestamp": 1678300000},  # epoch seconds, 2023-03-08
        {"id": "n7", "text": "a walk in the park", "timestamp": "2023-03-20T10:00:00"},
        {"id": "n8", "text": "electric cars again", "timestamp": "sometime last spring?!"},
        {"id": "n9", "text": "electric cars once more"},
    ]
    return write_docs(tmp_path / "docs.jsonl", rows)


FIXED = TrendConfig(period="month", threshold="fixed", threshold_value=0.5)


# ---- relevance ---------------------------------------------------------------------------------------------------
def test_null_threshold_lets_about_alpha_of_the_null_through():
    rng = np.random.default_rng(0)
    null = rng.normal(0.1, 0.05, 5000)
    t = null_threshold(np.concatenate([null, rng.normal(0.6, 0.05, 200)]), alpha=0.01)
    assert 0.005 < (null >= t.value).mean() < 0.02
    assert t.method == "null" and t.details["alpha"] == 0.01


def test_mixture_threshold_finds_where_the_topic_tail_begins_and_never_goes_below_the_null():
    rng = np.random.default_rng(0)
    bulk, tail = rng.normal(0.1, 0.05, 5000), rng.normal(0.45, 0.05, 150)
    t = mixture_threshold(np.concatenate([bulk, tail]))
    assert t.method == "mixture" and 0.2 < t.value < 0.4  # between the two
    assert (bulk >= t.value).mean() < 0.005 and (tail >= t.value).mean() > 0.95
    null = null_threshold(np.concatenate([bulk, tail]))
    assert t.value >= null.value
    # no topic at all (a skewed bulk the mixture would split): the null's floor holds
    skewed = np.concatenate([rng.normal(0.1, 0.03, 4000), rng.normal(0.2, 0.05, 1500)])
    assert mixture_threshold(skewed).value >= null_threshold(skewed).value
    few = mixture_threshold(np.linspace(0, 1, 12))  # too few to fit two components: the null, said
    assert few.value == null_threshold(np.linspace(0, 1, 12)).value and "fewer than 20" in few.details["fallback"]


def test_reference_threshold_is_the_reference_quantile(docs_file, tmp_path):
    t = reference_threshold(np.arange(1000) / 1000, alpha=0.01)
    assert t.value == pytest.approx(0.99) and t.method == "reference"
    with pytest.raises(ValueError, match="at least 100"):
        reference_threshold(np.zeros(50), alpha=0.01)
    ref = write_docs(tmp_path / "ref.jsonl", [{"text": f"note number {i} about lunch", "timestamp": "2023-01-01"}
                                              for i in range(120)])
    config = TrendConfig(period="month", threshold="reference", reference=str(ref))
    result = analyse_trend(load_corpus(docs_file, BagOfWordsEncoder()), "electric cars?", config)
    assert result.threshold.method == "reference" and result.counts()["2023-03"] == 3.0


def test_feedback_moves_the_topic_toward_its_closest_documents(docs_file, tmp_path):
    from retrieval.trends.analysis import topic_scores, topic_vector

    table = load_corpus(docs_file, BagOfWordsEncoder()).table
    q = table.encode_query("electric cars")
    assert np.array_equal(topic_vector(table, "electric cars", 0), q)
    moved = topic_vector(table, "electric cars", 3)
    assert moved.shape == q.shape and np.isclose(np.linalg.norm(moved), 1.0) and not np.allclose(moved, q)
    docs = table.frame["text"].astype(str).tolist()
    closest = sorted(range(len(docs)), key=lambda i: -float(BagOfWordsEncoder()._encode([docs[i]])[0] @ q[0]))[:3]
    want = q[0] + BagOfWordsEncoder()._encode([docs[i] for i in closest]).mean(axis=0)
    assert np.allclose(moved[0], want / np.linalg.norm(want), atol=1e-6)  # the query plus the mean of its best 3
    plain, fed = topic_scores(table, "electric cars", 0), topic_scores(table, "electric cars", 3)
    charging = table.frame.index[table.frame["text"] == "electric cars charging station"][0]
    assert fed[charging] > plain[charging]  # words the topic's documents share ("electric", "cars", "my") count more
    words = "apple river stone cloud paper garden window music winter coffee train bread candle forest ladder".split()
    ref = write_docs(tmp_path / "ref.jsonl", [{"text": f"{a} and {b} at lunch", "timestamp": "2023-01-01"}
                                              for a in words for b in words if a != b])  # 210 documents, none on topic
    config = TrendConfig(period="month", threshold="reference", reference=str(ref), feedback=2)
    result = analyse_trend(load_corpus(docs_file, BagOfWordsEncoder()), "electric cars", config)
    reference = load_corpus(ref, BagOfWordsEncoder()).table  # the reference's null: the same procedure on its own
    want = reference_threshold(topic_scores(reference, "electric cars", 2).to_numpy(), config.alpha).value
    assert result.threshold.value == pytest.approx(want)
    assert want > reference_threshold(topic_scores(reference, "electric cars", 0).to_numpy(), config.alpha).value
    with pytest.raises(ValueError, match="feedback -1"):
        TrendConfig(feedback=-1)


def test_labelled_threshold_from_texts_and_corpus_ids(docs_file, tmp_path):
    labels = write_docs(tmp_path / "labels.jsonl", [
        {"id": "n4", "relevant": True}, {"id": "n2", "relevant": False}, {"id": 2, "relevant": False},
        {"text": "electric cars everywhere", "relevant": True}, {"text": "a quiet lunch", "relevant": False}])
    config = TrendConfig(period="month", threshold="labelled", labelled=str(labels))
    result = analyse_trend(load_corpus(docs_file, BagOfWordsEncoder()), "electric cars?", config)
    assert result.threshold.details == {"f1": 1.0, "n_positive": 2, "n_negative": 3}
    assert result.counts() == {"2023-01": 1.0, "2023-02": 0.0, "2023-03": 3.0}
    bad = write_docs(tmp_path / "bad.jsonl", [{"id": "nope", "relevant": True}])
    with pytest.raises(ValueError, match="ids not in the corpus"):
        analyse_trend(load_corpus(docs_file, BagOfWordsEncoder()), "electric cars?",
                      TrendConfig(threshold="labelled", labelled=str(bad)))


def test_labelled_threshold_separates_the_labels():
    t = labelled_threshold([0.6, 0.7, 0.8], [0.1, 0.2, 0.3, 0.65])
    assert 0.3 < t.value <= 0.6 and t.details["f1"] == pytest.approx(6 / 7)


def test_parse_yes_no():
    assert parse_yes_no(" Yes, it is.") is True
    assert parse_yes_no("no") is False
    assert parse_yes_no("Maybe") is None


def test_inversion_rate():
    assert inversion_rate([0.9, 0.8, 0.2, 0.1], [True, True, False, False]) == 0.0
    assert inversion_rate([0.9, 0.8, 0.2, 0.1], [False, False, True, True]) == 1.0
    assert inversion_rate([0.9, 0.8], [True, True]) is None


def test_stratified_confirmation_does_not_assume_monotone_relevance():
    # Relevance alternates down the ranking: the binary search, which assumes a prefix is relevant, misses it.
    scores = {i: 1.0 - i / 100 for i in range(40)}
    truth = {i for i in scores if i % 2 == 1}

    def judge(ids):
        return [i in truth for i in ids]

    ids = {i: i for i in scores}
    conf = confirm_stratified(scores, ids, judge, floor=0.0, n_strata=4, per_stratum=10)
    assert sum(conf.weights.values()) == pytest.approx(len(truth))  # every candidate judged: exact
    assert conf.inversion_rate == pytest.approx(0.5, abs=0.05)
    count, calls = binary_search_boundary(sorted(scores, key=lambda i: -scores[i]), ids, judge)
    assert count != len(truth) and calls <= 6
    sampled = confirm_stratified(scores, ids, judge, floor=0.0, n_strata=4, per_stratum=4, seed=1)
    assert sampled.calls == 16 and abs(sum(sampled.weights.values()) - len(truth)) <= 10


# ---- loading, periods, parsing --------------------------------------------------------------------------------
def test_bad_timestamps_are_counted_and_reported(docs_file, tmp_path):
    corpus = load_corpus(docs_file, BagOfWordsEncoder())
    assert len(corpus.table) == 7 and corpus.n_read == 9
    reasons = sorted(s["reason"] for s in corpus.skipped)
    assert reasons == ["missing timestamp", "unparseable timestamp"]
    csv = tmp_path / "docs.csv"
    csv.write_text("text,timestamp\nhello,2023-01-01\nworld,yesterday-ish\n,2023-01-02\n")
    corpus = load_corpus(csv, BagOfWordsEncoder())
    assert len(corpus.table) == 1 and sorted(s["reason"] for s in corpus.skipped) == ["no text",
                                                                                       "unparseable timestamp"]


def test_empty_periods_show_zero_not_a_gap(docs_file):
    result = analyse_trend(load_corpus(docs_file, BagOfWordsEncoder()), "Are electric cars growing?", FIXED)
    table = {p.period: (p.n_docs, p.n_relevant) for p in result.periods}
    assert table == {"2023-01": (3, 1.0), "2023-02": (0, 0.0), "2023-03": (4, 3.0)}
    assert [s["source_id"] for s in result.periods[2].samples][:1] and result.periods[1].samples == []
    assert len(result.skipped) == 2 and result.topic == "electric cars"


def word_overlap_model(folder):
    """A relevance model that reads one feature: the share of the topic's words a document holds."""
    from retrieval.memory.relevance.features import FEATURES
    from retrieval.memory.relevance.model import RelevanceModel

    n = len(FEATURES)
    coef = [8.0 if f == "overlap_text" else 0.0 for f in FEATURES]
    return RelevanceModel([0.0] * n, [1.0] * n, coef, -4.0, 0.5).save(folder)


@pytest.mark.parametrize("rule", ["count", "expected"])
def test_the_relevance_model_counts_a_trend(docs_file, tmp_path, rule):
    config = TrendConfig(period="month", threshold="relevance", relevance=str(word_overlap_model(tmp_path / "m")),
                         count_rule=rule)
    result = analyse_trend(load_corpus(docs_file, BagOfWordsEncoder()), "Are electric cars growing?", config)
    got = {p.period: p.n_relevant for p in result.periods}
    assert result.threshold.method == "relevance" and got["2023-02"] == 0.0
    if rule == "count":  # the documents that hold both words, and no other
        assert got == {"2023-01": 1.0, "2023-02": 0.0, "2023-03": 3.0}
    else:  # every document counts its probability (p = 0.98 with both words, 0.02 without)
        assert got["2023-03"] == pytest.approx(3 * 0.982 + 0.018, abs=0.01)
        assert got["2023-01"] == pytest.approx(0.982 + 2 * 0.018, abs=0.01)
    samples = result.periods[2].samples
    assert len(samples) == 3 and all(s["score"] > 0.9 for s in samples)  # the samples carry the probabilities
    with pytest.raises(ValueError, match="needs relevance"):
        TrendConfig(threshold="relevance", relevance="")


def test_enumerate_periods_covers_the_window():
    start, end = datetime(2023, 1, 30, tzinfo=UTC), datetime(2023, 2, 7, tzinfo=UTC)
    assert enumerate_periods("day", start, end)[0] == "2023-01-30" and len(enumerate_periods("day", start, end)) == 8
    assert enumerate_periods("week", start, end) == ["2023-W05", "2023-W06"]
    assert enumerate_periods("month", start, end) == ["2023-01", "2023-02"]
    assert enumerate_periods("session", start, end, [3, 5]) == [3, 4, 5]


def test_trend_question_parsing():
    now = datetime(2023, 5, 20, 12, tzinfo=UTC)
    q = parse_trend_question("Are people talking more about electric cars than last month?", now)
    assert q.topic == "electric cars"
    assert q.start == datetime(2023, 4, 1, tzinfo=UTC) and q.end == now  # compares: runs on to now
    assert period_from_question(normalise("how did it go, week by week?")) == "week"
    assert period_from_question(normalise("monthly volume of crypto")) == "month"
    assert extract_topic(normalise("How are people feeling about the metaverse, and is it growing?"), []) == \
        "metaverse"
    q = parse_trend_question("Did Melanie mention pottery more in July than in May?", now, ["Melanie", "Caroline"])
    # July is last year's (the latest not after now), May this year's: two references, so no run-on to now.
    assert (q.topic, q.start, q.end) == ("pottery", datetime(2022, 7, 1, tzinfo=UTC), datetime(2023, 6, 1, tzinfo=UTC))
    assert {"op": "filter", "column": "speaker", "cmp": "==", "value": "Melanie"} in q.ops
    assert parse_trend_question("crypto over the last 3 sessions", now).period == "session"
    # the verbs people count a topic with ("come up", "go on about") are not the topic; "each time we talked" is
    # per session
    q = parse_trend_question("has the job search come up more or less over time, week by week?", now)
    assert (q.topic, q.period) == ("job search", "week")
    assert parse_trend_question("how much did we go on about the kitchen reno?", now).topic == "kitchen reno"
    q = parse_trend_question("how often did the wedding come up each time we talked", now)
    assert (q.topic, q.period) == ("wedding", "session")
    # a trend word used as a noun is the topic's ("his fall", "the job change thing"); "since" and the event a window
    # starts at are not (retrieval.trends.anchor dates it)
    q = parse_trend_question("how much have we been talking about ravi's dad since his fall, session by session?", now,
                             ["Ravi"])
    assert (q.topic, q.period, q.since_event) == ("ravi's dad", "session", "his fall")
    assert parse_trend_question("how often did his fall come up?", now).topic == "fall"
    assert parse_trend_question("has the wedding come up more since the 5th?", now).since_event is None
    assert parse_trend_question("how often did leo's job change thing come up?", now).topic == "leo's job change"
    assert parse_trend_question("how did her mood change over time?", now).topic == "mood"
    assert parse_trend_question("is the talk about electric cars growing?", now).topic == "electric cars"
    with pytest.raises(ValueError, match="names no topic"):
        parse_trend_question("Is it growing?", now)


def test_a_window_without_documents_gives_empty_periods_not_a_crash(docs_file):
    config = TrendConfig(period="month", threshold="fixed", threshold_value=0.5, start="2024-01-01",
                         end="2024-03-01", now="2024-06-01")
    result = analyse_trend(load_corpus(docs_file, BagOfWordsEncoder()), "electric cars per month", config)
    assert [(p.period, p.n_docs, p.n_relevant) for p in result.periods] == [("2024-01", 0, 0.0), ("2024-02", 0, 0.0)]


# ---- reports and LLM failures ---------------------------------------------------------------------------------
@pytest.mark.parametrize("backend", [FakeBackend(None), FakeBackend(raises=True), None])
def test_llm_failure_still_returns_counts_samples_and_plot(docs_file, tmp_path, backend):
    corpus = load_corpus(docs_file, BagOfWordsEncoder())
    config = TrendConfig(period="month", threshold="fixed", threshold_value=0.5, confirm="stratified")
    result = analyse_trend(corpus, "Are electric cars growing?", config, backend=backend)
    assert result.counts() == {"2023-01": 1.0, "2023-02": 0.0, "2023-03": 3.0}  # failed judge: threshold kept
    paths = write_trend_outputs(result, tmp_path / "out", backend=backend)
    assert paths["plot"].read_bytes()[:4] == b"\x89PNG"
    report = paths["report"].read_text()
    assert "## Summary (extractive" in report and "| 2023-02 | 0 | 0 |" in report and "[#" in report
    data = json.loads(paths["json"].read_text())
    assert data["report"]["extractive"] and len(data["skipped"]) == 2


def test_llm_report_citations_are_checked(docs_file, tmp_path):
    result = analyse_trend(load_corpus(docs_file, BagOfWordsEncoder()), "electric cars?", FIXED)
    known = sorted(result.sample_ids())[0]
    backend = FakeBackend(f"Talk about electric cars declines in March [#{known}], see also [#999].")
    report = write_trend_outputs(result, tmp_path / "out", backend=backend)["report"].read_text()
    assert "## Report (LLM: fake-llm)" in report and "[999]" in report  # the unknown id is flagged
    assert "## Summary from the counts" in report  # the numbers-backed summary stays beside the narrative
    assert "but the counts are rising" in report  # 1, 0, 3 (Spearman 0.5) is rising: "declines" is flagged


def test_direction_conflict():
    from retrieval.trends.report import direction_conflict

    assert direction_conflict("Interest is growing fast.", "falling") is not None
    assert direction_conflict("It rose, then fell.", "falling") is None
    assert direction_conflict("People talk about it.", "rising") is None


def test_llm_confirmation_uses_the_judge(docs_file):
    corpus = load_corpus(docs_file, BagOfWordsEncoder())
    config = TrendConfig(period="month", threshold="fixed", threshold_value=0.5, confirm="stratified",
                         confirm_per_stratum=50)
    result = analyse_trend(corpus, "electric cars?", config, backend=FakeBackend("no"))
    assert result.n_relevant == 0 and result.confirmation["calls"] > 0


# ---- command line and evaluation ------------------------------------------------------------------------------
def test_command_line_end_to_end(docs_file, tmp_path, tiny_backbone):
    from retrieval.trends.analysis import main

    out = tmp_path / "run"
    rc = main(["ask", "--docs", str(docs_file), "Is talk about electric cars growing?", "--period", "month",
               "--threshold", "fixed", "--threshold-value", "0.0", "--llm", "none", "--encoder", tiny_backbone,
               "--cache-dir", "", "--output-dir", str(out)])
    assert rc == 0 and {p.name for p in out.iterdir()} == {"trend.json", "volume.png", "report.md", "config.yaml"}
    data = json.loads((out / "trend.json").read_text())
    assert [p["n_docs"] for p in data["periods"]] == [3, 0, 4] and data["config"]["period"] == "month"
    resolved = yaml.safe_load((out / "config.yaml").read_text())  # the whole command's settings, in one file
    assert resolved["docs"] == str(docs_file) and resolved["threshold_value"] == 0.0 and resolved["llm"] == "none"


def test_count_metrics():
    m = count_metrics([1, 2, 3, 4], [2, 3, 4, 5])
    assert m["mae"] == 1.0 and m["bias"] == -1.0 and m["pearson"] == pytest.approx(1.0)
    assert count_metrics([3, 3, 3], [1, 2, 3])["pearson"] is None


def test_planting_records_the_truth():
    t0 = datetime(2023, 1, 1, tzinfo=UTC)
    utts = [Utterance(i, 1 + i // 50, "A" if i % 2 else "B", t0 + timedelta(days=i // 50, minutes=i), f"hello {i}")
            for i in range(500)]
    from retrieval.trends.planted import TEST_FRAMES

    out, truth, specs = plant_topics(utts, TEST_FRAMES, random.Random(0), peak=0.2)
    assert len(out) == 500 + len(truth) and set(specs) == {"electric_cars", "crypto", "metaverse", "solar", "election"}
    planted = {u.response_idx: u for u in out[500:]}
    assert set(planted) == set(truth)
    for i, label in truth.items():  # inside its session's time span
        assert t0 <= planted[i].timestamp <= t0 + timedelta(days=10)
