"""A bank of temporal questions as people ask them, with gold rows computed from the logs' metadata.

    python -m experiments.temporal_bank --zyphra-dir ../shared/data/zyphra_temporal --output eval/bank
    python -m eval.temporal --questions-dir eval/bank --logs 26 28 41          # development logs
    python -m eval.temporal --questions-dir eval/bank --logs 42 43 44 45 47 48 # held-out logs

Written in Zyphra's ``TestData`` layout (``TestData/time_qs/test_<family>.json`` and, for follow-ups whose time
is in an earlier turn, ``TestData/ambiguous_time_qs/test_<family>.json``), so ``eval.temporal`` scores it. The
gold rows come from the logs' own fields (``date_time``, session keys, ``speaker``, ``response_number``) through
the small date arithmetic below, which shares no code with the planner or the time resolver. "Now" is the log's
last utterance, as in Zyphra's questions. The phrasings (:mod:`experiments.bank_phrases`) are split: the development
logs are asked with one half, the held-out logs with the other. Families whose gold would be empty on a log are
left out there (a question with no relevant row cannot be scored).

Conventions the gold follows (stated, so a reader can check a family): a week runs Monday to Sunday; parts of
the day are morning 05-12, afternoon 12-17, evening 17-21; "early / mid / late" a month are days 1-10 / 11-20 /
21-end; a month's first / last week its first / last seven days; seasons are meteorological (spring = March to
May, ...), "the holidays" are 24 December to 1 January, Thanksgiving the fourth Thursday of November; "since X"
runs from the start of X to now; the n-th session of a month counts sessions that start in it.
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path

from experiments import bank_phrases as P
from retrieval.atomic import write_json
from retrieval.config import option, parse_config
from retrieval.data.paths import ZYPHRA_DIR

DEV_LOGS = ("26", "28", "41")
HELD_LOGS = ("42", "43", "44", "45", "47", "48")
MONTH_NAMES = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
               "November", "December"]
WEEKDAY_NAMES = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
ORDINAL_WORDS = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"]
COUNT_WORDS = ["one", "two", "three", "four", "five", "six", "seven"]
PARTS = {"morning": (5, 12), "afternoon": (12, 17), "evening": (17, 21)}
HOLIDAYS = {"Christmas Eve": (12, 24), "Christmas Day": (12, 25), "New Year's Eve": (12, 31),
            "New Year's Day": (1, 1), "Valentine's Day": (2, 14), "Halloween": (10, 31), "Independence Day": (7, 4)}
SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}


@dataclass(frozen=True)
class Row:
    idx: int
    session: int
    speaker: str
    ts: datetime


class Log:
    """A Zyphra log's metadata, read straight from its JSON."""

    def __init__(self, log_id: str, data: dict):
        self.id, self.speakers = log_id, [data["speaker_a"], data["speaker_b"]]
        rows = []
        for key, turns in data.items():
            if key.startswith("session_") and isinstance(turns, list):
                for t in turns:
                    ts = datetime.strptime(t["date_time"], "%I:%M:%S %p on %A %d %B, %Y")
                    rows.append(Row(int(t["response_number"]), int(key.split("_")[1]), t["speaker"], ts))
        self.rows = sorted(rows, key=lambda r: (r.ts, r.idx))
        self.now = self.rows[-1].ts
        self.today = self.now.date()
        self.sessions = sorted({r.session for r in self.rows}, key=lambda s: self.start(s))
        # a day named without its year is its latest occurrence up to today: only days of the last year are named
        self.days = sorted({r.ts.date() for r in self.rows if (self.today - r.ts.date()).days < 365})

    def start(self, session: int) -> datetime:
        return min(r.ts for r in self.rows if r.session == session)

    def ids(self, keep: Callable[[Row], bool]) -> list[int]:
        return sorted(r.idx for r in self.rows if keep(r))

    def between(self, first: date, last: date) -> list[int]:
        return self.ids(lambda r: first <= r.ts.date() <= last)

    def session_ids(self, sessions) -> list[int]:
        return self.ids(lambda r: r.session in set(sessions))

    def sessions_on(self, d: date) -> list[int]:
        return [s for s in self.sessions if self.start(s).date() == d]


# ---- the generator's own calendar arithmetic ------------------------------------------------------------
def month_end(y: int, m: int) -> date:
    return (date(y + m // 12, m % 12 + 1, 1)) - timedelta(days=1)


def th(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def says(d: date, rng: random.Random) -> str:
    return rng.choice([f"{MONTH_NAMES[d.month - 1]} {th(d.day)}", f"the {th(d.day)} of {MONTH_NAMES[d.month - 1]}",
                       f"{MONTH_NAMES[d.month - 1]} {d.day}"])


def latest_on_or_before(today: date, month: int, day: int) -> date:
    d = date(today.year, month, day)
    return d if d <= today else date(today.year - 1, month, day)


def pick(rng: random.Random, seq: list, n: int) -> list:
    return rng.sample(seq, min(n, len(seq)))


# ---- families: each yields (time-phrase slots, gold ids) -------------------------------------------------
Item = tuple[dict, list[int]]


def fam_weekday_date(log: Log, rng: random.Random, mismatch: bool = False) -> Iterator[Item]:
    for d in pick(rng, log.days[:-1], 3):
        wd = WEEKDAY_NAMES[(d.weekday() + (rng.choice([1, 6]) if mismatch else 0)) % 7]
        yield {"wd": wd, "m": MONTH_NAMES[d.month - 1], "dth": th(d.day), "dnum": d.day}, log.between(d, d)


def fam_nth_weekday(log: Log, rng: random.Random, last: bool = False) -> Iterator[Item]:
    days = [d for d in log.days if ((d + timedelta(days=7)).month != d.month) == last and (last or d.day <= 28)]
    for d in rng.sample(days, min(3, len(days))):
        yield ({"wd": WEEKDAY_NAMES[d.weekday()], "m": MONTH_NAMES[d.month - 1],
                "kth": rng.choice([th((d.day - 1) // 7 + 1), ORDINAL_WORDS[(d.day - 1) // 7]])}, log.between(d, d))


def fam_part_of_day(log: Log, rng: random.Random) -> Iterator[Item]:
    timed = [(r.ts.date(), p) for r in log.rows for p, (a, b) in PARTS.items() if a <= r.ts.hour < b]
    for d, part in rng.sample(sorted(set(timed)), min(3, len(set(timed)))):
        a, b = PARTS[part]
        yield ({"part": part, "m": MONTH_NAMES[d.month - 1], "dth": th(d.day), "dnum": d.day},
               log.ids(lambda r, d=d, a=a, b=b: r.ts.date() == d and a <= r.ts.hour < b))


def fam_session_shift(log: Log, rng: random.Random, shift: int, count: int = 1) -> Iterator[Item]:
    single = [d for d in log.days if len(log.sessions_on(d)) == 1]
    for d in rng.sample(single, min(3, len(single))):
        pos = log.sessions.index(log.sessions_on(d)[0])
        lo, hi = (pos - count, pos - 1) if shift < 0 else (pos + 1, pos + count)
        if lo >= 0 and hi < len(log.sessions):
            yield ({"d": says(d, rng), "k": rng.choice([str(count), COUNT_WORDS[count - 1]])},
                   log.session_ids(log.sessions[lo:hi + 1]))


def fam_days_from_anchor(log: Log, rng: random.Random, sign: int) -> Iterator[Item]:
    pairs = [(a, b) for a in log.days for b in log.days if 2 <= sign * (b - a).days <= 6]
    for a, b in rng.sample(pairs, min(3, len(pairs))):
        k = abs((b - a).days)
        yield {"d": says(a, rng), "k": rng.choice([str(k), COUNT_WORDS[k - 1]])}, log.between(b, b)


def fam_week_of(log: Log, rng: random.Random) -> Iterator[Item]:
    for d in pick(rng, log.days[:-1], 3):
        named = d + timedelta(days=rng.randint(0, 6) - d.weekday())
        monday = named - timedelta(days=named.weekday())
        if named <= log.today:
            yield ({"m": MONTH_NAMES[named.month - 1], "dth": th(named.day)},
                   log.between(monday, monday + timedelta(days=6)))


def fam_holiday(log: Log, rng: random.Random) -> Iterator[Item]:
    for name, (m, dd) in HOLIDAYS.items():
        d = latest_on_or_before(log.today, m, dd)
        if log.between(d, d):
            yield {"h": name}, log.between(d, d)
    for y in range(log.rows[0].ts.year - 1, log.today.year + 1):  # Thanksgiving: the fourth Thursday of November
        first = date(y, 11, 1)
        d = first + timedelta(days=(3 - first.weekday()) % 7 + 21)
        if d <= log.today and log.between(d, d):
            yield {"h": "Thanksgiving"}, log.between(d, d)


def fam_holidays(log: Log, rng: random.Random) -> Iterator[Item]:
    start = latest_on_or_before(log.today, 12, 24)
    yield {}, log.between(start, min(start + timedelta(days=8), log.today))


def month_choices(log: Log, rng: random.Random, n: int = 3) -> list[tuple[int, int]]:
    """Months of the log that a month's name alone names: its latest occurrence begun by today."""
    months = sorted({(d.year, d.month) for d in log.days if date(d.year + 1, d.month, 1) > log.today})
    return rng.sample(months, min(n, len(months)))


def fam_month_slice(log: Log, rng: random.Random, kind: str) -> Iterator[Item]:
    for y, m in month_choices(log, rng, 4):
        end = month_end(y, m).day
        slices = {"half": {"first": (1, 15), "second": (16, end)},
                  "early": {"early": (1, 10), "mid": (11, 20), "late": (21, end)},
                  "which": {"first": (1, 7), "last": (end - 6, end)}}[kind]
        label = rng.choice(sorted(slices))
        a, b = slices[label]
        yield {kind: label, "m": MONTH_NAMES[m - 1]}, log.between(date(y, m, a), date(y, m, b))


def fam_since(log: Log, rng: random.Random, weekday: bool) -> Iterator[Item]:
    if weekday:
        for back in sorted({(log.today - d).days for d in log.days if 1 <= (log.today - d).days <= 6}):
            d = log.today - timedelta(days=back)
            yield {"wd": WEEKDAY_NAMES[d.weekday()]}, log.between(d, log.today)
        return
    for d in pick(rng, log.days[-12:-1], 3):
        yield {"d": says(d, rng)}, log.between(d, log.today)


def fam_day_before_yesterday(log: Log, rng: random.Random) -> Iterator[Item]:
    d = log.today - timedelta(days=2)
    yield {}, log.between(d, d)


def fam_session_in_month(log: Log, rng: random.Random, last: bool) -> Iterator[Item]:
    for y, m in month_choices(log, rng):
        inside = [s for s in log.sessions if (log.start(s).year, log.start(s).month) == (y, m)]
        k = len(inside) if last else rng.randint(1, len(inside))
        yield ({"m": MONTH_NAMES[m - 1], "kth": rng.choice([th(k), ORDINAL_WORDS[k - 1]])},
               log.session_ids([inside[k - 1]]))


def fam_month(log: Log, rng: random.Random) -> Iterator[Item]:
    for y, m in month_choices(log, rng, 2):
        yield {"t": f"in {MONTH_NAMES[m - 1]}"}, log.between(date(y, m, 1), month_end(y, m))


def fam_season(log: Log, rng: random.Random) -> Iterator[Item]:
    for name in rng.sample(sorted(SEASONS), 2):
        start = latest_on_or_before(log.today, SEASONS[name], 1)
        end_month = SEASONS[name] + 2
        end = month_end(start.year + (end_month - 1) // 12, (end_month - 1) % 12 + 1)
        yield {"season": name}, log.between(start, min(end, log.today))


def fam_span(log: Log, rng: random.Random) -> Iterator[Item]:
    for _ in range(3):
        a, b = sorted(pick(rng, log.days[:-1], 2))
        yield {"d": says(a, rng), "d2": says(b, rng)}, log.between(a, b)


def fam_week_before_last(log: Log, rng: random.Random) -> Iterator[Item]:
    monday = log.today - timedelta(days=log.today.weekday() + 14)
    yield {}, log.between(monday, monday + timedelta(days=6))


def fam_speaker(log: Log, rng: random.Random, base: Callable[[Log, random.Random], Iterator[Item]]
                ) -> Iterator[Item]:
    """A period of ``base``, with one participant's rows of it only; the name goes in the slots as ``n``."""
    for slots, gold in base(log, rng):
        name = rng.choice(log.speakers)
        own = set(log.ids(lambda r: r.speaker == name))
        yield {**slots, "n": name}, [i for i in gold if i in own]


def fam_days(log: Log, rng: random.Random) -> Iterator[Item]:
    for d in pick(rng, log.days[:-1], 3):
        yield {"t": f"on {says(d, rng)}", "d": says(d, rng)}, log.between(d, d)


def fam_session_n(log: Log, rng: random.Random) -> Iterator[Item]:
    for k in rng.sample(range(1, min(10, len(log.sessions)) + 1), 3):
        yield {"kth": rng.choice([th(k), ORDINAL_WORDS[k - 1]])}, log.session_ids([log.sessions[k - 1]])


def fam_last_n(log: Log, rng: random.Random) -> Iterator[Item]:
    for k in rng.sample(range(2, 6), 2):
        yield {"k": rng.choice([str(k), COUNT_WORDS[k - 1]])}, log.session_ids(log.sessions[-k:])


def fam_morning_days(log: Log, rng: random.Random) -> Iterator[Item]:  # a day, and a part of it that has rows
    for slots, gold in fam_part_of_day(log, rng):
        d = next(r.ts.date() for r in log.rows if r.idx == gold[0])
        yield {**slots, "d": says(d, rng)}, gold


def fam_week_of_day(log: Log, rng: random.Random) -> Iterator[Item]:
    for d in pick(rng, log.days[:-1], 3):
        monday = d - timedelta(days=d.weekday())
        yield {"d": says(d, rng)}, log.between(monday, monday + timedelta(days=6))


# name -> (kind of frame, time phrases of bank_phrases.TIME (None: the slots carry "t"), generator)
FAMILIES: dict[str, tuple[str, str | None, Callable]] = {
    "weekday_date": ("request", "weekday_date", fam_weekday_date),
    "weekday_date_mismatch": ("request", "weekday_date", lambda g, r: fam_weekday_date(g, r, mismatch=True)),
    "speaker_day": ("speaker", None, lambda g, r: fam_speaker(g, r, fam_days)),
    "speaker_session": ("speaker", "speaker_session", lambda g, r: fam_speaker(g, r, fam_session_n)),
    "speaker_month": ("speaker", None, lambda g, r: fam_speaker(g, r, fam_month)),
    "speaker_last_n": ("speaker", "speaker_last_n", lambda g, r: fam_speaker(g, r, fam_last_n)),
    "speaker_span": ("speaker", "speaker_span", lambda g, r: fam_speaker(g, r, fam_span)),
    "request_day": ("request", None, fam_days),
    "request_month": ("request", None, fam_month),
    "count_month": ("count", None, fam_month),
    "nth_weekday_month": ("request", "nth_weekday_month", fam_nth_weekday),
    "last_weekday_month": ("request", "last_weekday_month", lambda g, r: fam_nth_weekday(g, r, last=True)),
    "part_of_day": ("request", "part_of_day", fam_part_of_day),
    "session_before": ("request", "session_before", lambda g, r: fam_session_shift(g, r, -1)),
    "session_after": ("request", "session_after", lambda g, r: fam_session_shift(g, r, +1)),
    "sessions_before_n": ("request", "sessions_before_n",
                          lambda g, r: fam_session_shift(g, r, -1, count=r.choice([2, 3]))),
    "days_after_anchor": ("request", "days_after_anchor", lambda g, r: fam_days_from_anchor(g, r, +1)),
    "days_before_anchor": ("request", "days_before_anchor", lambda g, r: fam_days_from_anchor(g, r, -1)),
    "last_time": ("request", "last_time", lambda g, r: iter([({}, g.session_ids([g.sessions[-1]]))])),
    "first_time": ("request", "first_time", lambda g, r: iter([({}, g.session_ids([g.sessions[0]]))])),
    "week_of": ("request", "week_of", fam_week_of),
    "holiday": ("request", "holiday", fam_holiday),
    "holidays": ("request", "holidays", fam_holidays),
    "month_half": ("request", "month_half", lambda g, r: fam_month_slice(g, r, "half")),
    "month_part": ("request", "month_part", lambda g, r: fam_month_slice(g, r, "early")),
    "month_week": ("request", "month_week", lambda g, r: fam_month_slice(g, r, "which")),
    "since_weekday": ("request", "since_weekday", lambda g, r: fam_since(g, r, weekday=True)),
    "since_date": ("request", "since_date", lambda g, r: fam_since(g, r, weekday=False)),
    "day_before_yesterday": ("request", "day_before_yesterday", fam_day_before_yesterday),
    "nth_session_in_month": ("request", "nth_session_in_month", lambda g, r: fam_session_in_month(g, r, False)),
    "last_session_in_month": ("request", "last_session_in_month", lambda g, r: fam_session_in_month(g, r, True)),
    "season": ("request", "season", fam_season),
    "anchor_span": ("request", "anchor_span", fam_span),
    "week_before_last": ("request", "week_before_last", fam_week_before_last),
    "then_speaker": ("follow-up", None, lambda g, r: fam_speaker(g, r, fam_days)),
    "that_day": ("follow-up", None, fam_days),
    "after_that": ("follow-up", None, lambda g, r: fam_session_shift(g, r, +1)),
    "that_week": ("follow-up", None, fam_week_of_day),
    "that_morning": ("follow-up", None, fam_morning_days),
}
FRAMES = {"request": P.REQUESTS, "speaker": P.SPEAKER_REQUESTS, "count": P.COUNT_REQUESTS}


def versions(kind: str, family: str, times: str | None, slots: dict, half: str, rng: random.Random) -> list:
    """Two phrasings of one item (fewer when its pools have fewer combinations)."""
    if kind == "follow-up":
        combos = [(a, f) for a in P.ANCHOR_TURNS[half] for f in P.FOLLOW_UPS[family][half]]
        out = []
        for anchor, follow in rng.sample(combos, min(2, len(combos))):
            out.append([{"speaker": "User", "text": anchor.format(**slots)},
                        {"speaker": "Assistant", "text": rng.choice(P.REPLIES[half])},
                        {"speaker": "User", "text": follow.format(**slots)}])
        return out
    phrases = P.TIME[times][half] if times else [slots["t"]]
    combos = [(f, t) for f in FRAMES[kind][half] for t in phrases]
    rest = {k: v for k, v in slots.items() if k != "t"}
    return [f.format(**rest, t=t.format(**rest)) for f, t in rng.sample(combos, min(2, len(combos)))]


def build(data_dir: Path, logs: list[str], seed: int) -> dict[tuple[str, str], dict]:
    """(TestData folder, family) -> Zyphra's file layout: {"file_indexes": [...], "file_<log>": [items]}."""
    files: dict[tuple[str, str], dict] = {}
    for log_id in logs:
        log = Log(log_id, json.loads((data_dir / "ConversationData" / f"{log_id}.json").read_text()))
        half = "dev" if log_id in DEV_LOGS else "held"
        for family, (kind, times, make) in FAMILIES.items():
            rng = random.Random(f"{seed}/{log_id}/{family}")
            items, seen = [], set()
            for slots, gold in make(log, rng):
                key = json.dumps(slots, sort_keys=True, default=str)
                if gold and key not in seen:
                    seen.add(key)
                    items.append({"questions": versions(kind, family, times, slots, half, rng),
                                  "relevant_docs": gold})
            if items:
                folder = "ambiguous_time_qs" if kind == "follow-up" else "time_qs"
                out = files.setdefault((folder, family), {"file_indexes": []})
                out["file_indexes"].append(int(log_id))
                out[f"file_{log_id}"] = items
    return files


@dataclass
class BankConfig:
    """Write the phrasing bank in Zyphra's TestData layout."""

    zyphra_dir: str = option(str(ZYPHRA_DIR), "Zyphra's folder (the logs' ConversationData/)", aliases=["--data-dir"])
    logs: list[str] = option([*DEV_LOGS, *HELD_LOGS], "the logs to ask about")
    output: str = option("eval/bank", "writes OUTPUT/TestData/<kind>/test_<family>.json")
    seed: int = option(14, "seed of the questions' choices")


def main(argv: list[str] | None = None) -> int:
    args = parse_config(BankConfig, argv, prog="python -m experiments.temporal_bank",
                        description=__doc__.split("\n")[0])
    data_dir = Path(args.zyphra_dir)
    missing = [g for g in args.logs if not (data_dir / "ConversationData" / f"{g}.json").is_file()]
    if missing:
        print(f"error: {data_dir}/ConversationData has no logs {missing}", file=sys.stderr)
        return 2
    files = build(data_dir, args.logs, args.seed)
    n_items = n_versions = 0
    for (folder, family), content in sorted(files.items()):
        write_json(Path(args.output) / "TestData" / folder / f"test_{family}.json", content)
        items = [i for k, v in content.items() if k.startswith("file_") and k != "file_indexes" for i in v]
        n_items, n_versions = n_items + len(items), n_versions + sum(len(i["questions"]) for i in items)
    print(f"{len(files)} families, {n_items} questions, {n_versions} phrasings over logs {args.logs} -> "
          f"{args.output}/TestData")
    return 0


if __name__ == "__main__":
    sys.exit(main())
