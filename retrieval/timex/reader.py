"""Reading the time expressions of a text: normalise it, parse it with the grammar, pick the mentions, place each.

    from retrieval.timex import Context, read
    reading = read("The dentist is on the 14th, and we adopted the cat two weeks ago.",
                   Context(datetime(2025, 4, 3, 10, tzinfo=ZoneInfo("Europe/London"))))
    [(m.text, m.start, m.end, m.choices) for m in reading.mentions]

A mention is one stretch of the text that the grammar reads as one time (or duration, or session reference): the
set of mentions covers as much of the text as the grammar can read, and a reading that is only a time when nothing
else is written (a bare "2008", "15") is taken only for a whole phrase (:func:`resolve_phrase`). A time that cannot be
placed is kept with the reason (``unresolved``), never guessed; each placed time keeps the choices made on the way
(:class:`~retrieval.timex.resolve.Choice`), the lean among them, read from the sentence's tense where the context
gives no lean (:mod:`retrieval.timex.tense`).
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import lru_cache

from retrieval.timex import series as S
from retrieval.timex.context import DEFAULT, Context, Conventions
from retrieval.timex.grammar import Node, best_cover
from retrieval.timex.lexicon import FULL_MONTHS, MONTHS
from retrieval.timex.numbers import words_to_digits
from retrieval.timex.places import territories_of
from retrieval.timex.resolve import Choice, Placed, Placer, Unplaceable
from retrieval.timex.rules import GRAMMAR
from retrieval.timex.rules.holidays import in_places
from retrieval.timex.rules.parts import grain_of
from retrieval.timex.tense import lean_of
from retrieval.timex.values import Anaphor, Bound, Duration, SessionRef, Time, Vague, Within

# ---- normalisation ---------------------------------------------------------------------------------------------------
_BESIDE_DAY = re.compile(r"\b([a-z]{4,})(?=\s+\d{1,2}(?:st|nd|rd|th)?\b)"
                         r"|(?<=\d)((?:st|nd|rd|th)?\s+(?:of\s+)?)([a-z]{4,})\b")


def _month_spelling(word: str) -> str:
    """``word`` if it is a month or not close to one; else the month it misspells ("janurary", "febuary"). A word
    that starts with a month's name ("augusta") is left alone."""
    if word in MONTHS or any(word.startswith(m) for m in FULL_MONTHS):
        return word
    close = difflib.get_close_matches(word, FULL_MONTHS, n=1, cutoff=0.85)
    return close[0] if close else word


@lru_cache(maxsize=8192)
def normalise(text: str) -> str:
    """Lower case, number words as digits, typographic quotes and dashes folded, and a misspelt month beside a day
    number corrected. Positions in the result are what mentions' spans refer to."""
    text = text.replace("’", "'").replace("‘", "'").replace("—", " - ").replace("–", " - ")
    text = words_to_digits(text.lower())
    return _BESIDE_DAY.sub(lambda m: _month_spelling(m.group(1)) if m.group(1)
                           else m.group(2) + _month_spelling(m.group(3)), text)


# Words without which a text holds no time expression the grammar reads: a text with none is not parsed.
_CUES = re.compile(r"\d|\b(?:{})\b".format("|".join([
    *sorted(MONTHS), "mon", "tue", "tues", "wed", "weds", "thu", "thur", "thurs", "fri", "sat", "sun", "monday",
    "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "today", "tonight", "tonite", "tomorrow",
    "tmrw", "tmr", "yesterday", "yday", "now", "ago", "day", "days", "week", "weeks", "weekend", "weekends",
    "month", "months", "year", "years", "decade", "decades", "century", "hour", "hours", "minute", "minutes",
    "fortnight", "quarter", "quarters", "morning", "mornings", "afternoon", "evening", "evenings", "night",
    "nights", "noon", "midnight", "spring", "summer", "fall", "autumn", "winter", "season", "recently",
    "lately", "while", "then", "session", "sessions", "conversation", "conversations", "chat", "chats",
    "discussion", "discussions", "meeting", "meetings", "talk", "talks", "time", "times", "response", "message",
    "messages", "christmas", "xmas", "easter", "halloween", "thanksgiving", "valentine", "valentines", "eve",
    "holiday", "holidays", "noughties", "twenties", "thirties", "forties", "fifties", "sixties", "seventies",
    "eighties", "nineties", "eod", "asap", "otd", "moment", "present", "currently", "soon", "nowadays",
    "q1", "q2", "q3", "q4", "h1", "h2", "cy", "ytd", "mtd", "date", "birthday", "juneteenth",
    "matariki", "patrick", "patrick's", "mother's",
    "father's", "labor", "labour", "memorial", "independence", "veterans", "presidents", "columbus", "earth",
    "boxing", "pentecost", "mlk", "cyber", "black", "good", "new", "years"])))


# ---- mentions --------------------------------------------------------------------------------------------------------
@dataclass
class Mention:
    """One time expression of a text: where it stands (``start``, ``end`` in the normalised text), what the grammar
    read (``value``), and, for a time, where it was placed (``interval``: tz-aware ``[start, end)``, its ``grain``
    and the ``choices``) or why it could not be (``unresolved``)."""

    text: str
    span: tuple[int, int]
    value: object
    rule: str
    interval: tuple[datetime, datetime] | None = None
    grain: str | None = None
    point: bool = False
    choices: tuple[Choice, ...] = ()
    unresolved: str | None = None

    @property
    def kind(self) -> str:
        return getattr(self.value, "kind", type(self.value).__name__.lower())

    @property
    def start(self) -> datetime | None:
        return self.interval[0] if self.interval else None

    @property
    def end(self) -> datetime | None:
        return self.interval[1] if self.interval else None

    def to_dict(self) -> dict:
        d: dict[str, object] = {"text": self.text, "span": list(self.span), "kind": self.kind}
        if self.interval:
            d["interval"] = [self.interval[0].isoformat(), self.interval[1].isoformat()]
            d["grain"] = self.grain
        if self.choices:
            d["choices"] = [c.text() for c in self.choices]
        if self.unresolved:
            d["unresolved"] = self.unresolved
        return d


@dataclass
class Reading:
    """A text's time expressions: the normalised text and its mentions, in order."""

    text: str
    normalised: str
    mentions: list[Mention] = field(default_factory=list)

    @property
    def times(self) -> list[Mention]:
        return [m for m in self.mentions if m.interval is not None]


MENTION_TYPES = (Time, Duration, SessionRef, Anaphor, Vague)
# "Leo's last day at Kessler", "our last day in Lisbon", "her first week": after a possessive, an ordinal of a unit
# names someone's event (found in the conversation), not a period counted from now
_POSSESSIVE = re.compile(r"(?:\b(?:my|his|her|our|their|your|its)|\w's|s')\s+$")
_EVENT_ORDINAL = re.compile(r"(?:last|first|final|next)\s+(?:day|night|week|weekend|month|year)s?$")


def _possessed(norm: str, node: Node) -> bool:
    return bool(_EVENT_ORDINAL.match(norm[node.start:node.end]) and _POSSESSIVE.search(norm, 0, node.start))


def _bounds_a_possessor(norm: str, node: Node) -> bool:
    """"before tomorrow's race", "after Friday's game": the time names the race's day, and "before" bounds the race,
    not the time, so the bound is no mention (the time inside it is)."""
    return isinstance(node.value, Bound) and norm.startswith("'s", node.end)


def _mentionable(node: Node, whole: tuple[int, int] | None) -> bool:
    if not isinstance(node.value, MENTION_TYPES):
        return False
    if getattr(node.value, "latent", False):
        return whole is not None and (node.start, node.end) == whole
    return True


def parse(text: str) -> tuple[str, list[Node]]:
    """The normalised text and every node the grammar builds over it."""
    norm = normalise(text)
    if not _CUES.search(norm):
        return norm, []
    return norm, _parse_cached(norm)


@lru_cache(maxsize=4096)
def _parse_cached(norm: str) -> list[Node]:
    return GRAMMAR.parse(norm)


def read(text: str, context: Context, phrase: bool = False) -> Reading:
    """The time expressions of ``text`` placed in ``context``; ``phrase``: the whole text is one expression (a bare
    number or year may then be read as one)."""
    norm, nodes = parse(text)
    reading = Reading(text, norm)
    if not nodes:
        return reading
    whole = None
    if phrase:
        stripped = norm.strip(" ,.;:!?")
        at = norm.find(stripped)
        whole = (at, at + len(stripped))
    chosen = best_cover(nodes, lambda n: _mentionable(n, whole) and not _possessed(norm, n)
                        and not _bounds_a_possessor(norm, n))
    tz = context.reference.tzinfo
    reference = context.reference.replace(tzinfo=None) if tz is not None else context.reference
    sentence = normalise(context.sentence) if context.sentence else norm
    for node in chosen:
        m = Mention(norm[node.start:node.end], (node.start, node.end), node.value, node.rule)
        if isinstance(node.value, Time):
            _place(m, node.value, context, reference, tz, sentence)
        reading.mentions.append(m)
    return reading


def place_value(value: object, context: Context, text: str = "") -> Mention:
    """A value the grammar built (an anchor inside a session reference, a time carried from an earlier turn) placed
    in ``context``, as a mention of ``text``."""
    m = Mention(text, (0, len(text)), value, "value")
    if isinstance(value, Time):
        tz = context.reference.tzinfo
        _place(m, value, context, context.reference.replace(tzinfo=None), tz, normalise(context.sentence or text))
    return m


def _place(m: Mention, value: Time, context: Context, reference: datetime, tz, sentence: str) -> None:
    lean, why = context.lean, "the context says so"
    if lean is None:
        span = _find(sentence, m.text)
        lean, why = lean_of(sentence, span)
    conventions = context.placing
    placer = Placer(reference, conventions, lean, why)
    try:
        p: Placed = placer.place(with_conventions(value, conventions, context.reference))
    except (Unplaceable, OverflowError, ValueError) as e:  # the last two: a date outside the calendar ("year 99999")
        m.unresolved = f"{m.text!r}: {e}"
        return
    m.interval = (_aware(p.start, tz), _aware(p.end, tz))
    m.grain, m.point, m.choices = p.grain, p.point, p.choices


def _find(sentence: str, text: str) -> tuple[int, int] | None:
    at = sentence.find(text)
    return (at, at + len(text)) if at >= 0 else None


def _aware(d: datetime, tz) -> datetime:
    return d if tz is None else d.replace(tzinfo=tz)


# ---- conventions inside values ---------------------------------------------------------------------------------------
def with_conventions(value, conventions: Conventions, reference: datetime | None = None):
    """``value`` with each part of the day given the conventions' hours, an hour that may be in either half of the
    day in the daytime where the conventions read it so, where they count a month's weeks in sevens, its n-th
    weeks so counted (the grammar builds all three with the defaults), and where they read holidays as the places
    of the zone keep them, its holidays so kept (``reference``, tz-aware, gives the zone and the year)."""
    hours = {p: (a, b) for p, a, b in conventions.parts_of_day}
    if conventions.ambiguous_hours == "daytime":
        hours["daytime"] = (7, 19)
    holidays = None
    if reference is not None and conventions.holiday_calendar == "zone":  # the places asked only where a holiday is
        at = reference
        holidays = lambda series: in_places(series, territories_of(at), at.year)  # noqa: E731
    return _retune(value, hours, conventions.week_of_month == "sevens", holidays)


def _month_weeks(fine, coarse_grain: str, sevens: bool) -> bool:
    return sevens and isinstance(fine, S.Cycle) and fine.grain == "week" and coarse_grain == "month"


def _retune(obj, hours: dict, sevens: bool = False, holidays: Callable[[S.Series], S.Series] | None = None):
    if holidays is not None and isinstance(obj, S.Yearly | S.YearlyDays):
        return holidays(obj)
    if isinstance(obj, S.Daily) and obj.grain == "part_of_day":
        for name, (a, b) in hours.items():
            if obj.name == name:
                return dataclasses.replace(obj, offset=timedelta(hours=a), length=timedelta(hours=b - a))
        return obj
    if isinstance(obj, S.Union) and "daytime" in hours and isinstance(obj.a, S.Daily) and isinstance(obj.b, S.Daily):
        lo, hi = hours["daytime"]  # an hour that may be either half of the day: the half in the daytime
        return obj.a if lo * 3600 <= obj.a.offset.total_seconds() < hi * 3600 else obj.b
    if isinstance(obj, S.NthWithin) and _month_weeks(obj.fine, obj.coarse.grain, sevens):
        return dataclasses.replace(obj, fine=S.SevenDays())
    if isinstance(obj, Within) and obj.nth is not None and _month_weeks(obj.fine, grain_of(obj.coarse), sevens):
        return dataclasses.replace(obj, fine=S.SevenDays(), coarse=_retune(obj.coarse, hours, sevens, holidays))
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        changes = {}
        for f in dataclasses.fields(obj):
            if not f.init:
                continue
            v = getattr(obj, f.name)
            if dataclasses.is_dataclass(v) and not isinstance(v, type):
                new = _retune(v, hours, sevens, holidays)
                if new is not v:
                    changes[f.name] = new
        return dataclasses.replace(obj, **changes) if changes else obj
    return obj


def resolve_phrase(text: str, reference: datetime, sentence: str | None = None,
                   conventions: Conventions | None = None, lean: str | None = None) -> Mention | None:
    """The time one phrase denotes, read as a whole: the mention that covers most of it (None when none is placed).
    ``sentence``: the sentence it stands in, whose tense gives the lean when ``lean`` is None."""
    context = Context(reference, lean=lean, sentence=sentence, conventions=conventions or DEFAULT)
    reading = read(text, context, phrase=True)
    placed = [m for m in reading.mentions if m.interval is not None]
    if not placed:
        return None
    return max(placed, key=lambda m: m.span[1] - m.span[0])


__all__ = ["Mention", "Reading", "grain_of", "normalise", "parse", "read", "resolve_phrase"]
