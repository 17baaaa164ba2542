"""A plan's later word: a when-answer read from a plan gives way to a later row that says the plan moved.

"Mom's surgery is scheduled for the 26th", said on 11 March, is a plan (:func:`is_plan`: said before the day it
names); on 27 March "mom's surgery got pushed to april 1st" moves it. Asked "when was the surgery?", the answer is
the 1st of April, not the 26th of March. A row **says a plan moved** when one of its time phrases comes right after
a verb of moving a date and its "to" ("moved to Friday the 21st", "pushed back to April 1st", "they moved us to
Sunday the 30th", "postponed until the 5th", "rescheduled for Monday") or right before "instead of" / "rather than"
("the keys are ready this Friday instead of the 15th") or after "now it's" once a verb of moving was said ("city
bumped the inspection. now it's Monday the 17th"): that phrase is the new time (:func:`moved_time`).

Such a row moves **this** plan, not another, when it is said after the plan and no later than now, and either the
sentence that moves it shares with the question at least one content word and as many as the plan's row does
(:func:`~retrieval.memory.when_neighbours.content_stems`: "mom" and "surgery", as "mom got her results... surgery is
scheduled for the 26th" does; not "mom" alone for "mom's MRI is Monday"), or another of its time phrases names the
planned day itself ("they double booked Saturday the 29th. they moved us to Sunday the 30th", "instead of the
15th"), or, said no later than the planned day, the row shares a word of the plan's own event with the plan's row
(:func:`event_words`: their content words less their time phrases and "get": "city bumped the inspection. now it's
monday the 17th" moves "electrical inspection is on the 14th" asked as "when did the kitchen have its check?").
Moves are followed in the order they were said, so a plan moved twice ends on its last day. A question that asks
for the plan itself ("when was it originally?", "when was it supposed to be?") keeps the plan.

A plan **called off** (:func:`called_off`: "hockey final is off tomorrow", "the semi tomorrow is off", "friday's
cancelled", in the clause that names the planned day, in the plan's own row or a later one that shares its event's
words) takes as its new day the first day to come said in the :data:`OFF_WINDOW` turns of its session after that row
("league says sunday march 2, same time"): the conversation answers "when's it now?" there, often without a verb of
moving or a word of the event.

A plan, moved or not, also gives way to a **later report** of its event: a row said on or after the planned day
(and no later than now) whose own time, read for the question (:func:`~retrieval.memory.when_clause.clause_time`),
is a day then past within :data:`REPORT_WINDOW` of the planned one, linked to the plan as a move is (its text shares
with the question at least one content word and as many as the plan's row does, or two: a report is told in fewer
words than the plan it overtakes, "dads home! they let him out sunday arvo"): "noodle's getting her teeth done
on the 27th", then "noodle had her teeth out thursday" (the 3rd); "first day was meant to be yesterday, but I ended
up starting today". A report of the planned day itself confirms the plan, as does one that also names the planned
day ("kev's mam went home this morning. she reorganised my kitchen since sunday"); either ends the plan's story. A
report with no word of the question ("landed last night at 11" for "when did she get back?") is not linked: the
answer then says first that it comes from a plan (:func:`~retrieval.memory.answer_notes.plan_note`).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

import pandas as pd

from retrieval.memory.event_time import EventTime, event_time_of, mention_events
from retrieval.memory.when_clause import clause_at, clause_time, sentence_at
from retrieval.memory.when_neighbours import content_stems, participant_names

_MOVING = (r"moved|moving|pushed|postponed|rescheduled|re-scheduled|rebooked|re-booked|bumped|changed|delayed|shifted|"
           r"switched|"
           r"put\s+off|put\s+back|brought\s+forward")  # verbs of moving a date
_INSTEAD_WORDS = r"instead\s+of|rather\s+than"
# a verb of moving a date, up to three words, then the preposition the new time follows ("got moved to", "pushed
# back to", "moved us to", "changed the date to", "postponed until"), and the phrase's own "the"
_MOVED_TO = re.compile(rf"\b(?:{_MOVING})\b(?:\s+[a-z']+){{0,3}}?\s+(?:to|until|till|for)\s+(?:the\s+)?$")
_INSTEAD = re.compile(rf"^\s*,?\s*(?:{_INSTEAD_WORDS})\b")
# the new time said as what the plan is now, after a verb of moving ("city bumped the inspection. now it's monday the
# 17th", "they moved it, it's now friday")
_NOW_IS = re.compile(r"\b(?:now\s+(?:it'?s|it\s+is|its|is|it\s+will\s+be)|(?:it'?s|it\s+is|its)\s+now)\s+(?:on\s+)?"
                     r"(?:the\s+)?$")
# rows worth reading with the grammar: a cheap filter over the whole memory's text
_CUE = re.compile(rf"\b(?:{_MOVING}|{_INSTEAD_WORDS})\b", re.IGNORECASE)
_MOVING_WORD = re.compile(rf"\b(?:{_MOVING})\b")
REPORT_SOURCE = "report"  # a when-answer read from a later report that overtook its plan: its own probability
# a question that asks what became of a plan, not what was planned ("when did it finally / actually happen?", "in the
# end", "end up")
ASKS_OUTCOME = re.compile(r"(?i)\b(?:finally|actually|eventually|in\s+the\s+end|end(?:ed)?\s+up)\b")
# a question that asks for the plan itself, not for what became of it
ASKS_PLAN = re.compile(r"\b(?:originally|initially|at\s+first|first\s+(?:planned|scheduled|set)|supposed\s+to|"
                       r"meant\s+to)\b", re.IGNORECASE)
_PREPOSITION = re.compile(r"(?:to|until|till|for)\s+(?:the\s+)?")  # a phrase that holds its own ("until the 5th")


def is_plan(start: datetime, said: datetime) -> bool:
    """Whether a time starting at ``start``, read from a row said at ``said``, names a day after it: what was
    planned."""
    return start.date() > said.date()


def moved_time(text: str, said: datetime) -> tuple[EventTime, str, list[EventTime]] | None:
    """When ``text`` (said at ``said``) says a plan moved: (the new time, the sentence that says so, the row's other
    times); else None."""
    if not _CUE.search(text):
        return None
    norm, mentions = mention_events(text, said)
    timed = [(m, t) for m, t in mentions if isinstance(t, EventTime)]
    for n, (m, t) in enumerate(timed):
        before = norm[max(0, m.span[0] - 80):m.span[0]] + (_PREPOSITION.match(m.text) or [""])[0]
        moved_first = _MOVED_TO.search(before) or (_NOW_IS.search(before) and _MOVING_WORD.search(norm[:m.span[0]]))
        if moved_first or _INSTEAD.match(norm[m.span[1]:]):
            sentence = sentence_at(norm, m.span[0])
            ahead = [x for _, x in mention_events(text, said, lean="future")[1] if isinstance(x, EventTime)]
            new = ahead[n] if len(ahead) == len(timed) else t  # a move names a day to come
            return new, sentence, [o for k, (_, o) in enumerate(timed) if k != n]
    return None


def moved_plan(row: pd.Series, t: EventTime, frame: pd.DataFrame, question: str, now: datetime
               ) -> tuple[pd.Series, EventTime, list[str], bool] | None:
    """Where the plan of ``row`` (its event time ``t``) moved to, by the rows of ``frame`` said after it and no later
    than ``now`` (see the module): (the row that moved it last, the new time, the derivation, whether that row is a
    report of the event rather than a move of its plan), or None."""
    said = row["timestamp"].to_pydatetime()
    if not is_plan(t.start, said) or ASKS_PLAN.search(question):
        return None
    later = frame[(frame["timestamp"] > row["timestamp"]) & (frame["timestamp"] <= now)]
    names = participant_names(frame)
    asked = content_stems(question, names)
    planned = event_words(row, names)  # the plan's own words
    after_off = called_off(row, t, frame)  # the plan called off in its own row, or in a later one that names its day
    for _, r in later[later["text"].astype(str).str.contains(_OFF)].iterrows():
        if event_words(r, names) & (planned | asked):
            after_off |= called_off(r, t, frame)
    if not later.empty:  # worth reading: a row with a verb of moving, a word that may share a stem with the question,
        text = later["text"].astype(str)  # or the new day of a plan called off
        keep = text.str.contains(_CUE) | text.str.contains(_stem_starts(asked)) | later.index.isin(list(after_off))
        later = later[keep]
    if later.empty:
        return None
    least = max(1, len(asked & content_stems(str(row["text"]), names)))
    moved, how, reported = None, [], False
    for _, r in later.iterrows():
        found = moved_time(str(r["text"]), r["timestamp"].to_pydatetime())
        if found is None and r.name in after_off:  # the new day, said right after the plan was called off
            found = after_off[r.name]
        if found is None:
            report = _report(r, t, question, names, asked, least)
            if report is None:
                continue
            new, shared = report
            if (new.start, new.end) != (t.start, t.end):
                how.append(f"a later report: row {r.name} ({r['speaker']}, said {r['timestamp'].isoformat()}), "
                           f"sharing {sorted(shared)} with the question, says {new.phrase!r}: "
                           f"[{new.start.date()}, {new.end.date()}) ({new.granularity})")
                moved, t, reported = r, new, True
            break  # a report of the event, of the planned day or another, ends the plan's story
        new, sentence, others = found
        shared = asked & content_stems(sentence, names)
        names_day = any(o.start.date() == t.start.date() for o in others)
        if r.name in after_off:
            link = "right after the plan was called off"
        elif len(shared) >= least:
            link = f"sharing {sorted(shared)} with the question"
        elif names_day:
            link = f"naming the planned day {t.start.date()}"
        elif r["timestamp"].date() <= t.start.date() and (of_plan := planned & event_words(r, names)):  # before its day
            link = f"sharing {sorted(of_plan)} with the plan's words"
        else:
            continue
        how.append(f"the plan moved: row {r.name} ({r['speaker']}, said {r['timestamp'].isoformat()}), {link}, "
                   f"says {new.phrase!r}: [{new.start.date()}, {new.end.date()}) ({new.granularity})")
        moved, t = r, new
    return None if moved is None else (moved, t, how, reported)


LIGHT_VERBS = {"get", "got"}  # "got the results", "got moved": a light verb, no word of an event
# a plan called off ("the semi tomorrow is off", "hockey final is off tomorrow", "friday's cancelled", "got called
# off"): the day it names is not when the event happens
_OFF = re.compile(r"(?i)(?:\b(?:is|are|was|were|s|it'?s)\s+(?:now\s+|been\s+)?off\b(?!\s+(?:to|for|work|school|sick)\b)"
                  r"|\b(?:cancell?ed|called\s+off|rained\s+out|scrapped)\b)")
OFF_WINDOW = 3  # the turns of its session after a plan called off in which its new day is said (set before any run)


def event_words(row: pd.Series, names: list[str]) -> set[str]:
    """The content stems of ``row``'s text less its time phrases ("cup semi is sunday the 23rd": "cup", "semi"):
    what a plan and the row that moves it share when they speak of the same event."""
    norm, mentions = mention_events(str(row["text"]), row["timestamp"].to_pydatetime())
    for m, _ in sorted(mentions, key=lambda mt: -mt[0].span[0]):
        norm = norm[:m.span[0]] + " " + norm[m.span[1]:]
    return content_stems(norm, names) - LIGHT_VERBS


def called_off(row: pd.Series, t: EventTime, frame: pd.DataFrame) -> dict:
    """When the sentence of ``row`` that names its planned time ``t`` calls the plan off: {the index of the first row
    of its session within :data:`OFF_WINDOW` turns after it that names a day to come: (that time, its sentence, the
    row's other times)}, the plan's new day said without a verb of moving ("hockey final is off tomorrow" ... "league
    says sunday march 2, same time"); else {}."""
    said = row["timestamp"].to_pydatetime()
    norm, mentions = mention_events(str(row["text"]), said)
    at = next((m.span[0] for m, x in mentions if isinstance(x, EventTime)
               and (x.start.date(), x.end.date()) == (t.start.date(), t.end.date())), None)
    if at is None or not _OFF.search(clause_at(norm, at)):
        return {}
    pos = frame.index.get_loc(row.name)
    for p in range(pos + 1, min(pos + 1 + OFF_WINDOW, len(frame))):
        r = frame.iloc[p]
        if r["session"] != row["session"]:
            break
        when = r["timestamp"].to_pydatetime()
        norm, ahead = mention_events(str(r["text"]), when, lean="future")
        timed = [(m, x) for m, x in ahead if isinstance(x, EventTime)]
        new = next(((m, x) for m, x in timed if is_plan(x.start, when) and x.start.date() != t.start.date()), None)
        if new is not None:
            m, x = new
            return {frame.index[p]: (x, sentence_at(norm, m.span[0]), [o for _, o in timed if o is not x])}
    return {}


def _stem_starts(stems: set[str]) -> re.Pattern:
    """A word starting as one of ``stems`` does, less its last letter (a stem may end otherwise than its word:
    "citi", "happi"): a cheap test that passes every text sharing a stem (and some others)."""
    starts = sorted({s[:max(2, len(s) - 1)] for s in stems})
    return re.compile(rf"(?i)\b(?:{'|'.join(map(re.escape, starts))})" if starts else r"(?!)")


REPORT_WINDOW = timedelta(days=7)  # how far from the planned day a report can be of the planned event (not tuned)
_PLANNED_DAYS = ("day", "weekend")  # plans a report can overtake: a day's, a weekend's (not "in March")


def _report(r: pd.Series, t: EventTime, question: str, names: list[str], asked: set[str], least: int
            ) -> tuple[EventTime, set[str]] | None:
    """(the time row ``r`` reports, the question's words it shares) when it reports the event planned for ``t`` (see
    the module); else None."""
    said = r["timestamp"].to_pydatetime()
    if t.granularity not in _PLANNED_DAYS or said.date() < t.start.date():
        return None
    shared = asked & content_stems(str(r["text"]), names)
    if len(shared) < min(least, 2):
        return None
    told = event_time_of(r)
    clause = clause_time(r, question, names) if told is not None else None
    if clause is not None:
        told = clause[0]
    if (told is None or told.granularity not in _PLANNED_DAYS or is_plan(told.start, said)
            or abs((told.start - t.start).total_seconds()) > REPORT_WINDOW.total_seconds()):
        return None
    if told.start.date() != t.start.date() and _names_day(r, t):  # "went home this morning ... since sunday"
        return t, shared
    return told, shared


def _names_day(r: pd.Series, t: EventTime) -> bool:
    """Whether a time phrase of row ``r`` starts on the planned day of ``t`` (the day itself, or a stretch from it:
    "since sunday"): a report that names the planned day confirms it, whatever else it tells."""
    _, mentions = mention_events(str(r["text"]), r["timestamp"].to_pydatetime())
    return any(isinstance(x, EventTime) and x.start.date() == t.start.date() for _, x in mentions)


def unmoved_plans(readings: dict) -> list:
    """Of ``readings`` (a ranked row's index: the row its time came from, the time, its source, the derivation), the
    indices whose time is a plan that nothing moved, called off or reported, when some other reading is not one: what
    a question asking what became of a plan (:data:`ASKS_OUTCOME`: "when did the countertops finally go in?") leaves
    out, since a plan still standing says what was meant to happen ("sink gets hooked up tuesday"), not what did
    ("counters went in friday!!"); else []."""
    plans = [i for i, (r, t, source, _) in readings.items() if source not in ("timestamp", REPORT_SOURCE)
             and r.name == i and is_plan(t.start, r["timestamp"].to_pydatetime())]
    return plans if len(plans) < len(readings) else []
