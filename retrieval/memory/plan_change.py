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
15th"). Moves are followed in the order they were said, so a plan moved twice ends on its last day. A question
that asks for the plan itself ("when was it originally?", "when was it supposed to be?") keeps the plan.

A plan, moved or not, also gives way to a **later report** of its event: a row said on or after the planned day
(and no later than now) whose own time, read for the question (:func:`~retrieval.memory.when_clause.clause_time`),
is a day then past within :data:`REPORT_WINDOW` of the planned one, linked to the plan as a move is (its text shares
with the question at least one content word and as many as the plan's row does, or two: a report is told in fewer
words than the plan it overtakes, "dads home! they let him out sunday arvo"): "noodle's getting her teeth done
on the 27th", then "noodle had her teeth out thursday" (the 3rd); "first day was meant to be yesterday, but I ended
up starting today". A report of the planned day itself confirms the plan; either ends the plan's story. A report with
no word of the question ("landed last night at 11" for "when did she get back?") is not linked: the answer then says
first that it comes from a plan (:func:`~retrieval.memory.answer_notes.plan_note`).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

import pandas as pd

from retrieval.memory.event_time import EventTime, event_time_of, mention_events
from retrieval.memory.when_clause import clause_time, sentence_at
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
    if not later.empty:  # worth reading: a row with a verb of moving, or a word that may share a stem with the question
        text = later["text"].astype(str)
        later = later[text.str.contains(_CUE) | text.str.contains(_stem_starts(asked))]
    if later.empty:
        return None
    least = max(1, len(asked & content_stems(str(row["text"]), names)))
    moved, how, reported = None, [], False
    for _, r in later.iterrows():
        found = moved_time(str(r["text"]), r["timestamp"].to_pydatetime())
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
        if not (len(shared) >= least or names_day):
            continue
        link = f"sharing {sorted(shared)} with the question" if shared else f"naming the planned day {t.start.date()}"
        how.append(f"the plan moved: row {r.name} ({r['speaker']}, said {r['timestamp'].isoformat()}), {link}, "
                   f"says {new.phrase!r}: [{new.start.date()}, {new.end.date()}) ({new.granularity})")
        moved, t = r, new
    return None if moved is None else (moved, t, how, reported)


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
    return told, shared
