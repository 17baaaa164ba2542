"""Temporal trends: how much is said about a topic, period by period, with the closest examples.

After "Temporal Augmented Retrieval" (adrida), with relevance decided rather than assumed: each
document's cosine to the topic is compared with a calibrated threshold (:mod:`retrieval.trends.relevance`),
optionally confirmed by an LLM judge on a stratified sample. Documents live in the conversation table
of the temporal memory (one row per utterance or document, metadata columns, a dense index).

    corpus = load_corpus("notes.csv", encoder=load_encoder())             # or a Zyphra / LoCoMo log
    result = analyse_trend(corpus, "How are people feeling about the metaverse, and is it growing?")
    [(p.period, p.n_docs, p.n_relevant) for p in result.periods]
    write_trend_outputs(result, "runs/trends/metaverse", backend=load_backend("smollm2"))  # report.md, volume.png

Command line:
    python -m retrieval.trends.analysis ask --docs FILE "Is the talk about electric cars growing?" \\
        [--period auto|day|week|month|session] [--start 2023-05-01 --end 2023-09-01] [--topic "electric cars"] \\
        [--threshold null|labelled|fixed] [--confirm none|stratified|binary] [--llm smollm2|none] \\
        --out runs/trends/cars [--config configs/trends.yaml]

``FILE``: a CSV or JSONL of ``{text, timestamp, source?, id?, session?}`` rows, or a Zyphra / LoCoMo
conversation log (.json). Rows with a missing or unreadable timestamp are skipped, counted and listed.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from retrieval.data.conversation_log import (
    DEFAULT_SESSION_GAP,
    SESSION_KEY,
    Utterance,
    as_timezone,
    assign_sessions,
    load_log,
    parse_timestamp,
)
from retrieval.data.jsonio import DataError, iter_jsonl, read_json
from retrieval.memory.conversation_table import ConversationTable
from retrieval.memory.planner import ops_for
from retrieval.memory.question_parts import blank_spans, question_content, speaker_mentions
from retrieval.memory.table_ops import execute
from retrieval.memory.time_resolver import TimeResolver, normalise
from retrieval.search.english import ENGLISH_STOP_WORDS
from retrieval.trends.relevance import (
    THRESHOLD_METHODS,
    Threshold,
    binary_search_boundary,
    confirm_stratified,
    labelled_threshold,
    llm_judge,
    null_threshold,
    reference_threshold,
)

PERIODS = ("day", "week", "month", "session")
PERIOD_COLUMN = {"day": "date", "week": "week", "month": "month", "session": "session"}
CONFIRM_METHODS = ("none", "stratified", "binary")

PERIOD_PHRASE = re.compile(r"\b(?:per|each|every|by|a|from|over)\s+(day|week|month|session)s?\b"
                           r"|\b(daily|weekly|monthly)\b|\b(day|week|month|session)[- ](?:by|to|on)[- ]\3\b")
_ADVERB = {"daily": "day", "weekly": "week", "monthly": "month"}
# A question that compares or asks about change wants the window to run on to "now".
COMPARING = re.compile(r"\b(?:than|compared?|versus|vs|since|grow\w*|ris\w*|increas\w*|decreas\w*|declin\w*|"
                       r"more|less|fewer|trend\w*|evol\w*|chang\w*|up|down)\b")
# Words of a trend question that say how, not what about, added to the English stop words for reading its topic:
# talking about talk, and about change over time.
TREND_WORDS = frozenset("""
talk talks talked talking discuss discusses discussed discussing discussion discussions say said speak spoke
mention chat chats chatted chatting bring brought write wrote written tell told please show give let like really
anything something everything stuff thing things topic topics subject subjects also people person folks everyone
everybody anyone someone users user customers clients feeling feelings feel feels felt sentiment mood opinion
opinions think thinking thought view views attitude attitudes growing grow grows grew growth grown trend trends
trending rising rise rises rose falling fall falls fell declining decline increase increasing increased decrease
decreasing decreased evolve evolves evolving evolved change changes changing changed often frequently frequent
popular popularity interest interested buzz volume volumes much many less fewer least per every compared compare
versus vs mentions mention mentioned mentioning saying says still getting gets got going lately recently
currently period periods daily weekly monthly day days week weeks month months session sessions year years time
times overall general generally amount number count counts chatter conversation conversations notes tweets posts
messages documents meeting meetings
""".split())
TOPIC_STOP_WORDS = ENGLISH_STOP_WORDS | TREND_WORDS


# ---- loading documents ---------------------------------------------------------------------------------------
@dataclass
class Corpus:
    """Time-stamped documents as a conversation table, and what could not be placed in time.

    ``skipped``: one ``{"where", "timestamp", "reason"}`` per row left out; ``source_ids``: response_idx ->
    the source's own id (a CSV ``id`` column, a LoCoMo ``dia_id``), for citing.
    """

    table: ConversationTable
    skipped: list[dict] = field(default_factory=list)
    source_ids: dict = field(default_factory=dict)
    path: str = ""

    @property
    def n_read(self) -> int:
        return len(self.table) + len(self.skipped)


def parse_document_time(raw: object, tz) -> datetime | None:
    """A timestamp cell -> tz-aware datetime: epoch seconds (or milliseconds) or any text
    :func:`~retrieval.data.conversation_log.parse_timestamp` reads; None when nothing reads it."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, str) and re.fullmatch(r"\s*\d{9,13}(?:\.\d+)?\s*", raw):
        raw = float(raw)
    if isinstance(raw, int | float):
        if not np.isfinite(raw):
            return None
        seconds = raw / 1000 if raw > 1e11 else raw
        return datetime.fromtimestamp(seconds, timezone.utc).astimezone(tz)
    return parse_timestamp(raw, tz)


def _read_rows(path: Path) -> list[tuple[str, dict]]:
    if path.suffix.lower() in (".csv", ".tsv"):
        if not path.is_file():
            raise DataError(f"{path}: file not found")
        with path.open(encoding="utf-8", newline="") as f:
            reader = csv.DictReader(f, delimiter="\t" if path.suffix.lower() == ".tsv" else ",")
            if reader.fieldnames is None or "text" not in reader.fieldnames:
                raise DataError(f"{path}: needs a header row with a 'text' and a 'timestamp' column")
            return [(f"{path}:{n}", row) for n, row in enumerate(reader, start=2)]
    return [(f"{path}:{n}", obj) for n, obj in iter_jsonl(path)]


def documents_to_utterances(rows: Sequence[tuple[str, dict]], tz=None,
                            session_gap: timedelta = DEFAULT_SESSION_GAP
                            ) -> tuple[list[Utterance], list[dict], dict[int, str]]:
    """``(where, {text, timestamp, source?|speaker?, id?, session?})`` rows -> utterances in time order,
    the skipped rows, and response_idx -> source id. A session column is used only when every kept row
    has one; otherwise sessions split at silences longer than ``session_gap``."""
    tz = as_timezone(tz)
    kept, skipped = [], []
    for where, row in rows:
        text, raw = row.get("text"), row.get("timestamp")
        if not isinstance(text, str) or not text.strip():
            skipped.append({"where": where, "timestamp": raw, "reason": "no text"})
            continue
        stamp = parse_document_time(raw, tz)
        if stamp is None:
            missing = raw is None or (isinstance(raw, str) and not raw.strip())
            skipped.append({"where": where, "timestamp": raw,
                            "reason": "missing timestamp" if missing else "unparseable timestamp"})
            continue
        kept.append((stamp, where, row))
    kept.sort(key=lambda x: x[0])  # stable: equal times keep file order
    given = [row.get("session") for _, _, row in kept]
    if kept and all(s not in (None, "") for s in given):
        try:
            sessions = [int(s) for s in given]
        except (TypeError, ValueError) as e:
            raise DataError(f"a 'session' value is not an integer: {e}") from e
    else:
        sessions = assign_sessions([s for s, _, _ in kept], session_gap)
    utterances, source_ids = [], {}
    for i, ((stamp, where, row), session) in enumerate(zip(kept, sessions)):
        source = row.get("source", row.get("speaker")) or ""
        doc_id = str(row.get("id") or where)
        utterances.append(Utterance(i, session, str(source), stamp, row["text"], doc_id))
        source_ids[i] = doc_id
    return utterances, skipped, source_ids


def _conversation_rows(path: Path) -> list[tuple[str, dict]]:
    """A Zyphra-style log as document rows (per-turn ``date_time``), for logs whose reader refused a timestamp."""
    data = read_json(path)
    if not isinstance(data, dict):
        raise DataError(f"{path}: only a Zyphra-style log (one conversation dict) can skip bad timestamps")
    rows = []
    for key in sorted(data, key=lambda k: int(m.group(1)) if (m := SESSION_KEY.fullmatch(k)) else -1):
        m = SESSION_KEY.fullmatch(key)
        if not m or not isinstance(data[key], list):
            continue
        for i, turn in enumerate(data[key]):
            rows.append((f"{path}: {key} turn {i}", {"text": turn.get("text"), "timestamp": turn.get("date_time"),
                                                    "speaker": turn.get("speaker"), "session": int(m.group(1)),
                                                    "id": turn.get("dia_id")}))
    return rows


def load_corpus(path: str | Path, encoder=None, fmt: str = "auto", tz: str | None = None, sample: str | None = None,
                cache_dir: str | Path | None = None, session_gap_minutes: float = 30) -> Corpus:
    """Read documents (CSV / JSONL, ``fmt="documents"``) or a conversation log (Zyphra / LoCoMo .json) into a
    conversation table, embedding the texts with ``encoder`` (cached in ``cache_dir``)."""
    path = Path(path)
    gap = timedelta(minutes=session_gap_minutes)
    if fmt == "auto":
        fmt = "log" if path.suffix.lower() == ".json" else "documents"
    skipped: list[dict] = []
    if fmt == "documents":
        utterances, skipped, source_ids = documents_to_utterances(_read_rows(path), tz, gap)
    elif fmt in ("log", "zyphra", "locomo"):
        try:
            utterances = load_log(path, "auto" if fmt == "log" else fmt, tz, sample, gap)
            source_ids = {u.response_idx: u.turn_id for u in utterances if u.turn_id}
        except DataError as e:
            if "timestamp" not in str(e):
                raise
            utterances, skipped, source_ids = documents_to_utterances(_conversation_rows(path), tz, gap)
    else:
        raise ValueError(f"unknown document format {fmt!r}; use auto, documents, log, zyphra or locomo")
    if not utterances:
        raise DataError(f"{path}: no document with text and a readable timestamp ({len(skipped)} skipped)")
    table = ConversationTable.from_utterances(utterances, encoder, cache_dir)
    return Corpus(table, skipped, source_ids, str(path))


# ---- the question ----------------------------------------------------------------------------------------------
@dataclass
class TrendQuery:
    """What a trend question asks: a topic, a period (or "auto"), a window [start, end) and the table ops
    that select the window's rows."""

    question: str
    topic: str
    period: str
    start: datetime | None
    end: datetime | None
    ops: list[dict]
    notes: list[str] = field(default_factory=list)


def period_from_question(norm: str) -> str | None:
    """"per week", "weekly", "month by month", "each session" -> the period word; None when not said."""
    m = PERIOD_PHRASE.search(norm)
    if m is None:
        return None
    word = m.group(1) or m.group(2) or m.group(3)
    return _ADVERB.get(word, word)


# A word of a topic: letters and digits, with the apostrophes, pluses, hashes and hyphens of "c++", "c#",
# "covid-19" and "rock'n'roll" kept inside it.
TOPIC_WORD = r"[a-z0-9][a-z0-9'+#-]*"
# A verb of saying after a speaker's name: the question asks about what that speaker says.
SAYING = (r"\s+(?:is\s+|was\s+|has\s+been\s+)?(?:talk|say|said|mention|discuss|bring|brought|speak|spoke|writ|"
          r"wrote)\w*")


def extract_topic(norm: str, spans: Sequence[tuple[int, int]], speakers: Sequence[str] = ()) -> str | None:
    """The content words of a normalised question, without time expressions, period and trend words and the
    speakers' names; None when none is left."""
    text = PERIOD_PHRASE.sub(" ", blank_spans(norm, spans))
    _, words = question_content(text, speakers, generic=TOPIC_STOP_WORDS, word=TOPIC_WORD, name=f"({TOPIC_WORD})")
    return " ".join(words) or None


def speaker_of(norm: str, speakers: Sequence[str]) -> str | None:
    """The speaker whose words the question is about ("is Caroline talking more about ...", "did Mel mention"):
    the first of ``speakers`` named in full before a verb of saying."""
    found = speaker_mentions(norm, speakers, whole_name=True, then=SAYING)
    return found[0][2] if found else None


def _as_time(value: str | datetime | None, tz) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value if value is None or value.tzinfo else value.replace(tzinfo=tz)
    parsed = parse_timestamp(value, tz)
    if parsed is None:
        raise ValueError(f"cannot read the time {value!r}; use ISO 8601, e.g. 2023-05-01")
    return parsed


def parse_trend_question(question: str, now: datetime, speakers: Sequence[str] = (), period: str = "auto",
                         topic: str | None = None, start: str | datetime | None = None,
                         end: str | datetime | None = None) -> TrendQuery:
    """Topic, period and window of a trend question; explicit arguments win over what the question says.

    Calendar references give the window's extent (earliest start to latest end); a question with one calendar
    reference that compares or asks about change ("than last month", "since March", "is it growing") runs the
    window on to ``now``. A speaker named as talking ("is Caroline talking more about ...") filters the rows.
    Session references ("over the last 10 sessions") become session operations on the table.
    """
    if period not in ("auto", *PERIODS):
        raise ValueError(f"period must be auto or one of {PERIODS}")
    norm = normalise(question)
    expressions = TimeResolver(now).resolve(question)
    resolved = [e for e in expressions if not e.unresolved]
    notes = [f"time phrase not used: {e.text!r}" for e in expressions if e.unresolved
             and not PERIOD_PHRASE.search(e.text) and e.text not in TREND_WORDS]
    intervals = [iv for e in resolved for iv in (e.intervals or [])]
    w_start = min((a for a, _ in intervals), default=None)
    w_end = max((b for _, b in intervals), default=None)
    if len(intervals) == 1 and w_end < now and COMPARING.search(norm):
        notes.append(f"the question compares: the window runs on from {w_start.date()} to now")
        w_end = now
    tz = now.tzinfo
    w_start = _as_time(start, tz) if start is not None else w_start
    w_end = _as_time(end, tz) if end is not None else w_end
    ops = [{"op": "filter", "column": "timestamp", "cmp": "<=", "value": now.isoformat()}]
    if w_start is not None or w_end is not None:
        lo = (w_start or datetime(1, 1, 2, tzinfo=tz)).isoformat()
        hi = (w_end or now + timedelta(microseconds=1)).isoformat()
        ops.append({"op": "between", "column": "timestamp", "ranges": [[lo, hi]]})
    session_exprs = [e for e in resolved if e.session_ids or e.session_positions]
    ops += [op for op in ops_for(session_exprs, now) if "session" in (op.get("column"), op.get("group"))]
    if topic is None:
        topic = extract_topic(norm, [e.span for e in expressions], speakers)
        if topic is None:
            raise ValueError(f"the question {question!r} names no topic; pass one (topic=... or --topic)")
        notes.append(f"topic read from the question: {topic!r}")
    who = speaker_of(norm, speakers)
    if who is not None:
        ops.append({"op": "filter", "column": "speaker", "cmp": "==", "value": who})
        notes.append(f"counting what {who} says only")
    if period == "auto":
        period = period_from_question(norm) or ("session" if session_exprs else "auto")
    return TrendQuery(question, topic, period, w_start, w_end, ops, notes)


def auto_period(span: timedelta) -> str:
    """The period for a window when the question names none: days up to 3 weeks, weeks up to 5 months, else months."""
    if span <= timedelta(days=21):
        return "day"
    return "week" if span <= timedelta(days=150) else "month"


def calendar_key(ts: pd.Timestamp | datetime, period: str) -> str:
    """The period column's value for a time, as
    :func:`~retrieval.memory.conversation_table.utterance_frame` writes it."""
    if period == "day":
        return ts.strftime("%Y-%m-%d")
    if period == "month":
        return ts.strftime("%Y-%m")
    year, week, _ = ts.isocalendar()
    return f"{year}-W{week:02d}"


def enumerate_periods(period: str, start: datetime, end: datetime, sessions: Sequence[int] = ()) -> list:
    """Every period from ``start`` to ``end`` (inclusive of the one ``end`` falls in), empty ones too.

    Sessions: every session number from the lowest to the highest in ``sessions``.
    """
    if period == "session":
        return list(range(min(sessions), max(sessions) + 1)) if len(sessions) else []
    last = pd.Timestamp(end) - pd.Timedelta(microseconds=1) if pd.Timestamp(end) > pd.Timestamp(start) else end
    days = pd.date_range(pd.Timestamp(start).normalize(), pd.Timestamp(last).normalize(), freq="D")
    return list(dict.fromkeys(calendar_key(d, period) for d in days))


# ---- the analysis ----------------------------------------------------------------------------------------------
@dataclass
class TrendConfig:
    """Settings of one trend analysis (``configs/trends.yaml``; command-line options override)."""

    period: str = "auto"  # auto, day, week, month, session
    topic: str | None = None  # default: read from the question
    start: str | None = None  # window start (ISO); default: from the question, else the first document
    end: str | None = None  # window end, exclusive
    now: str | None = None  # the reference time; default: the last document
    threshold: str = "null"  # null, labelled, fixed
    alpha: float = 0.01  # null threshold: share of off-topic documents allowed through
    threshold_value: float | None = None  # for threshold "fixed"
    labelled: str | None = None  # for "labelled": JSONL of {"text" or "id", "relevant": true|false}
    reference: str | None = None  # for "reference": documents (CSV / JSONL / log) known not to be about the topic
    n_samples: int = 3  # closest relevant documents shown per period
    confirm: str = "none"  # none, stratified (LLM on a stratified sample), binary (the original's search)
    confirm_floor_alpha: float = 0.1  # LLM candidates: above the null threshold at this looser alpha
    confirm_strata: int = 4
    confirm_per_stratum: int = 6
    seed: int = 0

    def __post_init__(self) -> None:
        if self.threshold not in THRESHOLD_METHODS:
            raise ValueError(f"threshold must be one of {THRESHOLD_METHODS}")
        if self.confirm not in CONFIRM_METHODS:
            raise ValueError(f"confirm must be one of {CONFIRM_METHODS}")
        if self.threshold == "fixed" and self.threshold_value is None:
            raise ValueError("threshold 'fixed' needs threshold_value")
        if self.threshold == "labelled" and not self.labelled:
            raise ValueError("threshold 'labelled' needs labelled: a JSONL of {text, relevant}")
        if self.threshold == "reference" and not self.reference:
            raise ValueError("threshold 'reference' needs reference: a file of documents not about the topic")

    @classmethod
    def from_dict(cls, d: dict) -> TrendConfig:
        unknown = set(d) - {f.name for f in fields(cls)}
        if unknown:
            raise ValueError(f"unknown trend settings {sorted(unknown)}")
        return cls(**d)


@dataclass
class PeriodCount:
    """One period: its documents, the relevant ones (an expected count under LLM confirmation) and samples."""

    period: str
    n_docs: int
    n_relevant: float
    samples: list[dict] = field(default_factory=list)

    @property
    def share(self) -> float:
        return self.n_relevant / self.n_docs if self.n_docs else 0.0


@dataclass
class TrendResult:
    """Counts per period and everything needed to trace them."""

    question: str
    topic: str
    period: str
    start: str | None
    end: str | None
    now: str
    threshold: Threshold
    periods: list[PeriodCount]
    n_window: int
    skipped: list[dict]
    n_read: int
    source: str = ""
    confirmation: dict | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def n_relevant(self) -> float:
        return sum(p.n_relevant for p in self.periods)

    def counts(self) -> dict[str, float]:
        return {str(p.period): p.n_relevant for p in self.periods}

    def sample_ids(self) -> set[int]:
        return {s["id"] for p in self.periods for s in p.samples}

    def to_dict(self) -> dict:
        d = asdict(self)
        d["threshold"] = self.threshold.to_dict()
        d["n_relevant"] = self.n_relevant
        for p, pd_ in zip(self.periods, d["periods"]):
            pd_["period"] = str(p.period)
            pd_["share"] = p.share
        return d


def topic_scores(table: ConversationTable, topic: str) -> pd.Series:
    """Cosine of the topic query to every document of the table: (N,) Series indexed by response_idx."""
    hits = table.rank(topic, k=len(table))
    return pd.Series(dict(hits), dtype=np.float64).reindex(table.frame.index)


def read_labelled(path: str | Path) -> list[tuple[str | None, str | None, bool]]:
    """A JSONL of ``{"text" | "id", "relevant": true|false}`` -> [(text, id, relevant)].

    ``id`` names a document of the corpus itself (its source id, e.g. a CSV ``id``, or its response index):
    labelling a few of the corpus's own documents calibrates against the confusers that corpus really holds.
    """
    out = []
    for n, obj in iter_jsonl(path):
        text, doc_id = obj.get("text"), obj.get("id")
        if not isinstance(obj.get("relevant"), bool) or (not isinstance(text, str) and doc_id is None):
            raise DataError(f"{path}:{n}: expected {{\"text\": str or \"id\": ..., \"relevant\": true|false}}")
        out.append((text if isinstance(text, str) else None, None if doc_id is None else str(doc_id),
                    obj["relevant"]))
    return out


def decide_threshold(config: TrendConfig, scores: pd.Series, corpus: Corpus, topic: str) -> Threshold:
    """The threshold the config asks for, from the corpus's scores, a reference corpus or labelled examples."""
    table = corpus.table
    if config.threshold == "fixed":
        return Threshold(float(config.threshold_value), "fixed")
    if config.threshold == "null":
        return null_threshold(scores.to_numpy(), config.alpha)
    if config.threshold == "reference":
        reference = load_corpus(config.reference, table.encoder)
        return reference_threshold(topic_scores(reference.table, topic).to_numpy(), config.alpha)
    labelled = read_labelled(config.labelled)
    row_of = {sid: i for i, sid in corpus.source_ids.items()} | {str(i): i for i in table.frame.index}
    missing = [d for t, d, _ in labelled if t is None and d not in row_of]
    if missing:
        raise DataError(f"{config.labelled}: ids not in the corpus: {missing[:5]}")
    texts = [t for t, _, _ in labelled if t is not None]
    q = table.encode_query(topic)[0]  # (D,)
    text_scores = iter(table.encoder.encode_documents(texts) @ q if texts else [])  # (T,)
    s = [float(next(text_scores)) if t is not None else float(scores.loc[row_of[d]]) for t, d, _ in labelled]
    relevant = [r for _, _, r in labelled]
    return labelled_threshold([x for x, r in zip(s, relevant) if r], [x for x, r in zip(s, relevant) if not r])


def analyse_trend(corpus: Corpus, question: str, config: TrendConfig | None = None, backend=None) -> TrendResult:
    """Count, per period of the window, the documents relevant to the question's topic, and sample them.

    ``backend`` (an LLM backend) is used only when ``config.confirm`` is not "none".
    """
    config = config or TrendConfig()
    table, frame = corpus.table, corpus.table.frame
    now = _as_time(config.now, table.tz) if config.now else table.end.to_pydatetime()
    speakers = sorted(frame["speaker"].unique())
    query = parse_trend_question(question, now, speakers, config.period, config.topic, config.start, config.end)
    notes = list(query.notes)
    rows = execute(query.ops, frame).rows
    start = query.start or (rows["timestamp"].min() if len(rows) else None)
    end = query.end or (rows["timestamp"].max() if len(rows) else None)
    period = query.period
    if period == "auto":
        period = auto_period(end - start) if start is not None else "month"
        notes.append(f"period chosen from the window's length: {period}")
    scores = topic_scores(table, query.topic)
    threshold = decide_threshold(config, scores, corpus, query.topic)
    window = scores.loc[rows.index]
    weights = (window >= threshold.value).astype(np.float64)
    confirmation = None
    if config.confirm != "none":
        if backend is None:
            notes.append("LLM confirmation asked for but no LLM backend given: threshold decisions kept")
        else:
            weights, confirmation = _confirm(config, scores, window, rows, threshold, query.topic, backend, notes)
    keys = rows[PERIOD_COLUMN[period]]
    periods = [] if start is None else enumerate_periods(period, start, end, rows["session"].tolist())
    if start is None:
        notes.append("no documents in the window")
    n_docs = keys.value_counts().to_dict()
    n_rel = weights.groupby(keys).sum().to_dict() if len(rows) else {}
    out = []
    for key in periods:
        members = window[(keys == key) & (weights >= 0.5)].sort_values(ascending=False)
        samples = [_sample(corpus, i, float(s), confirmation) for i, s in members.head(config.n_samples).items()]
        out.append(PeriodCount(key, int(n_docs.get(key, 0)), float(n_rel.get(key, 0.0)), samples))
    return TrendResult(question, query.topic, period, _iso(start), _iso(end), now.isoformat(), threshold, out,
                       len(rows), corpus.skipped, corpus.n_read, corpus.path, confirmation, notes)


def _confirm(config, scores, window, rows, threshold, topic, backend, notes):
    """LLM confirmation over the window's candidates; returns (weights, confirmation summary)."""
    try:
        floor = min(threshold.value, null_threshold(scores.to_numpy(), config.confirm_floor_alpha).value)
    except ValueError as e:  # too few documents for a null: confirm what the threshold kept
        floor = threshold.value
        notes.append(f"LLM candidates: those above the threshold only ({e})")
    texts = rows["text"].to_dict()
    judge = llm_judge(backend, topic)
    cand = window[window >= floor]
    weights = (window >= threshold.value).astype(np.float64)
    if config.confirm == "binary":
        ranked = cand.sort_values(ascending=False).index.tolist()
        count, calls = binary_search_boundary(ranked, texts, judge)
        weights[:] = 0.0
        weights.loc[ranked[:count]] = 1.0
        notes.append(f"binary search (assumes relevance falls monotonically with the score): {count} of "
                     f"{len(ranked)} candidates, {calls} LLM calls")
        return weights, {"method": "binary", "floor": floor, "candidates": len(ranked), "count": count,
                         "calls": calls}
    conf = confirm_stratified(cand.to_dict(), texts, judge, floor, config.confirm_strata,
                              config.confirm_per_stratum, config.seed)
    summary = {**conf.to_dict(), "floor": floor, "candidates": len(cand)}
    if conf.calls and conf.failed_calls == conf.calls:
        notes.append(f"every LLM confirmation call failed ({conf.calls}): threshold decisions kept")
        return weights, summary
    weights[:] = 0.0
    for i, w in conf.weights.items():
        weights.loc[i] = w
    notes.append(f"LLM-confirmed on a stratified sample: {conf.calls} calls over {len(cand)} candidates "
                 f"(score >= {floor:.3f}); inversion rate {conf.inversion_rate}")
    return weights, summary


def _sample(corpus: Corpus, i: int, score: float, confirmation: dict | None) -> dict:
    row = corpus.table.frame.loc[i]
    out = {"id": int(i), "timestamp": row["timestamp"].isoformat(), "speaker": row["speaker"],
           "score": round(score, 4), "text": row["text"]}
    if i in corpus.source_ids and corpus.source_ids[i] != str(i):
        out["source_id"] = corpus.source_ids[i]
    if confirmation and str(i) in confirmation.get("verdicts", {}):
        out["llm"] = confirmation["verdicts"][str(i)]
    return out


def _iso(t) -> str | None:
    return None if t is None else pd.Timestamp(t).isoformat()


# ---- command line ------------------------------------------------------------------------------------------
def load_config(path: str | Path | None, overrides: dict) -> TrendConfig:
    """A :class:`TrendConfig` from a YAML file (optional) with non-None ``overrides`` on top."""
    d: dict = {}
    if path:
        import yaml

        d = yaml.safe_load(Path(path).read_text()) or {}
        d = d.get("trend", d)
    d.update({k: v for k, v in overrides.items() if v is not None})
    return TrendConfig.from_dict(d)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m retrieval.trends.analysis", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    ask = sub.add_parser("ask", help="count, sample, plot and report a topic over time")
    ask.add_argument("question")
    ask.add_argument("--docs", required=True, help="CSV / JSONL of {text, timestamp, source?}, or a Zyphra/LoCoMo log")
    ask.add_argument("--format", default="auto", choices=["auto", "documents", "log", "zyphra", "locomo"])
    ask.add_argument("--sample", help="LoCoMo sample id (default: the first)")
    ask.add_argument("--tz", default="UTC", help="time zone of naive timestamps (default UTC)")
    ask.add_argument("--config", help="YAML of trend settings (e.g. configs/trends.yaml)")
    ask.add_argument("--period", choices=["auto", *PERIODS])
    ask.add_argument("--topic", help="what to count (default: read from the question)")
    ask.add_argument("--start", help="window start, ISO 8601")
    ask.add_argument("--end", help="window end (exclusive), ISO 8601")
    ask.add_argument("--now", help="reference time for relative phrases (default: the last document)")
    ask.add_argument("--threshold", choices=THRESHOLD_METHODS)
    ask.add_argument("--alpha", type=float, help="null threshold: share of off-topic documents let through")
    ask.add_argument("--threshold-value", type=float, help="for --threshold fixed")
    ask.add_argument("--labelled", help="for --threshold labelled: JSONL of {text or id, relevant}")
    ask.add_argument("--reference", help="for --threshold reference: documents (or a log) not about the topic")
    ask.add_argument("--samples", dest="n_samples", type=int, help="closest relevant documents per period")
    ask.add_argument("--confirm", choices=CONFIRM_METHODS, help="LLM confirmation of relevance")
    ask.add_argument("--llm", default=None, help="LLM backend spec for the report and confirmation, or 'none' "
                     "(extractive report; default smollm2)")
    ask.add_argument("--encoder", help="dual encoder checkpoint folder or backbone (default: packaged MiniLM)")
    ask.add_argument("--cache-dir", default="runs/cache/trends", help="embedding cache ('' for none)")
    ask.add_argument("--out", required=True, help="output folder: trend.json, volume.png, report.md")
    args = parser.parse_args(argv)

    from retrieval.memory.temporal_memory import load_encoder
    from retrieval.trends.report import write_trend_outputs

    overrides = {k: getattr(args, k) for k in ("period", "topic", "start", "end", "now", "threshold", "alpha",
                                              "threshold_value", "labelled", "reference", "n_samples", "confirm")}
    try:
        config = load_config(args.config, overrides)
        corpus = load_corpus(args.docs, load_encoder(args.encoder), args.format, args.tz, args.sample,
                             args.cache_dir or None)
    except (DataError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    llm = args.llm or "smollm2"
    backend = None
    if llm != "none":
        try:
            from retrieval.llm import load_backend

            backend = load_backend(json.loads(llm) if llm.lstrip().startswith("{") else llm)
        except Exception as e:  # no LLM: the counts, samples and plot still come out
            print(f"warning: LLM backend {llm!r} unavailable ({type(e).__name__}: {e}); extractive report",
                  file=sys.stderr)
    try:
        result = analyse_trend(corpus, args.question, config, backend)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    paths = write_trend_outputs(result, args.out, backend=backend, config=config)
    print(f"topic: {result.topic!r}  period: {result.period}  window: {result.start} .. {result.end}")
    print(f"threshold: {result.threshold.value:.3f} ({result.threshold.method})  "
          f"documents: {result.n_window} in the window, {len(result.skipped)} skipped (no usable timestamp)")
    for p in result.periods:
        ids = ", ".join(f"#{s['id']}" for s in p.samples)
        print(f"  {p.period!s:>10}  {p.n_relevant:7.1f} / {p.n_docs:<5d} {ids}")
    for note in result.notes:
        print(f"  # {note}")
    for name, path in paths.items():
        print(f"{name}: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
