"""A living memory: a conversation table that turns are appended to, each batch durable when it returns, whichever
engine keeps it (a folder: :class:`~retrieval.memory.memory_folder.MemoryFolder`; a PostgreSQL database:
:class:`~retrieval.memory.postgres.memory.PostgresMemory`).

**Appending** (:meth:`LivingMemory.add_many`): the new rows' texts are encoded (only theirs), the rows are committed
to the engine in one transaction (from then on they are durable), and the table's dense and sparse indices extended
(a flat FAISS index takes the new rows as they are, BM25 adds them to its open tail: no rebuild of what exists).
Questions asked afterwards see them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from models.encoder import Encoder
from retrieval.data.conversation_log import Utterance
from retrieval.data.timestamps import calendar_zone, instant, read_timestamp, timestamp_problem, zone_name
from retrieval.memory.live_rows import own_texts, turn_roles, utterance_records, view_texts
from retrieval.memory.live_table import LiveTable
from retrieval.memory.store import MemoryStore

FUTURE_SKEW = timedelta(minutes=10)  # how far past this machine's clock a turn's time may be (clocks disagree)


@dataclass
class Appended:
    """What an append did: each turn's row (an exact duplicate's is the row it repeats), and how many were
    duplicates, skipped."""

    ids: list[int]
    skipped: int


class LivingMemory:
    """A memory's store, encoder and growing table, with the rules a turn is appended by; an engine writes the rows
    (:meth:`_persist`) and releases what it holds (:meth:`close`). ``path``: what messages name it by."""

    path: Path | str

    def __init__(self, store: MemoryStore, encoder: Encoder, table: LiveTable, views: tuple[str, ...],
                 gap: timedelta):
        self.store, self.encoder, self.table = store, encoder, table
        self.views, self.gap = views, gap
        self.roles: dict[int, str] = store.roles()  # the rows that are not utterances (questions, LLM answers)

    def new_rows(self, turns: Sequence[dict]) -> tuple[dict[str, list], list[int | None]]:
        """The rows of ``turns`` ({"speaker", "text", "timestamp"?, "session"?}) after the memory's last, and per
        turn the row it already is (an exact duplicate: same time, speaker and text as a row of the memory or an
        earlier turn of ``turns``; skipped, so an import run twice adds nothing) or None (a new row). New rows:
        response index continued, timestamp now when absent (or the last turn's, when now is before it; naive: the
        memory's zone), session by the gap rule
        unless given. ValueError, naming the turn, for a timestamp before the last turn's (not a duplicate), after
        this machine's clock by more than :data:`FUTURE_SKEW`, or a session number going back."""
        last = self.table.last_row()
        position = len(self.table)
        prev_ts = None if last is None else last["timestamp"].to_pydatetime()
        prev_session = 0 if last is None else int(last["session"])
        stored_end = None if prev_ts is None else instant(prev_ts)  # the memory's rows end here (a batch adds after)
        latest = datetime.now(timezone.utc) + FUTURE_SKEW
        utterances: list[Utterance] = []
        repeats: list[int | None] = []
        seen: dict[tuple[datetime, str, str], int] = {}
        for n, turn in enumerate(turns):
            where = f"turn {n}" + (f" ({turn['where']})" if turn.get("where") else "")
            ts = self._timestamp(turn.get("timestamp"), where)
            if turn.get("timestamp") is None and prev_ts is not None and instant(ts) < instant(prev_ts):
                ts = prev_ts  # "now" is never before the memory's last turn (a clock set back, a fast one before)
            text, speaker = turn.get("text"), turn.get("speaker")
            if not isinstance(text, str) or not isinstance(speaker, str):
                raise ValueError(f"{where}: a turn needs a speaker and a text (strings), got {speaker!r}, {text!r}")
            key = (instant(ts), speaker, text)
            repeat = seen.get(key)
            if repeat is None and stored_end is not None and instant(ts) <= stored_end:  # only where rows already are
                repeat = self._stored(key)
            repeats.append(repeat)
            if repeat is not None:
                continue
            if instant(ts) > latest:
                raise ValueError(f"{where}: timestamp {ts.isoformat()} is after this machine's clock "
                                 f"({datetime.now(timezone.utc).isoformat(timespec='seconds')}) by more than "
                                 f"{FUTURE_SKEW}; a turn from the future is refused, so that it cannot block the "
                                 "turns after it")
            if prev_ts is not None and instant(ts) < instant(prev_ts):
                raise ValueError(f"{where}: timestamp {ts.isoformat()} is earlier than the memory's last turn "
                                 f"({prev_ts.isoformat()}); a memory is appended in time order")
            session = turn.get("session")
            if session is None:  # the JSONL reader's rule: a new session after a silence longer than the gap
                same = prev_ts is not None and instant(ts) - instant(prev_ts) <= self.gap
                session = prev_session if same else prev_session + 1
            elif int(session) < prev_session:
                raise ValueError(f"{where}: session {session} comes before the memory's last session {prev_session}")
            seen[key] = position + len(utterances)
            utterances.append(Utterance(position + len(utterances), int(session), speaker, ts, text,
                                        str(turn.get("turn_id", ""))))
            prev_ts, prev_session = ts, int(session)
        return utterance_records(utterances, self.table.zone.zone), repeats

    def _stored(self, key: tuple[datetime, str, str]) -> int | None:
        """The row of the memory with this (time, speaker, text), if any (rows are in time order: a binary search
        for the time, then the few rows at that time compared)."""
        frame = self.table.frame
        if not len(frame):
            return None
        stamps, at = frame["timestamp"], pd.Timestamp(key[0])
        lo, hi = stamps.searchsorted(at, "left"), stamps.searchsorted(at, "right")
        for i in range(lo, hi):
            if frame["speaker"].iat[i] == key[1] and frame["text"].iat[i] == key[2]:
                return int(frame.index[i])
        return None

    def first_zone(self, turns: Sequence[dict]) -> None:
        """A memory made without a zone takes the one its first turns are written in (as a log read from a file
        does), and records it: its calendar, and every time it prints, are then in that zone."""
        if len(self.table) or self.store.get_meta("tz") is not None:
            return
        stamps = []
        for n, turn in enumerate(turns):
            value = turn.get("timestamp")
            if isinstance(value, str | datetime):
                stamps.append(self._timestamp(value, f"turn {n}"))
        zone = calendar_zone(None, stamps)
        if zone.is_the_logs:
            self.store.set_meta("tz", zone_name(zone.zone))
            self.store.set_meta("tz_source", zone.source)
            self.table.zone = zone
            self.table._zoned.clear()

    def _timestamp(self, value, where: str) -> datetime:
        if value is None:
            return datetime.now(timezone.utc).astimezone(self.table.zone.zone)
        if isinstance(value, str):
            parsed = read_timestamp(value)
            if parsed is None:
                raise ValueError(f"{where}: cannot read the timestamp {value!r}: {timestamp_problem(value)[1]} "
                                 "(ISO 8601, e.g. 2023-10-22T12:00:00+02:00)")
            value = parsed
        if not isinstance(value, datetime):
            raise ValueError(f"{where}: a timestamp is an ISO 8601 string or a datetime, not {type(value).__name__}")
        return value.replace(tzinfo=self.table.zone.zone) if value.tzinfo is None else value

    def add_many(self, turns: Sequence[dict], embeddings: dict[str, np.ndarray] | None = None,
                 show_progress_bar: bool = False) -> Appended:
        """Append ``turns`` as one transaction (:meth:`new_rows`: exact duplicates skipped); each turn's row.
        ``embeddings`` (view -> (N, D), a row per turn): the vectors made elsewhere by this memory's encoder (a
        benchmark's cached encodings); else encoded."""
        if not turns:
            return Appended([], 0)
        self.first_zone(turns)
        rows, repeats = self.new_rows(turns)  # columns of Python values: a frame costs ms per turn (live_rows)
        roles = turn_roles([t for t, r in zip(turns, repeats) if r is None], rows["response_idx"])
        ids = iter(rows["response_idx"])
        appended = Appended([next(ids) if r is None else r for r in repeats], sum(r is not None for r in repeats))
        n = len(rows["response_idx"])
        if n == 0:
            return appended
        if embeddings is not None and n != len(turns):  # the caller's vectors are per turn: keep the new ones'
            keep = [i for i, r in enumerate(repeats) if r is None]
            embeddings = {v: e[keep] for v, e in embeddings.items()}
        previous = self.table.last_row()
        dense = view_texts(rows, previous, self.views)
        if embeddings is None:
            embeddings = {v: self.encoder.encode_documents(dense[v], show_progress_bar=show_progress_bar)
                          for v in self.views}
        for v in self.views:
            if embeddings[v].shape != (n, self.encoder.dim):
                raise ValueError(f"{v} embeddings of shape {embeddings[v].shape} for {n} rows")
        sparse = {v: own_texts(rows) if v == "text" else dense[v] for v in self.views}
        self._persist(rows, roles, embeddings, sparse)  # durable from here on
        self.roles.update(roles)
        self.table.append(rows, embeddings, sparse)
        return appended

    def _persist(self, rows: dict[str, list], roles: dict[int, str], embeddings: dict[str, np.ndarray],
                 sparse: dict[str, list[str]]) -> None:
        """Write new rows, their vectors (``embeddings`` per view) and BM25 texts (``sparse`` per view), durable
        when it returns."""
        raise NotImplementedError

    def close(self) -> None:
        """Write what a reopen reads fast, then release the engine (and the memory's writer lock)."""
        raise NotImplementedError

    def alive(self) -> bool:
        """Whether the engine still answers (a folder always does; a database after a restart may not)."""
        return True
