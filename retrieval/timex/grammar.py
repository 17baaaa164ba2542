"""The parser: rules of short patterns over a chart, applied until nothing new comes (after Duckling's design).

A rule is a sequence of *items* and a function that builds a value from what they matched:

- a :class:`Lit` item is a regular expression matched at a token's start ("next", a month's name, "8:30pm");
- an :class:`Of` item is a value already in the chart that passes a test (a time, a duration, a recurring time).

Items may be separated by white space. Values built from a span of the text go into the chart as :class:`Node`
objects; rules run again over the grown chart until a round adds nothing, so "the 3rd Wednesday" + "of" + "next
month" composes from parts built in earlier rounds, and a phrase nobody listed reads when its parts do.
:func:`best_cover` then picks the mentions: the set of non-overlapping nodes that covers the most text, each the
highest-ranked reading of its span.

Tokens: a run of letters, a run of digits, or one other character; a match must end where a token does
("dec31" is "dec" + "31"; "december" is not "dec" + "ember").
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

MAX_ROUNDS = 8


@dataclass(frozen=True)
class Node:
    start: int
    end: int
    value: object
    rule: str
    rank: int = 0  # of the rules that built it, summed: among readings of the same span, the higher wins
    size: int = 1  # rules applied to build it: on equal ranks, the reading built from fewer wins


@dataclass(frozen=True)
class Lit:
    """A pattern matched at a token's start; ``options``: the phrases of a :func:`words` item, each tried (so that
    "from the" does not hide "from" when the rest of the rule needs "the")."""

    pattern: re.Pattern[str]
    options: tuple[re.Pattern[str], ...] = ()

    def __repr__(self) -> str:
        return f"Lit({self.pattern.pattern!r})"


@dataclass(frozen=True)
class Opt:
    """A :class:`Lit` that may also be left out: both readings are tried."""

    lit: Lit


@dataclass(frozen=True)
class Of:
    test: Callable[[object], bool]
    name: str = "value"


Item = Lit | Opt | Of


@dataclass
class Rule:
    name: str
    items: tuple[Item, ...]
    make: Callable[..., object | None]
    rank: int = 0
    scan: re.Pattern[str] | None = field(default=None, repr=False)  # where the first Lit matches, in one pass

    def __post_init__(self):
        if isinstance(self.items[0], Opt):
            raise ValueError(f"rule {self.name!r}: an optional item cannot come first")
        if isinstance(self.items[0], Lit):
            self.scan = re.compile(r"(?=(?:" + self.items[0].pattern.pattern + "))", self.items[0].pattern.flags)


def lit(pattern: str) -> Lit:
    return Lit(re.compile(pattern))


def _alternatives(options: tuple[str, ...]) -> str:
    """A pattern for any of the phrases: white space inside one matches any run of it, and a phrase that ends in a
    letter or digit must end where a word does."""
    alts = sorted(options, key=len, reverse=True)
    return "|".join(re.sub(r"\s+", r"\\s+", re.escape(o).replace("\\ ", " ")) + (r"\b" if o[-1].isalnum() else "")
                    for o in alts)


def words(*options: str) -> Lit:
    """One of the given words or phrases (every one that matches is tried)."""
    return Lit(re.compile(r"(?:" + _alternatives(options) + ")"), tuple(re.compile(_alternatives((o,)))
                                                                       for o in options))


def optional(*options: str) -> Opt:
    """One of the given words or phrases, or nothing (both are tried)."""
    return Opt(words(*options))


class Grammar:
    """A list of rules, added with :meth:`rule` (a decorator), and the parser over them."""

    def __init__(self):
        self.rules: list[Rule] = []

    def rule(self, name: str, *items: Item, rank: int = 0):
        def register(make: Callable[..., object | None]):
            self.rules.append(Rule(name, tuple(items), make, rank))
            return make
        return register

    def extend(self, other: Grammar) -> Grammar:
        self.rules.extend(other.rules)
        return self

    def parse(self, text: str) -> list[Node]:
        return Chart(text, self.rules).run()


def _kind(c: str) -> int:
    return 0 if c.isspace() else 1 if c.isalpha() else 2 if c.isdigit() else 3


def token_starts(text: str) -> list[int]:
    out = []
    for i, c in enumerate(text):
        k = _kind(c)
        if k and (i == 0 or k == 3 or _kind(text[i - 1]) != k):
            out.append(i)
    return out


class Chart:
    def __init__(self, text: str, rules: Sequence[Rule]):
        self.text = text
        self.rules = rules
        self.starts = token_starts(text)
        self.is_start = set(self.starts)
        self.by_start: dict[int, list[Node]] = defaultdict(list)
        self.nodes: list[Node] = []
        self.seen: set[tuple] = set()
        self.lits: dict[tuple[int, int], list[re.Match]] = {}

    # ---- matching ------------------------------------------------------------------------------------------
    def _boundary(self, end: int) -> bool:
        t = self.text
        if end >= len(t) or end == 0:
            return True
        a, b = _kind(t[end - 1]), _kind(t[end])
        return a != b or a in (0, 3)

    def _lit(self, item: Lit, pos: int) -> list[re.Match]:
        """The matches of ``item`` at ``pos`` that end where a token does (one per end)."""
        key = (id(item), pos)
        if key not in self.lits:
            found: dict[int, re.Match] = {}
            for pattern in item.options or (item.pattern,):
                m = pattern.match(self.text, pos)
                if m is not None and (m.end() == pos or self._boundary(m.end())):
                    found.setdefault(m.end(), m)
            self.lits[key] = sorted(found.values(), key=lambda m: -m.end())
        return self.lits[key]

    def _skip(self, pos: int) -> int:
        t = self.text
        while pos < len(t) and t[pos].isspace():
            pos += 1
        return pos

    def _match(self, items: tuple[Item, ...], i: int, pos: int, args: list, size: int = 1,
               rank: int = 0) -> Iterator[tuple[int, list, int, int]]:
        if i == len(items):
            yield pos, args, size, rank
            return
        at = self._skip(pos) if i else pos
        item = items[i]
        if isinstance(item, Opt):
            yield from self._match(items, i + 1, pos, args + [None], size, rank)
            item = item.lit
        if isinstance(item, Lit):
            for m in self._lit(item, at):
                # an empty optional item leaves the position where it was (no white space eaten for it)
                yield from self._match(items, i + 1, m.end() if m.end() > at else pos, args + [m], size, rank)
        else:
            for node in list(self.by_start.get(at, ())):
                if item.test(node.value):
                    yield from self._match(items, i + 1, node.end, args + [node.value], size + node.size,
                                           rank + node.rank)

    def _add(self, start: int, end: int, value: object, rule: Rule, size: int = 1, rank: int = 0) -> bool:
        while end > start and self.text[end - 1].isspace():
            end -= 1
        key = (start, end, value)
        try:
            if key in self.seen:
                return False
            self.seen.add(key)
        except TypeError as e:  # a value that is not hashable is a bug in a rule
            raise TypeError(f"rule {rule.name!r} built an unhashable value {value!r}") from e
        node = Node(start, end, value, rule.name, rank, size)
        self.by_start[start].append(node)
        self.nodes.append(node)
        return True

    def _apply(self, rule: Rule, starts: Sequence[int]) -> int:
        added = 0
        for pos in starts:
            for end, args, size, rank in self._match(rule.items, 0, pos, []):
                value = rule.make(*args)
                if value is not None and end > pos and self._add(pos, end, value, rule, size, rank + rule.rank):
                    added += 1
        return added

    def run(self) -> list[Node]:
        """Apply the rules until a round adds nothing. After the first round a rule runs again only when a node the
        last round added passes one of its tests: what it matched before, it matched already."""
        scanned = {id(r): [m.start() for m in scan.finditer(self.text) if m.start() in self.is_start]
                   for r in self.rules if (scan := r.scan) is not None}
        lit_first = [r for r in self.rules if id(r) in scanned]
        of_first = [r for r in self.rules if id(r) not in scanned]
        composite = [r for r in lit_first if any(isinstance(i, Of) for i in r.items) and scanned[id(r)]]
        for rule in lit_first:
            self._apply(rule, scanned[id(rule)])
        delta = list(self.nodes)
        for _ in range(MAX_ROUNDS):
            if not delta:
                break
            before = len(self.nodes)
            for rule in of_first + composite:
                tests = [i.test for i in rule.items if isinstance(i, Of)]
                if not any(test(n.value) for n in delta for test in tests):
                    continue
                head = rule.items[0]
                if isinstance(head, Of):  # a rule without a literal to scan for: where its first value starts
                    self._apply(rule, sorted({n.start for n in self.nodes if head.test(n.value)}))
                else:
                    self._apply(rule, scanned[id(rule)])
            delta = self.nodes[before:]
        return self.nodes


def best_cover(nodes: Sequence[Node], keep: Callable[[Node], bool]) -> list[Node]:
    """The non-overlapping nodes (of those ``keep`` accepts) that cover the most characters; among equal covers,
    fewer nodes, then higher-ranked readings. Each span's reading is its highest-ranked node, and of those the one
    built from the fewest parts (the first built on a tie)."""
    best_of_span: dict[tuple[int, int], Node] = {}
    for n in nodes:
        if not keep(n):
            continue
        k = (n.start, n.end)
        if k not in best_of_span or (n.rank, -n.size) > (best_of_span[k].rank, -best_of_span[k].size):
            best_of_span[k] = n
    candidates = sorted(best_of_span.values(), key=lambda n: n.end)
    # weighted interval scheduling: score = (covered, -count, rank sum)
    ends = [n.end for n in candidates]
    best: list[tuple[tuple[int, int, int], list[Node]]] = [((0, 0, 0), [])]
    import bisect

    for i, n in enumerate(candidates):
        j = bisect.bisect_right(ends, n.start, 0, i)  # candidates[:j] end at or before n starts
        prev_score, prev_nodes = best[j]
        take = ((prev_score[0] + n.end - n.start, prev_score[1] - 1, prev_score[2] + n.rank), prev_nodes + [n])
        best.append(max(best[i], take, key=lambda x: x[0]))
    return sorted(best[-1][1], key=lambda n: n.start)
