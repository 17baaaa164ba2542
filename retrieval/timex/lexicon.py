"""The words of time: month and weekday names with their abbreviations, units, parts of the day, seasons and decades.

Only vocabulary lives here; what the words mean in a phrase is the grammar's (:mod:`retrieval.timex.rules`).
"""

from __future__ import annotations

# Month names and their abbreviations, with their numbers (also the months of answer spans and table cells:
# retrieval/ctbls/spans.py, retrieval/ctbls/cell_values.py, through retrieval/search/english.py).
MONTHS = {"january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4, "may": 5,
          "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8, "september": 9, "sept": 9, "sep": 9,
          "october": 10, "oct": 10, "november": 11, "nov": 11, "december": 12, "dec": 12}
FULL_MONTHS = [max((m for m in MONTHS if MONTHS[m] == n), key=len) for n in range(1, 13)]

WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
WEEKDAY_NUMBERS = {"monday": 0, "mon": 0, "tuesday": 1, "tue": 1, "tues": 1, "wednesday": 2, "wed": 2, "weds": 2,
                   "thursday": 3, "thu": 3, "thur": 3, "thurs": 3, "friday": 4, "fri": 4, "saturday": 5, "sat": 5,
                   "sunday": 6, "sun": 6}

# Unit words -> (grain, multiple): "a fortnight" is 2 weeks.
UNITS = {"second": ("second", 1), "sec": ("second", 1), "s": ("second", 1),
         "minute": ("minute", 1), "min": ("minute", 1), "mn": ("minute", 1), "m": ("minute", 1),
         "hour": ("hour", 1), "hr": ("hour", 1), "h": ("hour", 1),
         "day": ("day", 1), "d": ("day", 1), "week": ("week", 1), "wk": ("week", 1), "w": ("week", 1),
         "fortnight": ("week", 2), "month": ("month", 1), "mo": ("month", 1), "mth": ("month", 1),
         "quarter": ("quarter", 1), "qtr": ("quarter", 1), "year": ("year", 1), "yr": ("year", 1), "y": ("year", 1),
         "decade": ("decade", 1), "century": ("century", 1), "centurie": ("century", 1)}

# Parts of the day; their hours are a convention (retrieval.timex.conventions).
PARTS_OF_DAY = ("morning", "afternoon", "evening", "night")
PART_WORDS = {"morning": "morning", "mornings": "morning", "morn": "morning", "afternoon": "afternoon",
              "afternoons": "afternoon", "evening": "evening", "evenings": "evening", "night": "night",
              "nights": "night", "nite": "night"}

# Meteorological seasons of the northern hemisphere: first month.
SEASONS = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12}

# Decades in words: "the seventies", "the noughties".
DECADE_WORDS = {"noughties": 0, "aughts": 0, "tens": 10, "teens": 10, "twenties": 20, "thirties": 30,
                "forties": 40, "fifties": 50, "sixties": 60, "seventies": 70, "eighties": 80, "nineties": 90}
