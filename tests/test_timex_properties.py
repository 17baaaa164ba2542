"""Properties of the time grammar (:mod:`retrieval.timex`) over generated phrases (Hypothesis; profiles in
hypothesis_profiles): intervals run forwards, a composed phrase lies inside its parts (and a range of dates spans
them), shifts forward and back invert, a reading is deterministic, a weekday leans the way it is told, and two-digit
years stay in their century window. References are random instants in several zones, and instants near the DST
changes of New York and Paris."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, datetime, timedelta, timezone

import hypothesis_profiles  # noqa: F401  (registers and loads the profiles)
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from time_strategies import DST_CHANGES, MONTH_NAMES, WEEKDAY_NAMES, ZONES, ordinal

from retrieval.timex import DEFAULT, QUESTION, UTTERANCE, Context, read, resolve_phrase
from retrieval.timex.calendar import nth_weekday, two_digit_year
from retrieval.timex.reader import _parse_cached, normalise

UTC = timezone.utc
LEANS = st.sampled_from([None, "past", "future"])
# any instant, or one within two days of a DST change (in the zone that changes)
REFERENCES = st.one_of(
    st.datetimes(datetime(1995, 1, 1), datetime(2035, 12, 31), timezones=st.sampled_from(ZONES),
                 allow_imaginary=False).map(lambda d: d.replace(microsecond=0)),
    st.tuples(st.sampled_from(DST_CHANGES), st.integers(-48 * 60, 48 * 60)).map(
        lambda c: (c[0][1] + timedelta(minutes=c[1])).astimezone(c[0][0])))
DATES = st.one_of(st.dates(date(1995, 1, 1), date(2035, 12, 31)),
                  st.sampled_from([at.date() for _, at in DST_CHANGES]))


def instants(interval: tuple[datetime, datetime]) -> tuple[datetime, datetime]:
    """An interval as UTC instants: datetimes sharing one tzinfo compare by wall time, fold ignored."""
    return interval[0].astimezone(UTC), interval[1].astimezone(UTC)


def inside(inner: tuple[datetime, datetime], outer: tuple[datetime, datetime]) -> bool:
    (a, b), (c, d) = instants(inner), instants(outer)
    return c <= a <= b <= d


def placed(text: str, reference: datetime, lean: str | None = None, conventions=DEFAULT):
    """The mention ``text`` names as a whole phrase; fails the test when it is not placed."""
    m = resolve_phrase(text, reference, conventions=conventions, lean=lean)
    assert m is not None, (text, reference.isoformat(), lean)
    return m


def date_text(draw, d: date) -> str:
    """A date with its year, as people write it."""
    month = MONTH_NAMES[d.month - 1]
    return draw(st.sampled_from([f"{month} {d.day}, {d.year}", f"{d.day} {month} {d.year}", d.isoformat(),
                                 f"the {ordinal(d.day)} of {month} {d.year}"]))


@st.composite
def phrases(draw) -> str:
    """A time phrase built from the grammar's parts."""
    n = draw(st.integers(1, 30))
    weekday, month = draw(st.sampled_from(WEEKDAY_NAMES)), draw(st.sampled_from(MONTH_NAMES))
    kind = draw(st.sampled_from(["weekday", "month day", "ago", "in", "pick", "nth weekday", "range", "clock"]))
    if kind == "weekday":
        return weekday
    if kind == "month day":
        return f"{month} {draw(st.integers(1, 28))}"
    if kind == "ago":
        return f"{n} {draw(st.sampled_from(['days', 'weeks', 'months', 'years']))} ago"
    if kind == "in":
        return f"in {n} {draw(st.sampled_from(['days', 'weeks', 'months']))}"
    if kind == "pick":
        return f"{draw(st.sampled_from(['next', 'last', 'this']))} " \
               f"{draw(st.sampled_from([weekday, month, 'week', 'month', 'year']))}"
    if kind == "nth weekday":
        return f"the {ordinal(draw(st.integers(1, 4)))} {weekday} of {month} {draw(st.integers(1995, 2035))}"
    if kind == "range":
        return f"from {date_text(draw, draw(DATES))} to {date_text(draw, draw(DATES))}"
    return f"{date_text(draw, draw(DATES))} at {draw(st.integers(1, 11))}{draw(st.sampled_from(['am', 'pm']))}"


# ---- intervals run forwards ------------------------------------------------------------------------------------------
def check_forward(phrase: str, reference: datetime, lean: str | None) -> None:
    m = placed(phrase, reference, lean)
    assert m.interval[0].tzinfo is not None and m.interval[1].tzinfo is not None, m
    start, end = instants(m.interval)
    assert start <= end, (phrase, reference.isoformat(), lean, m.interval)
    assert m.text == normalise(phrase), ("the whole phrase is one mention", m.text)
    for other in read(phrase, Context(reference, lean=lean)).times:
        a, b = instants(other.interval)
        assert a <= b, (phrase, other)


@given(phrase=phrases(), reference=REFERENCES, lean=LEANS)
def test_every_interval_runs_forwards(phrase, reference, lean):
    check_forward(phrase, reference, lean)


@pytest.mark.slow
@settings(hypothesis_profiles.SLOW)
@given(phrase=phrases(), reference=REFERENCES, lean=LEANS)
def test_every_interval_runs_forwards_many(phrase, reference, lean):
    check_forward(phrase, reference, lean)


# ---- a composed phrase lies inside its parts -------------------------------------------------------------------------
@given(weekday=st.sampled_from(WEEKDAY_NAMES), reference=REFERENCES, lean=LEANS)
def test_a_weekday_of_next_week_lies_in_next_week(weekday, reference, lean):
    day = placed(f"{weekday} of next week", reference, lean)
    week = placed("next week", reference, lean)
    assert day.grain == "day" and week.grain == "week"
    assert inside(day.interval, week.interval), (day.interval, week.interval)
    assert day.interval[0].weekday() == WEEKDAY_NAMES.index(weekday)


@given(n=st.integers(1, 4), month=st.integers(1, 12), year=st.integers(1995, 2035), reference=REFERENCES)
def test_the_nth_week_of_a_month_has_its_thursday_in_that_month(n, month, year, reference):
    week = placed(f"the {ordinal(n)} week of {MONTH_NAMES[month - 1]} {year}", reference)
    start, end = (d.replace(tzinfo=None) for d in week.interval)
    assert week.grain == "week" and start.weekday() == 0 and end - start == timedelta(days=7), week.interval
    thursday = start + timedelta(days=3)
    assert (thursday.year, thursday.month) == (year, month), week.interval
    # the n-th of them: n - 1 earlier Thursdays in the month
    assert (thursday.day - 1) // 7 == n - 1, week.interval


@given(n=st.integers(1, 5), weekday=st.integers(0, 6), month=st.integers(1, 12), year=st.integers(1995, 2035),
       reference=REFERENCES, lean=LEANS)
def test_the_nth_weekday_of_a_month_is_that_day_or_declined(n, weekday, month, year, reference, lean):
    text = f"the {ordinal(n)} {WEEKDAY_NAMES[weekday]} of {MONTH_NAMES[month - 1]} {year}"
    expected = nth_weekday(year, month, weekday, n)
    (m,) = read(text, Context(reference, lean=lean), phrase=True).mentions
    if expected is None:  # a fifth one the month does not have
        assert m.interval is None and m.unresolved, m
    else:
        assert m.interval[0].date() == expected and m.grain == "day", m.interval


@given(d=DATES, hour=st.integers(1, 11), reference=REFERENCES, lean=LEANS)
def test_a_clock_time_on_a_date_lies_in_that_date(d, hour, reference, lean):
    day_text = f"{MONTH_NAMES[d.month - 1]} {d.day}, {d.year}"
    day = placed(day_text, reference, lean)
    clock = placed(f"{day_text} at {hour}pm", reference, lean)
    assert inside(clock.interval, day.interval), (clock.interval, day.interval)
    assert clock.interval[0].replace(tzinfo=None) == datetime(d.year, d.month, d.day, 12 + hour)


@given(month=st.integers(1, 12), year=st.integers(1995, 2035), reference=REFERENCES, lean=LEANS)
def test_the_halves_of_a_month_lie_in_it_and_meet(month, year, reference, lean):
    name = f"{MONTH_NAMES[month - 1]} {year}"
    whole = placed(name, reference, lean)
    first, second = (placed(f"the {h} half of {name}", reference, lean) for h in ("first", "second"))
    assert whole.interval[0].replace(tzinfo=None) == datetime(year, month, 1)
    assert inside(first.interval, whole.interval) and inside(second.interval, whole.interval)
    assert first.interval[0] == whole.interval[0] and second.interval[1] == whole.interval[1]
    assert first.interval[1] == second.interval[0], (first.interval, second.interval)


# ---- shifts forward and back invert ----------------------------------------------------------------------------------
@given(d=DATES, n=st.integers(1, 400), unit=st.sampled_from(["days", "weeks"]), reference=REFERENCES, lean=LEANS)
def test_a_shift_after_then_before_gives_back_the_date(d, n, unit, reference, lean):
    text = f"{MONTH_NAMES[d.month - 1]} {d.day}, {d.year}"
    after = placed(f"{n} {unit} after {text}", reference, lean)
    moved = after.interval[0].date()
    assert moved == d + (timedelta(days=n) if unit == "days" else timedelta(weeks=n)), after.interval
    back = placed(f"{n} {unit} before {MONTH_NAMES[moved.month - 1]} {moved.day}, {moved.year}", reference, lean)
    assert back.interval[0].date() == d and back.grain == "day", back.interval


@given(n=st.integers(1, 400), reference=REFERENCES)
def test_in_n_days_and_n_days_ago_meet_on_the_day_between(n, reference):
    """Said N days before a day, "in N days" names it; said N days after it, "N days ago" names the same day."""
    ahead = placed(f"in {n} days", reference)
    later = reference + timedelta(days=2 * n)  # the same wall clock, 2N calendar days on
    back = placed(f"{n} days ago", later)
    assert ahead.interval[0].date() == back.interval[0].date() == reference.date() + timedelta(days=n)
    assert ahead.grain == back.grain == "day"


# ---- determinism -----------------------------------------------------------------------------------------------------
SENTENCES = ["We met {p}.", "I will see her {p}.", "The report was filed {p}, the firm said.", "{p} works for me",
             "Let's talk about what happened {p} and what comes next"]


@given(phrase=phrases(), template=st.sampled_from(SENTENCES), reference=REFERENCES, lean=LEANS)
def test_a_reading_is_deterministic(phrase, template, reference, lean):
    text = template.format(p=phrase)
    context = Context(reference, lean=lean)

    def outcome():
        return [(m.text, m.span, m.interval, m.grain, m.choices, m.unresolved) for m in read(text, context).mentions]

    first = outcome()
    assert outcome() == first
    normalise.cache_clear()  # and from scratch: the parse caches only save time
    _parse_cached.cache_clear()
    assert outcome() == first


# ---- a weekday leans the way it is told ------------------------------------------------------------------------------
@given(weekday=st.sampled_from(WEEKDAY_NAMES), reference=REFERENCES)
def test_a_weekday_leaning_back_is_never_after_the_reference_day(weekday, reference):
    today = reference.date()
    for conventions in (DEFAULT, QUESTION):
        m = placed(weekday, reference, "past", conventions)
        day = m.interval[0].date()
        assert day.weekday() == WEEKDAY_NAMES.index(weekday)
        assert today - timedelta(days=7) <= day <= today, (conventions.name, m.interval)
        if not conventions.past_today:
            assert day < today, (conventions.name, m.interval)
        assert any(c.what == "lean" and c.value == "past" for c in m.choices), m.choices


@given(weekday=st.sampled_from(WEEKDAY_NAMES), reference=REFERENCES)
def test_a_weekday_leaning_forward_is_never_before_the_reference_day(weekday, reference):
    today = reference.date()
    for conventions in (DEFAULT, UTTERANCE):
        m = placed(weekday, reference, "future", conventions)
        day = m.interval[0].date()
        assert day.weekday() == WEEKDAY_NAMES.index(weekday)
        assert today <= day <= today + timedelta(days=7), (conventions.name, m.interval)
        if not conventions.future_today:
            assert day > today, (conventions.name, m.interval)
        assert any(c.what == "lean" and c.value == "future" for c in m.choices), m.choices


# ---- two-digit years -------------------------------------------------------------------------------------------------
@given(yy=st.integers(0, 99), month=st.integers(1, 12), day=st.integers(1, 28),
       reference=st.datetimes(datetime(1930, 1, 1), datetime(2079, 12, 31), timezones=st.sampled_from(ZONES),
                              allow_imaginary=False),
       window=st.sampled_from([DEFAULT.year_window, 0, 50]), lean=LEANS)
def test_a_two_digit_year_falls_in_the_century_window(yy, month, day, reference, window, lean):
    conventions = replace(DEFAULT, year_window=window)
    m = placed(f"{month}/{day}/{yy:02d}", reference, lean, conventions)
    year = m.interval[0].year
    assert year % 100 == yy and reference.year + window - 100 < year <= reference.year + window, m.interval
    assert year == two_digit_year(yy, reference.year, window)
    assert m.interval[0].replace(tzinfo=None) == datetime(year, month, day) and m.grain == "day"
    assert any(c.what == "year" for c in m.choices), m.choices


@given(data=st.data(), a=DATES, b=DATES, reference=REFERENCES, lean=LEANS,
       words=st.sampled_from([("from", "to"), ("between", "and"), ("from", "until")]))
def test_a_range_of_dates_runs_from_the_earlier_through_the_later(data, a, b, reference, lean, words):
    m = placed(f"{words[0]} {date_text(data.draw, a)} {words[1]} {date_text(data.draw, b)}", reference, lean)
    start, end = (d.replace(tzinfo=None) for d in m.interval)
    first, last = min(a, b), max(a, b)
    assert (start, end) == (datetime(first.year, first.month, first.day),
                            datetime(last.year, last.month, last.day) + timedelta(days=1)), m.interval
    if a > b:
        assert any(c.what == "range" and c.value == "reversed" for c in m.choices), m.choices
