"""Reading a trend question: its topic, its period, the window it asks about and the speaker it counts.

    query = parse_trend_question("Is Caroline talking more about painting than last month?", now,
                                 speakers=["Caroline", "Melanie"])
    query.topic, query.start, query.end  # 'painting', the first of last month, now
    query.ops  # rows up to now, in the window, Caroline's only
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import overload

from retrieval.data.conversation_log import parse_timestamp
from retrieval.data.timestamps import timestamp_problem
from retrieval.memory.planner import ops_for
from retrieval.memory.question_parts import blank_spans, question_content, speaker_mentions
from retrieval.memory.time_resolver import OPEN_START, TimeResolver, normalise
from retrieval.search.english import ENGLISH_STOP_WORDS
from retrieval.trends.periods import PERIODS

# "per week", "weekly", "month by month": a period the question asks its counts in.
PERIOD_PHRASE = re.compile(r"\b(?:per|each|every|by|a|from|over)\s+(day|week|month|session)s?\b"
                           r"|\b(daily|weekly|monthly)\b|\b(day|week|month|session)[- ](?:by|to|on)[- ]\3\b")
_ADVERB = {"daily": "day", "weekly": "week", "monthly": "month"}
# "each time we talked", "every time they met": per session, said as people say it.
SESSION_PHRASE = re.compile(r"\b(?:each|every)\s+time\s+(?:we|they|you|i|he|she)\s+(?:talk|chat|spoke|speak|met|"
                            r"meet|catch|caught)\w*(?:\s+up)?\b")
# A question that compares or asks about change wants the window to run on to "now".
COMPARING = re.compile(r"\b(?:than|compared?|versus|vs|since|grow\w*|ris\w*|increas\w*|decreas\w*|declin\w*|"
                       r"more|less|fewer|trend\w*|evol\w*|chang\w*|up|down)\b")
# Words of a trend question that say how, not what about, added to the English stop words for reading its topic:
# talking about talk, and about change over time.
TREND_WORDS = frozenset("""
talk talks talked talking discuss discusses discussed discussing discussion discussions say said speak spoke
mention chat chats chatted chatting bring brought write wrote written tell told please show give let like really
come comes came coming go goes went gone crop crops cropped cropping
anything something everything stuff thing things topic topics subject subjects also people person folks everyone
everybody anyone someone users user customers clients feeling feelings feel feels felt sentiment mood opinion
opinions think thinking thought view views attitude attitudes growing grow grows grew growth grown trend trends
trending rising rise rises rose falling fall falls fell declining decline increase increasing increased decrease
decreasing decreased evolve evolves evolving evolved change changes changing changed often frequently frequent
popular popularity interest interested buzz volume volumes much many less fewer least per every compared compare
versus vs mentions mention mentioned mentioning saying says still getting gets got going lately recently
currently period periods daily weekly monthly day days week weeks month months session sessions year years time
times overall general generally amount number count counts chatter conversation conversations notes tweets posts
messages documents meeting meetings since
""".split())
TOPIC_STOP_WORDS = ENGLISH_STOP_WORDS | TREND_WORDS
# A trend word used as a noun is the topic's: after a possessive ("since his fall", "ravi's move") or before a noun
# that stands for the whole affair ("leo's job change thing", "the price rise stuff").
NOUN_USE = re.compile(r"\b(?:(?:my|your|his|her|its|our|their|[a-z0-9]+'s)\s+([a-z]+)"
                      r"|([a-z]+)\s+(?:thing|things|stuff|business|saga|situation|drama|news|story|issue)\b)")
# "since his fall", "since the move": a window that starts at an event, not at a date (dated by the memory:
# retrieval.trends.anchor); the phrase runs to a comma, the period asked or the end
SINCE_EVENT = re.compile(r"\bsince\s+((?:my|your|his|her|its|our|their|the|[a-z0-9]+'s)\s+[a-z0-9' -]*?[a-z0-9])"
                         r"(?=\s*(?:[,.?!;]|$)|\s+(?:per|each|every|by|over|week|month|session|day)\b)")


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
    since_event: str | None = None  # "his fall" of "since his fall": the window starts when that happened


def window_op(start: datetime | None, end: datetime | None, now: datetime) -> dict:
    """The table operation keeping the rows of [``start``, ``end``): an open start from the first row, an open end up
    to ``now`` included."""
    lo, hi = start or OPEN_START, end or now + timedelta(microseconds=1)
    return {"op": "between", "column": "timestamp", "ranges": [[lo.isoformat(), hi.isoformat()]]}


def period_from_question(norm: str) -> str | None:
    """"per week", "weekly", "month by month", "each session" -> the period word; None when not said."""
    m = PERIOD_PHRASE.search(norm)
    if m is None:
        return "session" if SESSION_PHRASE.search(norm) else None
    word = m.group(1) or m.group(2) or m.group(3)
    return _ADVERB.get(word, word)


# A word of a topic: letters and digits, with the apostrophes, pluses, hashes and hyphens of "c++", "c#",
# "covid-19" and "rock'n'roll" kept inside it.
TOPIC_WORD = r"[a-z0-9][a-z0-9'+#-]*"
# A verb of saying after a speaker's name: the question asks about what that speaker says.
SAYING = (r"\s+(?:is\s+|was\s+|has\s+been\s+)?(?:talk|say|said|mention|discuss|bring|brought|speak|spoke|writ|"
          r"wrote)\w*")


def extract_topic(norm: str, spans: Sequence[tuple[int, int]], speakers: Sequence[str] = ()) -> str | None:
    """The content words of a normalised question, without time expressions, period and trend words (unless used
    as a noun, :data:`NOUN_USE`) and the speakers' names; None when none is left."""
    text = SESSION_PHRASE.sub(" ", PERIOD_PHRASE.sub(" ", blank_spans(norm, spans)))
    nouns = {w for m in NOUN_USE.finditer(text) for w in m.groups() if w in TREND_WORDS}
    _, words = question_content(text, speakers, generic=TOPIC_STOP_WORDS - nouns, word=TOPIC_WORD,
                                name=f"({TOPIC_WORD})")
    return " ".join(words) or None


def speaker_of(norm: str, speakers: Sequence[str]) -> str | None:
    """The speaker whose words the question is about ("is Caroline talking more about ...", "did Mel mention"):
    the first of ``speakers`` named in full before a verb of saying."""
    found = speaker_mentions(norm, speakers, whole_name=True, then=SAYING)
    return found[0][2] if found else None


@overload
def as_time(value: str | datetime, tz) -> datetime: ...


@overload
def as_time(value: None, tz) -> None: ...


def as_time(value: str | datetime | None, tz) -> datetime | None:
    """A window bound or "now" as given -> tz-aware datetime: a datetime (a naive one is taken in ``tz``), or text
    that :func:`~retrieval.data.conversation_log.parse_timestamp` reads (else ValueError); None stays None."""
    if value is None or isinstance(value, datetime):
        return value if value is None or value.tzinfo else value.replace(tzinfo=tz)
    parsed = parse_timestamp(value, tz)
    if parsed is None:
        raise ValueError(f"cannot read the time {value!r}: {timestamp_problem(value)[1]} (ISO 8601, e.g. 2023-05-01)")
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
    notes += [e.note for e in resolved if e.note]
    intervals = [iv for e in resolved for iv in (e.intervals or [])]
    w_start = min((a for a, _ in intervals), default=None)
    w_end = max((b for _, b in intervals), default=None)
    if len(intervals) == 1 and w_start is not None and w_end is not None and w_end < now and COMPARING.search(norm):
        notes.append(f"the question compares: the window runs on from {w_start.date()} to now")
        w_end = now
    tz = now.tzinfo
    w_start = as_time(start, tz) if start is not None else w_start
    w_end = as_time(end, tz) if end is not None else w_end
    if w_start is not None and w_end is not None and w_start >= w_end:
        raise ValueError(f"the window starts ({w_start.isoformat()}) at or after it ends ({w_end.isoformat()}): give "
                         "a start before the end")
    ops: list[dict] = [{"op": "filter", "column": "timestamp", "cmp": "<=", "value": now.isoformat()}]
    if w_start is not None or w_end is not None:
        ops.append(window_op(w_start, w_end, now))
    session_exprs = [e for e in resolved if e.session_ids or e.session_positions]
    ops += [op for op in ops_for(session_exprs, now) if "session" in (op.get("column"), op.get("group"))]
    spans = [e.span for e in expressions]
    since = next((m for m in SINCE_EVENT.finditer(norm)
                  if not any(a < m.end() and m.start() < b for a, b in spans)), None)
    if since is not None:  # the event is no part of the topic ("ravi's dad since his fall": ravi's dad)
        spans.append(since.span())
    if topic is None:
        topic = extract_topic(norm, spans, speakers)
        if topic is None:
            raise ValueError(f"the question {question!r} names no topic; pass one (topic=... or --topic)")
        notes.append(f"topic read from the question: {topic!r}")
    who = speaker_of(norm, speakers)
    if who is not None:
        ops.append({"op": "filter", "column": "speaker", "cmp": "==", "value": who})
        notes.append(f"counting what {who} says only")
    if period == "auto":
        period = period_from_question(norm) or ("session" if session_exprs else "auto")
    return TrendQuery(question, topic, period, w_start, w_end, ops, notes,
                      since.group(1) if since is not None and start is None else None)
