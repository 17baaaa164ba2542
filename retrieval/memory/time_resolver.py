"""Time expressions in a question, resolved against an explicit "now" into intervals and session references.

Absolute dates ("May 8th", "February 21, 2023", "2023-05-08") go to dateparser. The relative language
that dateparser misses or reads as points ("last Tuesday", "over the past 3 days", "5 months ago",
"20 sessions ago", "earlier this morning", "in May") goes through a small deterministic rule layer.
Every calendar reference becomes a half-open interval ``[start, end)`` of whole days or months in
``now``'s time zone; session references become positions (1-based, negative from the end) or session
ids. Phrases that look temporal but match no rule are returned as unresolved, never guessed.

Conventions (chosen from how people use the phrases, and stated so a plan can be read):
- a date or month without a year is the latest one not after now;
- "last Friday" / "on Friday" is the latest Friday before today, or, when we did not talk that day,
  the latest Friday before today that we did talk;
- "over the last N days" is today and the N days before it; "the last/past week" is the last 7 days;
- "N days/months/years ago" is that calendar day/month/year; "last month" the previous calendar month;
  when no conversation fell on that calendar day, "N days ago" reads as elapsed time instead: between
  N and N + 1 whole days before now (someone who talked late on the 13th may call it "38 days ago" on
  the 22nd of the next month at 11:00);
- "N sessions ago" counts back from now: 1 session ago is the latest session;
- "earlier today/this morning" is today before the latest session (the one the user just had),
  and morning/afternoon/evening are soft hour ranges (dropped if they would leave nothing).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import asdict, dataclass
from datetime import date, datetime, time, timedelta
from functools import lru_cache

from retrieval.memory.number_words import words_to_digits

MONTHS = {"january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4, "may": 5,
          "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8, "september": 9, "sept": 9, "sep": 9,
          "october": 10, "oct": 10, "november": 11, "nov": 11, "december": 12, "dec": 12}
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
PARTS_OF_DAY = {"morning": (0, 12), "afternoon": (12, 18), "evening": (17, 24), "night": (18, 24), "day": (0, 24)}

MON = r"(?:{})\.?(?![a-z])".format("|".join(sorted(MONTHS, key=len, reverse=True)))
DAYN = r"(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?(?![\d:])"
YR = r"(?:19|20)\d{2}\b"
DATE = (rf"(?:{MON}\s+{DAYN}(?:,?\s+{YR})?|(?:the\s+)?{DAYN}(?:\s+of)?\s+{MON}(?:,?\s+{YR})?"
        rf"|\d{{4}}-\d{{1,2}}-\d{{1,2}}|\d{{1,2}}/\d{{1,2}}/(?:\d{{4}}|\d{{2}})\b)")
MON_Y = rf"{MON}(?:,?\s+(?:of\s+)?{YR})?"
SESS = r"(?:sessions?|discussions?|conversations?|chats?|talks?|meetings?)"
NUM = r"(\d+|an?)"
TO = r"(?:and|to|through|thru|until|till|-|–)"
RESP = r"(?:responses?|messages?|utterances?)"
RESP_NUM = r"(?:#\s*|number\s+|no\.?\s*)?(\d+)"
PREP = r"(?:since|before|after|until|till|by)"
# "may" and "march" are words too: as bare months they need a preposition before them or a year after.
BARE_MONTH = (rf"(?:(?:(?P<inprep>in|during|of|for|over|since|before|after|until|by|from)\s+(?:the\s+month\s+of\s+)?)"
              rf"(?P<m1>{MON})(?:,?\s+(?P<y1>{YR}))?|(?P<m2>{MON})\s+(?P<y2>{YR})"
              rf"|(?P<m3>(?!may\b|march\b|mar\b){MON})\b)")
_CUE_MONTHS = "|".join(m for m in MONTHS if len(m) > 3 and m not in ("may", "march"))
CUES = re.compile(r"\b(?:\d+\s+\w+\s+ago|ago|yesterday|tomorrow|tonight|weekends?|mornings?|afternoons?|"
                  r"evenings?|weeks?|months?|years?|days?|sessions?|recently|lately|earlier|next|"
                  rf"{'|'.join(WEEKDAYS)}|{_CUE_MONTHS})\b")


@dataclass
class TimeExpression:
    """One resolved (or unresolvable) time expression of a question.

    ``intervals``: [start, end) pairs, tz-aware; ``session_positions``: (first, last), 1-based, negative from
    the end, inclusive; ``session_ids``: (first, last) values of the session column, inclusive;
    ``response_ids``: the same for the response index ("in response number 26"); ``hours``:
    a soft [lo, hi) hour range; ``before_latest_session``: drop the latest session (soft);
    ``alternative_intervals``: a second reading, used when ``intervals`` select no rows; ``nearby_intervals``:
    for one named day, the days either side of it, the last reading when neither of the others selects rows
    (a day misremembered by one: "on June 14th" of a conversation held on the 13th).
    """

    text: str
    span: tuple[int, int]
    kind: str
    intervals: list[tuple[datetime, datetime]] | None = None
    session_positions: tuple[int, int] | None = None
    session_ids: tuple[int, int] | None = None
    response_ids: tuple[int, int] | None = None
    hours: tuple[int, int] | None = None
    before_latest_session: bool = False
    alternative_intervals: list[tuple[datetime, datetime]] | None = None
    nearby_intervals: list[tuple[datetime, datetime]] | None = None
    weekday: str | None = None
    unresolved: str | None = None

    def to_dict(self) -> dict:
        d = {k: v for k, v in asdict(self).items() if v not in (None, False)}
        for key in ("intervals", "alternative_intervals", "nearby_intervals"):
            if d.get(key):
                d[key] = [[a.isoformat(), b.isoformat()] for a, b in d[key]]
        return d


FULL_MONTHS = [max((m for m in MONTHS if MONTHS[m] == n), key=len) for n in range(1, 13)]
# A word beside a day number ("Janurary 17th", "the 3rd of Febuary"), to check for a misspelt month.
_BESIDE_DAY = re.compile(r"\b([a-z]{4,})(?=\s+\d{1,2}(?:st|nd|rd|th)?\b)"
                         r"|(?<=\d)((?:st|nd|rd|th)?\s+(?:of\s+)?)([a-z]{4,})\b")


def _month_spelling(word: str) -> str:
    """``word`` if it is a month or not close to one; else the month it misspells ("janurary", "febuary"). A word
    that starts with a month's name ("augusta") is left alone."""
    if word in MONTHS or any(word.startswith(m) for m in FULL_MONTHS):
        return word
    close = difflib.get_close_matches(word, FULL_MONTHS, n=1, cutoff=0.85)
    return close[0] if close else word


@lru_cache(maxsize=4096)  # the planner and the resolver both normalise each question
def normalise(text: str) -> str:
    """Lower case, number words as digits, typographic quotes and dashes folded, and a misspelt month beside a
    day number corrected."""
    text = text.replace("’", "'").replace("—", " - ").replace("–", " - ")
    text = words_to_digits(text.lower())
    return _BESIDE_DAY.sub(lambda m: _month_spelling(m.group(1)) if m.group(1)
                           else m.group(2) + _month_spelling(m.group(3)), text)


def _n(token: str) -> int:
    return 1 if token in ("a", "an") else int(token)


def _add_months(year: int, month: int, delta: int) -> tuple[int, int]:
    k = year * 12 + (month - 1) + delta
    return k // 12, k % 12 + 1


@lru_cache(maxsize=4096)
def _dateparser(text: str, base: datetime) -> date | None:
    import dateparser  # imported on first use: it takes a second

    settings = {"PREFER_DATES_FROM": "past", "RELATIVE_BASE": base, "REQUIRE_PARTS": ["day", "month"],
                "DATE_ORDER": "MDY"}
    parsed = dateparser.parse(text, languages=["en"], settings=settings)
    return None if parsed is None else parsed.date()


class TimeResolver:
    """Finds and resolves the time expressions of a text against ``now`` (tz-aware)."""

    def __init__(self, now: datetime):
        if now.tzinfo is None:
            raise ValueError("now must be time-zone aware; localise it with the log's time zone")
        self.now = now
        self.today = now.date()

    # ---- calendar helpers -------------------------------------------------------------------
    def day_start(self, d: date) -> datetime:
        return datetime.combine(d, time(), tzinfo=self.now.tzinfo)

    def days(self, first: date, last: date) -> list[tuple[datetime, datetime]]:
        return [(self.day_start(first), self.day_start(last + timedelta(days=1)))]

    def nearby(self, d: date) -> list[tuple[datetime, datetime]]:
        """The day before and the day after ``d``."""
        before, after = d - timedelta(days=1), d + timedelta(days=1)
        return self.days(before, before) + self.days(after, after)

    def month(self, year: int, month: int) -> list[tuple[datetime, datetime]]:
        ny, nm = _add_months(year, month, 1)
        return [(self.day_start(date(year, month, 1)), self.day_start(date(ny, nm, 1)))]

    def latest_month_year(self, month: int, not_after: date | None = None) -> int:
        ref = not_after or self.today
        return ref.year if month <= ref.month else ref.year - 1

    def parse_date(self, text: str, not_after: date | None = None) -> date | None:
        """A date string -> date; without a year, the latest such date not after ``not_after`` (default today)."""
        parsed = _dateparser(text.strip(), datetime.combine(not_after or self.today, time(23, 59)))
        if parsed is None:
            return None
        if not re.search(r"\d{4}|/\d{2}\b", text):
            ref = not_after or self.today
            try:
                parsed = parsed.replace(year=ref.year)
                if parsed > ref:
                    parsed = parsed.replace(year=ref.year - 1)
            except ValueError:  # 29 February
                return None
        return parsed

    def month_of(self, text: str, not_after: date | None = None) -> tuple[int, int]:
        name = re.match(MON, text.strip()).group(0).rstrip(".")
        year = re.search(YR, text)
        month = MONTHS[name]
        return (int(year.group(0)) if year else self.latest_month_year(month, not_after)), month

    # ---- the rules ---------------------------------------------------------------------------
    def resolve(self, text: str) -> list[TimeExpression]:
        """Every time expression in ``text``, in order; unresolvable temporal phrases have ``unresolved`` set."""
        norm = normalise(text)
        taken = [False] * len(norm)
        found: list[TimeExpression] = []
        for pattern, handler in self._rules():
            for m in re.finditer(pattern, norm):
                s, e = m.span()
                if any(taken[s:e]) or s == e:
                    continue
                expr = handler(m)
                if expr is None:
                    continue
                expr.text, expr.span = norm[s:e].strip(), (s, e)
                found.append(expr)
                taken[s:e] = [True] * (e - s)
        for m in CUES.finditer(norm):
            if not any(taken[m.start():m.end()]):
                found.append(TimeExpression(m.group(0), m.span(), "unresolved",
                                            unresolved=f"no rule resolves the time word {m.group(0)!r}"))
        return sorted(found, key=lambda x: x.span)

    def _rules(self):
        return [
            (rf"\b(?:between|from|over)?\s*({DATE})\s+{TO}\s+({DATE})", self._date_span),
            (rf"\b(?:between|from)\s+({MON_Y})\s+{TO}\s+({MON_Y})\b", self._month_span),
            (rf"\b(?:(?P<prep>{PREP})\s+|on\s+)?(?P<d>{DATE})", self._date),
            (rf"\b{RESP}\s+{RESP_NUM}(?:\s+{TO}\s+(?:{RESP}\s+)?{RESP_NUM})?\b", self._response_ids),
            (rf"\b{SESS}\s+(?:#\s*|number\s+)?(\d+)\s+{TO}\s+(?:{SESS}\s+)?(?:#\s*|number\s+)?(\d+)\b",
             self._session_id_span),
            (rf"\b(?:the\s+)?(\d+)(?:st|nd|rd|th)\s+{TO}\s+(?:the\s+)?(\d+)(?:st|nd|rd|th)\s+{SESS}",
             self._session_position_span),
            (rf"\b(?:the\s+|our\s+)?(1st|first|last|past|previous|latest|most\s+recent)\s+(\d+)\s+{SESS}",
             self._first_last_n_sessions),
            (rf"\b{NUM}\s+{SESS}\s+ago\b", self._sessions_ago),
            (rf"\b(?:not\s+(?:the\s+|our\s+)?(?:last|latest|most\s+recent)\s+{SESS}\s*,?\s*but\s+)?"
             rf"(?:the\s+)?(?:1|{SESS})\s+before\s+(?:that|it|the\s+last(?:\s+{SESS})?|last(?:\s+{SESS})?)"
             rf"|\bpenultimate\s+{SESS}", self._before_last_session),
            (rf"\b(?:the\s+)?(\d+)(?:st|nd|rd|th)\s+(?:to|from)\s+(?:the\s+)?last\s+{SESS}", self._nth_to_last),
            (rf"\b(?:our\s+|the\s+|my\s+)?(?:last|latest|most\s+recent|previous|prior)\s+(?:{SESS}|time)\b",
             self._last_session),
            (rf"\b(?:our\s+|the\s+)?(\d+)(?:st|nd|rd|th)\s+{SESS}", self._nth_session),
            (r"\b(?:session|discussion|conversation|chat|meeting)\s+(?:#\s*|number\s+)?(\d+)\b"
             r"(?!\s+(?:days?|weeks?|months?|years?|sessions?|discussions?|conversations?|times?|ago)\b)",
             self._session_id),
            (r"\bearlier\s+(?:today|this\s+(morning|afternoon|evening)|in\s+the\s+(morning|afternoon|evening|day)"
             r"|on)\b", self._earlier_today),
            (r"\b(?:this\s+(morning|afternoon|evening)|(tonight))\b", self._this_part_of_day),
            (r"\btoday\b", lambda m: TimeExpression("", (0, 0), "day", self.days(self.today, self.today))),
            (r"\b(?:the\s+)?day\s+before\s+yesterday\b", lambda m: self._days_ago(2)),
            (r"\byesterday\b", lambda m: self._days_ago(1)),
            (r"\b(?:over|in|during|for|within)?\s*(?:the|this)?\s*(?:last|past|previous)\s+(?:(\d+)\s+)?"
             r"(days?|weeks?|fortnights?)\b", self._last_n_days),
            (r"\b(?:over|in|during|for|within)?\s*(?:the|this)?\s*past\s+(?:(\d+)\s+)?months?\b",
             self._past_months),
            (r"\b(?:over|in|during|for|within)?\s*(?:the|this)?\s*(?:last|previous)\s+(\d+)\s+months\b",
             self._past_months),
            (r"\b(earlier\s+)?this\s+week\b", self._this_week),
            (rf"\b{NUM}\s+(days?|weeks?|months?|years?)\s+ago\b", self._units_ago),
            (r"\b(?:this|the\s+current)\s+(month|year)\b", lambda m: self._calendar_unit(m.group(1), 0)),
            (r"\b(?:last|previous)\s+(month|year)\b", lambda m: self._calendar_unit(m.group(1), -1)),
            (r"\b(?:(last|past|previous|this\s+past|this|next)\s+|on\s+)?({})s?\b".format("|".join(WEEKDAYS)),
             self._weekday),
            (r"\b" + BARE_MONTH, self._month),
            (rf"\b(?:(?P<prep>{PREP})\s+|in\s+|during\s+)({YR})", self._year),
        ]

    # ---- handlers: a regex match -> TimeExpression (text and span are filled in by resolve) ---
    def _expr(self, kind: str, **kw) -> TimeExpression:
        return TimeExpression("", (0, 0), kind, **kw)

    def _with_prep(self, prep: str | None, kind: str, intervals) -> TimeExpression:
        start, end = intervals[0]
        if prep == "since":
            intervals = [(start, self.day_start(self.today + timedelta(days=1)))]
        elif prep in ("before", "until", "till", "by"):
            lo = self.day_start(date(1900, 1, 1))
            intervals = [(lo, start if prep == "before" else end)]
        elif prep == "after":
            intervals = [(end, self.day_start(self.today + timedelta(days=1)))]
        return self._expr(kind if not prep else f"{kind}_{prep}", intervals=intervals)

    def _date_span(self, m: re.Match) -> TimeExpression:
        last = self.parse_date(m.group(2))
        first = self.parse_date(m.group(1), not_after=last) if last else None
        if first is None or last is None:
            return self._expr("date_span", unresolved=f"could not read the dates of {m.group(0).strip()!r}")
        return self._expr("date_span", intervals=self.days(first, last))

    def _month_span(self, m: re.Match) -> TimeExpression:
        y2, m2 = self.month_of(m.group(2))
        y1, m1 = self.month_of(m.group(1), not_after=date(y2, m2, 28))
        ny, nm = _add_months(y2, m2, 1)
        return self._expr("month_span", intervals=[(self.day_start(date(y1, m1, 1)),
                                                    self.day_start(date(ny, nm, 1)))])

    def _date(self, m: re.Match) -> TimeExpression:
        d = self.parse_date(m.group("d"))
        if d is None:
            return self._expr("date", unresolved=f"could not read the date {m.group('d')!r}")
        if m.group("prep"):
            return self._with_prep(m.group("prep"), "date", self.days(d, d))
        return self._expr("date", intervals=self.days(d, d), nearby_intervals=self.nearby(d))

    def _response_ids(self, m: re.Match) -> TimeExpression:
        a = int(m.group(1))
        b = int(m.group(2)) if m.group(2) else a
        return self._expr("response", response_ids=tuple(sorted((a, b))))

    def _session_id_span(self, m: re.Match) -> TimeExpression:
        a, b = sorted((int(m.group(1)), int(m.group(2))))
        return self._expr("session_span", session_ids=(a, b))

    def _session_position_span(self, m: re.Match) -> TimeExpression:
        a, b = sorted((int(m.group(1)), int(m.group(2))))
        return self._expr("session_span", session_positions=(a, b))

    def _first_last_n_sessions(self, m: re.Match) -> TimeExpression:
        n = int(m.group(2))
        first = m.group(1) in ("1st", "first")
        return self._expr("session_span", session_positions=(1, n) if first else (-n, -1))

    def _sessions_ago(self, m: re.Match) -> TimeExpression:
        n = _n(m.group(1))
        return self._expr("relative_session", session_positions=(-n, -n))

    def _before_last_session(self, m: re.Match) -> TimeExpression:
        return self._expr("relative_session", session_positions=(-2, -2))

    def _nth_to_last(self, m: re.Match) -> TimeExpression:
        n = int(m.group(1))
        return self._expr("relative_session", session_positions=(-n, -n))

    def _last_session(self, m: re.Match) -> TimeExpression:
        return self._expr("relative_session", session_positions=(-1, -1))

    def _nth_session(self, m: re.Match) -> TimeExpression:
        n = int(m.group(1))
        return self._expr("session", session_positions=(n, n))

    def _session_id(self, m: re.Match) -> TimeExpression:
        n = int(m.group(1))
        return self._expr("session", session_ids=(n, n))

    def _earlier_today(self, m: re.Match) -> TimeExpression:
        part = m.group(1) or m.group(2)
        return self._expr("earlier_today", intervals=self.days(self.today, self.today),
                          hours=PARTS_OF_DAY.get(part) if part and part != "day" else None,
                          before_latest_session=True)

    def _this_part_of_day(self, m: re.Match) -> TimeExpression:
        part = m.group(1) or "night"
        return self._expr("today", intervals=self.days(self.today, self.today), hours=PARTS_OF_DAY[part])

    def _days_ago(self, n: int) -> TimeExpression:
        d = self.today - timedelta(days=n)
        elapsed = [(self.now - timedelta(days=n + 1), self.now - timedelta(days=n))]
        return self._expr("relative_day", intervals=self.days(d, d), alternative_intervals=elapsed,
                          nearby_intervals=self.nearby(d))

    def _last_n_days(self, m: re.Match) -> TimeExpression:
        n = int(m.group(1) or 1)
        unit = m.group(2).rstrip("s")
        n *= {"day": 1, "week": 7, "fortnight": 14}[unit]
        return self._expr("day_span", intervals=self.days(self.today - timedelta(days=n), self.today))

    def _past_months(self, m: re.Match) -> TimeExpression:
        n = int(m.group(1) or 1)
        y, mo = _add_months(self.today.year, self.today.month, -n)
        start = date(y, mo, min(self.today.day, 28))
        return self._expr("month_span", intervals=self.days(start, self.today))

    def _this_week(self, m: re.Match) -> TimeExpression:
        monday = self.today - timedelta(days=self.today.weekday())
        if m.group(1):  # earlier this week: before today
            if monday == self.today:
                return self._expr("week", unresolved="'earlier this week' on a Monday names no earlier day")
            return self._expr("week", intervals=self.days(monday, self.today - timedelta(days=1)))
        return self._expr("week", intervals=self.days(monday, self.today))

    def _units_ago(self, m: re.Match) -> TimeExpression:
        n, unit = _n(m.group(1)), m.group(2).rstrip("s")
        if unit == "day":
            return self._days_ago(n)
        if unit == "week":
            d = self.today - timedelta(days=7 * n)
            monday = d - timedelta(days=d.weekday())
            return self._expr("relative_week", intervals=self.days(monday, monday + timedelta(days=6)))
        return self._calendar_unit(unit, -n)

    def _calendar_unit(self, unit: str, delta: int) -> TimeExpression:
        if unit == "year":
            y = self.today.year + delta
            return self._expr("year" if delta == 0 else "relative_year",
                              intervals=[(self.day_start(date(y, 1, 1)), self.day_start(date(y + 1, 1, 1)))])
        y, mo = _add_months(self.today.year, self.today.month, delta)
        return self._expr("month" if delta == 0 else "relative_month", intervals=self.month(y, mo))

    def _weekday(self, m: re.Match) -> TimeExpression:
        qualifier, wd = (m.group(1) or "").strip(), WEEKDAYS.index(m.group(2))
        if qualifier == "next":
            return self._expr("weekday", unresolved=f"{m.group(0).strip()!r} lies after now")
        back = (self.today.weekday() - wd) % 7
        if qualifier == "this":  # this week's day, if it has come
            if back > self.today.weekday():
                return self._expr("weekday", unresolved=f"{m.group(0).strip()!r} has not come yet this week")
        elif back == 0:
            back = 7  # "last Friday" said on a Friday is a week ago
        d = self.today - timedelta(days=back)
        return self._expr("weekday", intervals=self.days(d, d), weekday=WEEKDAYS[wd].capitalize())

    def _month(self, m: re.Match) -> TimeExpression:
        name = (m.group("m1") or m.group("m2") or m.group("m3")).rstrip(".")
        year = m.group("y1") or m.group("y2")
        month = MONTHS[name]
        y = int(year) if year else self.latest_month_year(month)
        prep = m.group("inprep")
        return self._with_prep(prep if prep in ("since", "before", "after", "until", "by") else None, "month",
                               self.month(y, month))

    def _year(self, m: re.Match) -> TimeExpression:
        y = int(m.group(2))
        interval = [(self.day_start(date(y, 1, 1)), self.day_start(date(y + 1, 1, 1)))]
        return self._with_prep(m.group("prep"), "year", interval)
