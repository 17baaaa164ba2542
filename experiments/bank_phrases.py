"""The phrasings of the temporal question bank (:mod:`experiments.temporal_bank`), written by hand, none from Zyphra's
templates. Every pool has two halves: ``dev`` phrasings are asked over the development logs, ``held`` phrasings
over the held-out logs, so a rule written while reading the development misses meets new wording on the others.

Slots: ``{t}`` a time phrase with its preposition ("on June 9th"), ``{n}`` a participant's name, ``{d}`` a date
as written ("June 9th"), ``{k}`` a count in words or digits, ``{wd}`` a weekday, ``{part}`` a part of the day,
``{m}`` a month's name.
"""

from __future__ import annotations

# Requests about a whole period (no topic, no participant).
REQUESTS = {
    "dev": ["What did we talk about {t}?", "Give me a rundown of our chat {t}.", "Catch me up on what we covered {t}.",
            "Remind me what we went over {t}.", "Can you summarise our conversation {t}?", "What came up {t}?"],
    "held": ["Go over our chats {t} for me.", "Fill me in on what we discussed {t}.",
             "Could you recap what was said {t}?", "Walk me through our conversation {t}.",
             "I'd like a summary of what we talked about {t}.", "Run me through what we chatted about {t}."],
}
# Requests about what one participant said over a period.
SPEAKER_REQUESTS = {
    "dev": ["What did {n} say {t}?", "What did {n} tell me {t}?", "Show me what {n} said {t}."],
    "held": ["What did {n} bring up {t}?", "What did {n} mention {t}?", "Everything {n} said {t}, please.",
             "What were {n}'s messages {t}?"],
}
COUNT_REQUESTS = {
    "dev": ["How many times did we talk {t}?", "How many sessions did we have {t}?"],
    "held": ["How many conversations did we have {t}?", "How many chats did we have {t}?"],
}

# Time phrases, per family.
TIME = {
    "weekday_date": {"dev": ["on {wd} the {dth} of {m}", "on {wd}, {m} {dth}"],
                     "held": ["on {m} {dth}, a {wd}", "{wd} {m} {dnum}"]},
    "speaker_session": {"dev": ["in our {kth} session"], "held": ["in the {kth} conversation"]},
    "speaker_last_n": {"dev": ["over our last {k} chats"], "held": ["in the past {k} conversations"]},
    "nth_weekday_month": {"dev": ["on the {kth} {wd} of {m}"], "held": ["the {kth} {wd} in {m}"]},
    "last_weekday_month": {"dev": ["on the last {wd} of {m}"], "held": ["on the final {wd} in {m}"]},
    "part_of_day": {"dev": ["on the {part} of {m} {dth}", "in the {part} on {m} {dnum}"],
                    "held": ["on {m} {dth} in the {part}", "on the {dth} of {m}, in the {part}"]},
    "session_before": {"dev": ["in the session right before the one on {d}"],
                       "held": ["in the conversation just before our chat on {d}"]},
    "session_after": {"dev": ["in the conversation after the one on {d}"],
                      "held": ["in the chat that came after the one on {d}"]},
    "sessions_before_n": {"dev": ["in the {k} sessions before the one on {d}"],
                          "held": ["over the {k} conversations before our chat on {d}"]},
    "days_after_anchor": {"dev": ["{k} days after we met on {d}"], "held": ["{k} days after our chat on {d}"]},
    "days_before_anchor": {"dev": ["{k} days before we talked on {d}"],
                           "held": ["{k} days before our conversation on {d}"]},
    "last_time": {"dev": ["the last time we spoke"], "held": ["the most recent time we talked"]},
    "first_time": {"dev": ["the first time we talked"], "held": ["in our very first conversation"]},
    "week_of": {"dev": ["the week of {m} {dth}"], "held": ["during the week of the {dth} of {m}"]},
    "holiday": {"dev": ["on {h}"], "held": ["on {h}"]},
    "holidays": {"dev": ["over the holidays"], "held": ["during the holiday season"]},
    "month_half": {"dev": ["in the {half} half of {m}"], "held": ["during the {half} half of {m}"]},
    "month_part": {"dev": ["in {early} {m}"], "held": ["around {early} {m}"]},
    "month_week": {"dev": ["in the {which} week of {m}"], "held": ["during the {which} week of {m}"]},
    "since_weekday": {"dev": ["since {wd}"], "held": ["from {wd} on"]},
    "since_date": {"dev": ["since {d}"], "held": ["from {d} until now"]},
    "day_before_yesterday": {"dev": ["the day before yesterday"], "held": ["on the day before yesterday"]},
    "nth_session_in_month": {"dev": ["in our {kth} chat in {m}"], "held": ["the {kth} time we talked in {m}"]},
    "last_session_in_month": {"dev": ["in our last conversation in {m}"], "held": ["in the final chat of {m}"]},
    "season": {"dev": ["over the {season}"], "held": ["during the {season}"]},
    "speaker_span": {"dev": ["between {d} and {d2}"], "held": ["from {d} to {d2}"]},
    "anchor_span": {"dev": ["from the session on {d} up to the one on {d2}"],
                    "held": ["between our chat on {d} and the one on {d2}"]},
    "week_before_last": {"dev": ["the week before last"], "held": ["in the week before last"]},
}

# Follow-ups: an earlier turn names the time, the last turn refers back to it.
ANCHOR_TURNS = {"dev": ["What did we talk about on {d}?", "I remember we chatted on {d}."],
                "held": ["We had a session on {d}, right?", "Looking at my notes, we spoke on {d}."]}
REPLIES = {"dev": ["Yes, we did.", "We covered a few things that day."],
           "held": ["That's right.", "Yes, we talked then."]}
FOLLOW_UPS = {
    "then_speaker": {"dev": ["And what did {n} say then?", "What did {n} tell me then?"],
                     "held": ["And what did {n} bring up then?", "What did {n} mention then?"]},
    "that_day": {"dev": ["Give me a rundown of that day.", "What did we cover that day?"],
                 "held": ["Can you go over that day again?", "Fill me in on that day."]},
    "after_that": {"dev": ["And the conversation after that?", "What about the session after that one?"],
                   "held": ["And what did we talk about in the chat after that?", "What came up in the next session?"]},
    "that_week": {"dev": ["What did we cover that week?"], "held": ["Go over that week for me."]},
    "that_morning": {"dev": ["What did we talk about that {part}?"], "held": ["Catch me up on that {part}."]},
}
