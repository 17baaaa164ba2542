"""Hypothesis strategies for the property tests of the log and time code: generated logs (sessions, silences, zones
with DST changes) and questions from a small grammar of time phrases.

Imported by test modules (``from time_strategies import ...``; pytest puts ``tests/`` on the path).
"""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

from hypothesis import strategies as st

from retrieval.data.conversation_log import Utterance

UTC = timezone.utc
ZONES = [ZoneInfo("UTC"), ZoneInfo("America/New_York"), ZoneInfo("Europe/Paris"),
         timezone(timedelta(hours=5, minutes=30)), timezone(timedelta(hours=-3))]
NEW_YORK, PARIS = ZONES[1], ZONES[2]
# DST changes (UTC instants, with their zone) that generated logs start near: New York and Paris, forward and back.
DST_CHANGES = [(NEW_YORK, datetime(2024, 3, 10, 7, tzinfo=UTC)), (NEW_YORK, datetime(2024, 11, 3, 6, tzinfo=UTC)),
               (PARIS, datetime(2024, 3, 31, 1, tzinfo=UTC)), (PARIS, datetime(2024, 10, 27, 1, tzinfo=UTC))]
SPEAKERS = ["Ann", "Bob", "Chen Li"]
WORDS = ["pottery", "hiking", "puppy", "job", "kiln", "guitar", "trip", "recipe", "garden", "exam"]
MONTH_NAMES = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
               "November", "December"]
WEEKDAY_NAMES = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
PLAIN_PHRASES = ["earlier this morning", "this morning", "this afternoon", "this evening", "earlier today", "today",
                 "yesterday", "the day before yesterday", "this week", "earlier this week", "last month",
                 "this month", "last week", "last time", "in our last session", "the session before last"]
CONTENT_WORDS = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)


@st.composite
def session_stamps(draw) -> tuple[object, list[list[datetime]]]:
    """(zone, sessions): 1-5 sessions of 1-4 whole-second times in ``zone``, turns under 30 minutes apart and
    sessions more than 30 minutes apart (from half an hour to weeks); half the logs start near a DST change."""
    if draw(st.booleans()):  # within hours of a DST change of the log's zone
        zone, anchor = draw(st.sampled_from(DST_CHANGES))
        t = anchor + timedelta(minutes=draw(st.one_of(st.integers(-150, 90), st.integers(-3000, 3000))))
    else:
        zone = draw(st.sampled_from(ZONES))
        t = draw(st.datetimes(datetime(2019, 1, 1), datetime(2026, 12, 31), timezones=st.just(UTC)))
    t = t.replace(microsecond=0)
    sessions = []
    for s in range(draw(st.integers(1, 5))):
        if s:
            t += timedelta(minutes=draw(st.one_of(st.integers(31, 240), st.integers(240, 60 * 24 * 40))))
        turns = []
        for i in range(draw(st.integers(1, 4))):
            if i:
                t += timedelta(seconds=draw(st.integers(1, 29 * 60)))
            turns.append(t.astimezone(zone))
        sessions.append(turns)
    return zone, sessions


@st.composite
def logs(draw, texts=CONTENT_WORDS) -> tuple[object, list[Utterance]]:
    """(zone, utterances) of a generated log, in order, response_idx = position, sessions numbered from 1."""
    zone, sessions = draw(session_stamps())
    utterances = []
    for s, turns in enumerate(sessions, start=1):
        for i, stamp in enumerate(turns):
            utterances.append(Utterance(len(utterances), s, draw(st.sampled_from(SPEAKERS)), stamp, draw(texts),
                                        f"D{s}:{i + 1}"))
    return zone, utterances


def ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def date_words(draw, d: date) -> str:
    """A date as people write it in a question: with or without its year and weekday, day first or month first."""
    month, form = MONTH_NAMES[d.month - 1], draw(st.integers(0, 4))
    if form == 0:
        return f"{month} {d.day}"
    if form == 1:
        return f"{month} {ordinal(d.day)}, {d.year}"
    if form == 2:
        return f"{WEEKDAY_NAMES[d.weekday()]}, {month} {d.day}"
    if form == 3:
        return f"the {ordinal(d.day)} of {month}"
    return d.isoformat()


@st.composite
def time_phrases(draw, days: list[date]) -> str:
    """A time phrase of the grammar; ``days`` are days worth naming (the log's), besides random ones."""
    def some_day() -> date:
        return draw(st.one_of(st.sampled_from(days), st.dates(date(2018, 1, 1), date(2027, 12, 31))))

    n = draw(st.integers(1, 40))
    kind = draw(st.sampled_from(["date", "month", "ago", "weekday", "session", "between", "month_span", "plain",
                                 "prep", "last_n"]))
    if kind == "date":
        return f"on {date_words(draw, some_day())}"
    if kind == "month":
        d = some_day()
        return f"in {MONTH_NAMES[d.month - 1]}" + (f" {d.year}" if draw(st.booleans()) else "")
    if kind == "ago":
        return f"{n} {draw(st.sampled_from(['days', 'weeks', 'months', 'sessions']))} ago"
    if kind == "weekday":
        return f"{draw(st.sampled_from(['last', 'on', 'this past']))} {draw(st.sampled_from(WEEKDAY_NAMES))}"
    if kind == "session":
        return draw(st.sampled_from([f"in our {ordinal(n)} session", f"in the last {n} sessions",
                                     f"in the first {n} sessions", f"in session {n}"]))
    if kind == "between":
        return f"between {date_words(draw, some_day())} and {date_words(draw, some_day())}"
    if kind == "month_span":
        a, b = draw(st.sampled_from(MONTH_NAMES)), draw(st.sampled_from(MONTH_NAMES))
        return f"from {a} to {b}"
    if kind == "prep":
        return f"{draw(st.sampled_from(['since', 'before', 'after', 'until']))} {date_words(draw, some_day())}"
    if kind == "last_n":
        return f"over the last {n} {draw(st.sampled_from(['days', 'weeks']))}"
    return draw(st.sampled_from(PLAIN_PHRASES))


@st.composite
def questions(draw, days: list[date]) -> str:
    """A question about a time phrase (and sometimes a topic, a speaker or a count)."""
    phrase = draw(time_phrases(days))
    template = draw(st.sampled_from(["What did we discuss {p}?", "Tell me what we talked about {p}.",
                                     "What did {s} say about {c} {p}?", "How many sessions did we have {p}?",
                                     "{p}, what did we chat about?", "What did we say about {c}?"]))
    return template.format(p=phrase, s=draw(st.sampled_from(SPEAKERS)), c=draw(CONTENT_WORDS))


@st.composite
def scenarios(draw) -> tuple[object, list[Utterance], str, datetime]:
    """(zone, utterances, question, now): a generated log, a question about it, and a "now" in the log's zone at
    its end, inside it, after it or before it starts."""
    zone, utterances = draw(logs())
    first, last = (utterances[i].timestamp.astimezone(UTC) for i in (0, -1))  # arithmetic on instants, not walls
    days = sorted({u.timestamp.date() for u in utterances})
    question = draw(questions(days))
    when = draw(st.sampled_from(["end", "inside", "after", "before"]))
    if when == "end":
        now = last
    elif when == "inside":
        now = first + (last - first) * draw(st.floats(0, 1))
    elif when == "after":
        now = last + timedelta(minutes=draw(st.integers(1, 60 * 24 * 90)))
    else:
        now = first - timedelta(minutes=draw(st.integers(1, 60 * 24 * 30)))
    return zone, utterances, question, now.astimezone(zone)
