"""A long conversation as a table: one row per utterance, metadata columns, and a dense index over the text.

Columns (the schema the planners see): ``response_idx`` (int, also the frame's index and the ids in the
dense index), ``session`` (int), ``speaker``, ``timestamp`` (tz-aware), ``date`` ("YYYY-MM-DD"),
``time`` ("HH:MM:SS"), ``hour`` (0-23), ``weekday`` ("Monday"), ``week`` (ISO, "2023-W19"),
``month`` ("2023-05"), ``year`` and ``text``; then when what the utterance talks about happened, resolved at ingest from
its own words against its timestamp (:mod:`retrieval.memory.event_time`): ``event_start`` / ``event_end`` (tz-aware,
NaT when the utterance names no time), ``event_granularity``, ``event_phrase``, ``event_duration`` and ``event_note``.

The calendar columns are in one zone, :attr:`ConversationTable.zone`: the ``tz`` the table is built with, else the
one zone the log's timestamps are written in, else UTC (:func:`~retrieval.data.timestamps.calendar_zone`); a
table whose log names no zone can be seen in the zone of a question's "now" (:meth:`ConversationTable.frame_in`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime, tzinfo
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from models.encoder import Encoder
from retrieval.data.conversation_log import Utterance
from retrieval.data.timestamps import CalendarZone, calendar_zone
from retrieval.memory.event_time import EVENT_COLUMNS, event_columns
from retrieval.search.bm25 import BM25Retriever
from retrieval.search.cached_index import cached_index
from retrieval.search.dense_index import DenseIndex
from retrieval.search.searcher import DenseSearcher

logger = logging.getLogger(__name__)

QUERY_CACHE_SIZE = 4096
COLUMNS = ("response_idx", "session", "speaker", "timestamp", "date", "time", "hour", "weekday", "week", "month",
           "year", "text", *EVENT_COLUMNS)


def calendar_columns(ts: pd.DatetimeIndex) -> dict[str, object]:
    """The calendar columns of tz-aware times, in their zone: date, time, hour, weekday, ISO week, month, year."""
    iso = ts.isocalendar()
    return {"date": ts.strftime("%Y-%m-%d"), "time": ts.strftime("%H:%M:%S"), "hour": ts.hour,
            "weekday": ts.day_name(), "week": [f"{y}-W{w:02d}" for y, w in zip(iso["year"], iso["week"])],
            "month": ts.strftime("%Y-%m"), "year": ts.year}


def utterance_frame(utterances: Sequence[Utterance], zone: tzinfo | None = None) -> pd.DataFrame:
    """The metadata table of a log: (N utterances) -> DataFrame with :data:`COLUMNS`, indexed by response_idx, its
    times and calendar columns in ``zone`` (None: :func:`~retrieval.data.timestamps.calendar_zone` of the log)."""
    if not utterances:
        raise ValueError("a conversation table needs at least one utterance")
    if any(u.timestamp.tzinfo is None for u in utterances):
        raise ValueError("utterance timestamps must be time-zone aware (the log readers make them so)")
    zone = zone or calendar_zone(None, [u.timestamp for u in utterances]).zone
    ts = pd.DatetimeIndex(pd.to_datetime([u.timestamp for u in utterances], utc=True)).tz_convert(zone)
    frame = pd.DataFrame({
        "response_idx": [u.response_idx for u in utterances],
        "session": [u.session for u in utterances],
        "speaker": [u.speaker for u in utterances],
        "timestamp": ts,
        **calendar_columns(ts),
        "text": [u.text for u in utterances],
    })
    frame = frame.assign(**event_columns(frame["text"].tolist(), list(frame["timestamp"])))
    if frame["response_idx"].duplicated().any():
        dup = frame.loc[frame["response_idx"].duplicated(), "response_idx"].iloc[0]
        raise ValueError(f"response index {dup} occurs twice in the log")
    frame.index = pd.Index(frame["response_idx"].to_numpy())  # unnamed, so "response_idx" stays a plain column
    return frame.sort_values(["timestamp", "response_idx"])


def frame_in_zone(frame: pd.DataFrame, zone: tzinfo) -> pd.DataFrame:
    """A conversation frame with its timestamps and calendar columns in ``zone`` (rows and order unchanged)."""
    ts = pd.DatetimeIndex(frame["timestamp"]).tz_convert(zone)
    out = frame.copy()
    out["timestamp"] = ts
    for name, values in calendar_columns(ts).items():
        out[name] = np.asarray(values)
    return out


def metadata_text(row: pd.Series) -> str:
    """The utterance with its metadata written into the text (the paper's metadata baseline)."""
    return (f"[session {row['session']}, {row['weekday']} {row['date']} {row['time']}, "
            f"response {row['response_idx']}] {row['speaker']}: {row['text']}")


def speaker_texts(frame: pd.DataFrame) -> list[str]:
    """Each utterance as "speaker: text"."""
    return (frame["speaker"] + ": " + frame["text"]).tolist()


def turn_texts(frame: pd.DataFrame) -> list[str]:
    """Each utterance as "speaker: text", after the previous utterance of its session (the turn it answers).

    A short reply ("The Minnesota Wolves!") says what it is about only through the question before it.
    """
    return join_turns(speaker_texts(frame), frame["session"].to_numpy())


def join_turns(own: Sequence[str], sessions: Sequence[int]) -> list[str]:
    """:func:`turn_texts` from each row's "speaker: text" (``own``) and session: each after its predecessor in
    the same session."""
    return list(own[:1]) + [f"{prev}\n{cur}" if s_prev == s_cur else cur
                            for prev, cur, s_prev, s_cur in zip(own, own[1:], sessions, sessions[1:])]


VIEWS = ("text", "turn")  # what a row's ranking text is: the utterance alone, or with the turn it follows


class ConversationTable:
    """The frame of metadata columns plus dense indices over the text, keyed by response_idx.

    ``index`` holds the utterance text alone (what the semantic baselines search); ``turn_index``, when
    built, holds :func:`turn_texts`. BM25 over either view is built on first use.
    """

    def __init__(self, frame: pd.DataFrame, index: DenseSearcher | None = None, encoder: Encoder | None = None,
                 turn_index: DenseSearcher | None = None, zone: CalendarZone | None = None):
        self.frame = frame
        # the zone of the calendar columns, and why (given, the log's, or UTC by default)
        self.zone = zone or CalendarZone(frame["timestamp"].dt.tz, "default")
        self._zoned: dict[str, pd.DataFrame] = {}
        self.index = index
        self.turn_index = turn_index
        self.encoder = encoder
        self.end = frame["timestamp"].max()  # time of the last utterance: the default "now"
        # DualEncoder.identity hashes weights on every call: read it once per table, not per query
        self.encoder_id = index.encoder_id if index is not None else None
        self._bm25: dict[str, BM25Retriever] = {}
        self._query_cache: dict[str, np.ndarray] = {}  # repeated questions in a chat are encoded once

    @classmethod
    def from_utterances(cls, utterances: Sequence[Utterance], encoder: Encoder | None = None,
                        cache_dir: str | Path | None = None,
                        metadata_in_text: bool = False, turns: bool = False,
                        tz: str | tzinfo | None = None) -> ConversationTable:
        """Build the table, its calendar columns in ``tz`` (None: the zone the log is written in, else UTC); with an
        encoder, embed the text (or the metadata text) into a flat IP index, and with ``turns`` also
        :func:`turn_texts` into a second one (twice the encoding, cached)."""
        zone = calendar_zone(tz, [u.timestamp for u in utterances])
        frame = utterance_frame(utterances, zone.zone)
        index = turn_index = None
        if encoder is not None:
            texts = [metadata_text(r) for _, r in frame.iterrows()] if metadata_in_text else frame["text"].tolist()

            def build(texts: list[str]) -> DenseIndex:
                return cached_index(encoder, texts, frame.index.tolist(), cache_dir,
                                    show_progress_bar=len(texts) > 1000)

            index = build(texts)
            turn_index = build(turn_texts(frame)) if turns else None
        return cls(frame, index, encoder, turn_index, zone)

    def __len__(self) -> int:
        return len(self.frame)

    def last_row(self) -> pd.Series | None:
        """The last turn (None for a table without one)."""
        return self.frame.iloc[-1] if len(self.frame) else None

    @property
    def tz(self):
        return self.frame["timestamp"].dt.tz

    def zone_for(self, now: datetime) -> CalendarZone:
        """The zone a question asked at ``now`` (tz-aware) reads its calendar words in: the table's when it was given
        or is the log's own (or matches its offsets), else the zone of ``now``."""
        if self.zone.source == "given" or self.zone.is_the_logs:
            return self.zone
        return calendar_zone(None, (), now) if str(now.tzinfo) != self.zone.name else self.zone

    def frame_in(self, zone: tzinfo) -> pd.DataFrame:
        """The rows with timestamps and calendar columns in ``zone``: the frame itself in its own zone, else a copy
        (kept for the next question in that zone)."""
        if str(zone) == str(self.tz):
            return self.frame
        if str(zone) not in self._zoned:
            self._zoned[str(zone)] = frame_in_zone(self.frame, zone)
        return self._zoned[str(zone)]

    def require_encoder(self) -> Encoder:
        """The table's encoder; a RuntimeError for a table built without one."""
        if self.encoder is None:
            raise RuntimeError("this conversation table was built without an encoder; semantic ranking needs one")
        return self.encoder

    def encode_query(self, text: str) -> np.ndarray:
        """The query's embedding (1, D), cached by text (at most QUERY_CACHE_SIZE entries)."""
        encoder = self.require_encoder()
        if text not in self._query_cache:
            if len(self._query_cache) >= QUERY_CACHE_SIZE:
                self._query_cache.clear()
            # One short text gains nothing from intra-op threads, and on a busy CPU their barriers cost 10-20x
            # (measured: ~70 ms on one thread against ~1.2 s on two, load average 6 on 2 cores).
            threads = torch.get_num_threads()
            torch.set_num_threads(1)
            try:
                self._query_cache[text] = encoder.encode_queries([text])
            finally:
                torch.set_num_threads(threads)
        return self._query_cache[text]

    def clear_query_cache(self) -> None:
        self._query_cache.clear()

    def rank_sparse(self, query: str, k: int, subset: Sequence[int] | None = None,
                    view: str = "text") -> list[tuple[int, float]]:
        """Top-k (response_idx, BM25 score) over "speaker: text" (``view="text"``) or :func:`turn_texts`
        (``view="turn"``), restricted to ``subset`` rows when given."""
        if view not in VIEWS:
            raise ValueError(f"view must be one of {VIEWS}, got {view!r}")
        if view not in self._bm25:  # built on first use: a few milliseconds per thousand rows
            texts = speaker_texts(self.frame) if view == "text" else turn_texts(self.frame)
            self._bm25[view] = BM25Retriever(texts, self.frame.index.tolist())
        return self._bm25[view].search([query], k, subset=subset)[0]

    def rank(self, query: str | np.ndarray, k: int, subset: Sequence[int] | None = None,
             view: str = "text") -> list[tuple[int, float]]:
        """Top-k (response_idx, score) for a query over the text or the turn index, within ``subset`` rows."""
        index = self.index if view == "text" else self.turn_index
        if index is None:
            raise RuntimeError(f"this conversation table has no dense {view} index; build it with an encoder"
                               f"{' and turns=True' if view == 'turn' else ''}")
        emb = self.encode_query(query) if isinstance(query, str) else query
        return index.search(emb, k, subset=subset, encoder_id=self.encoder_id)[0]
