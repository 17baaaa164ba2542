"""A log's own units: its sessions ("our third session", "3 sessions ago", "sessions 1 through 3", "the last time we
talked", "the session right before the one on May 8") and its messages ("response number 26"), and references
back to a time named in an earlier turn ("then", "that week", "the session after that").

They name no calendar interval: a conversation memory places them in its log (positions 1-based, negative from the
end; ids as the log numbers them).
"""

from __future__ import annotations

from typing import TypeGuard

from retrieval.timex.grammar import Grammar, Of, lit
from retrieval.timex.values import Anaphor, SessionRef, Time

G = Grammar()

SESS = r"(?:sessions?|discussions?|conversations?|chats?|talks?|meetings?)"
NUM = r"(?:#\s*|number\s+|no\.?\s*)?(\d+)"
TO = r"(?:and|to|through|thru|until|till|-|–)"
RESP = r"(?:responses?|messages?|utterances?)"
_MET = r"we\s+(?:\w+\s+)?(?:talked|spoke|met|chatted|had\s+a\s+\w+)"
_BEFORE_AFTER = r"(?P<dir>before|after|following|preceding|prior\s+to|leading\s+up\s+to)"


def _n(token: str | None) -> int:
    return 1 if token is None or token in ("a", "an", "the") else int(token)


def _span(a: int, b: int) -> tuple[int, int]:
    """(first, last) of two numbers written in either order."""
    return (a, b) if a <= b else (b, a)


@G.rule("response ids", lit(rf"{RESP}\s+{NUM}(?:\s+{TO}\s+(?:{RESP}\s+)?{NUM})?\b"))
def response_ids(m):
    a = int(m[1])
    b = int(m[2]) if m[2] else a
    return SessionRef(kind="response", responses=_span(a, b))


@G.rule("session id span", lit(rf"{SESS}\s+{NUM}\s+{TO}\s+(?:{SESS}\s+)?{NUM}\b"))
def session_id_span(m):
    return SessionRef(kind="session_span", ids=_span(int(m[1]), int(m[2])))


@G.rule("session position span", lit(rf"(?:the\s+)?(\d+)(?:st|nd|rd|th)\s+{TO}\s+(?:the\s+)?(\d+)(?:st|nd|rd|th)\s+"
                                     rf"{SESS}"))
def session_position_span(m):
    return SessionRef(kind="session_span", positions=_span(int(m[1]), int(m[2])))


@G.rule("first n sessions", lit(rf"(?:the\s+|our\s+)?(1st|first|last|past|previous|latest|most\s+recent)\s+(\d+)\s+"
                                rf"{SESS}"))
def first_last_n(m):
    n = int(m[2])
    return SessionRef(kind="session_span", positions=(1, n) if m[1] in ("1st", "first") else (-n, -1))


@G.rule("n sessions ago", lit(rf"(\d+|an?)\s+{SESS}\s+ago\b"))
def sessions_ago(m):
    n = _n(m[1])
    return SessionRef(kind="relative_session", positions=(-n, -n))


@G.rule("session before last", lit(rf"(?:not\s+(?:the\s+|our\s+)?(?:last|latest|most\s+recent)\s+{SESS}\s*,?\s*but\s+)?"
                                   rf"(?:the\s+)?(?:1|{SESS})\s+before\s+(?:that|it|the\s+last(?:\s+{SESS})?|"
                                   rf"last(?:\s+{SESS})?)|penultimate\s+{SESS}"))
def before_last(m):
    return SessionRef(kind="relative_session", positions=(-2, -2))


@G.rule("nth to last session", lit(rf"(?:the\s+)?(\d+)(?:st|nd|rd|th)[\s-]+(?:to|from)[\s-]+(?:the\s+)?last\s+{SESS}"))
def nth_to_last(m):
    n = int(m[1])
    return SessionRef(kind="relative_session", positions=(-n, -n))


@G.rule("last session", lit(rf"(?:our\s+|the\s+|my\s+)?(?:very\s+)?(?:last|latest|final|most\s+recent|previous|"
                            rf"prior)\s+(?:{SESS}|time)\b"))
def last_session(m):
    return SessionRef(kind="relative_session", positions=(-1, -1))


@G.rule("nth session", lit(rf"(?:our\s+|the\s+)?(?:very\s+)?(\d+)(?:st|nd|rd|th)\s+{SESS}"))
def nth_session(m):
    n = int(m[1])
    return SessionRef(kind="session", positions=(n, n))


@G.rule("session id", lit(r"(?:session|discussion|conversation|chat|meeting)\s+(?:#\s*|number\s+)?(\d+)\b"
                          r"(?!\s+(?:days?|weeks?|months?|years?|sessions?|discussions?|conversations?|times?|ago)\b)"))
def session_id(m):
    n = int(m[1])
    return SessionRef(kind="session", ids=(n, n))


@G.rule("nth time we talked", lit(rf"(?:the\s+)?(?P<n>\d+(?:st|nd|rd|th)|first|last|latest|most\s+recent|previous)\s+"
                                  rf"time\s+(?:that\s+)?(?:{_MET}|we\s+(?:\w+\s+)?(?:discussed|chatted))"))
def nth_time(m):
    n = m["n"]
    if n[0].isdigit():
        k = int(n.rstrip("stndrh"))
        return SessionRef(kind="session", positions=(k, k))
    if n == "first":
        return SessionRef(kind="session", positions=(1, 1))
    return SessionRef(kind="relative_session", positions=(-1, -1))


# ---- a session named by its day ------------------------------------------------------------------------------------
@G.rule("the session on d", lit(rf"(?:the|our)\s+(?:1|ones?|{SESS})\s+(?:on|of)\s+"),
        Of(lambda v: isinstance(v, Time) and not v.latent))
def dated_session(m, t):  # "from the session on July 15 up to the one on August 25": the days
    return t


# ---- sessions and days relative to an anchor -----------------------------------------------------------------------
_FILLER = rf"(?:(?:the\s+1|the\s+ones|ours|our\s+{SESS}|the\s+{SESS}|{_MET})\s+)?"


def is_anchor(v: object) -> TypeGuard[Time | SessionRef]:
    if isinstance(v, Time):
        return not v.latent
    return isinstance(v, SessionRef) and not v.shift


@G.rule("session before anchor", lit(rf"(?:(?:in|over|during|from)\s+)?(?:the|our)\s+(?:(?P<n>\d+)\s+)?{SESS}\s+"
                                     r"(?:(?:that|which)\s+(?:came|happened|took\s+place)\s+)?(?:right\s+|just\s+|"
                                     rf"immediately\s+|directly\s+)?{_BEFORE_AFTER}\s+{_FILLER}(?:on\s+|of\s+)?"),
        Of(is_anchor))
def session_shift(m, anchor):
    n = int(m["n"] or 1)
    before = m["dir"] in ("before", "preceding", "prior to") or m["dir"].startswith("leading")
    return SessionRef(kind="session_shift", shift=(-n, -1) if before else (1, n), anchor=anchor)


# ---- references back ---------------------------------------------------------------------------------------------
@G.rule("anaphor", lit(rf"(?:the\s+)?(?:{SESS}|1)\s+(?P<after>after)\s+that(?:\s+1)?\b|the\s+(?P<next>next)\s+{SESS}\b|"
                       r"(?:that|the\s+same)\s+(?P<unit>day|week|month|morning|afternoon|evening|night|time|session|"
                       r"conversation|chat|discussion|period)\b|(?P<then>then)\b"))
def anaphor(m):
    kind = "after" if m["after"] or m["next"] else m["unit"] or "then"
    return Anaphor(refers=kind)


@G.rule("the week after", lit(r"the\s+(?:week|weekend|month|year)\s+after\b|the\s+(?:weekend|month|year)\s+before\b"))
def unit_after(m):  # "October 13th and the weekend after": counted from a time named before it
    return Anaphor(refers=m[0])
