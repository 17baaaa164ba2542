"""eval.locomo_answers: the gold-answer parser, the strict and lenient scores, and the command on tiny data."""

from __future__ import annotations

import json
from datetime import date, datetime, timezone

import pytest

from eval import locomo_answers
from eval.time_answers import GoldTime, parse_time_answer, score
from retrieval.memory.event_time import read_event_time
from retrieval.memory.when_answer import render
from tests.test_conversation_table import ZYPHRA


@pytest.mark.parametrize("text, form, granularity, start, end", [
    ("7 May 2023", "date", "day", date(2023, 5, 7), date(2023, 5, 8)),
    ("19 January, 2023", "date", "day", date(2023, 1, 19), date(2023, 1, 20)),
    ("February 24, 2023", "date", "day", date(2023, 2, 24), date(2023, 2, 25)),
    ("Januarty 5, 2024", "date", "day", date(2024, 1, 5), date(2024, 1, 6)),
    ("The sunday before 25 May 2023", "relative", "day", date(2023, 5, 21), date(2023, 5, 22)),
    ("The Friday before 23January, 2022", "relative", "day", date(2022, 1, 21), date(2022, 1, 22)),
    ("The week before 9 June 2023", "relative", "week", date(2023, 6, 2), date(2023, 6, 9)),
    ("Two weeks before 11 August 2023", "relative", "week", date(2023, 7, 28), date(2023, 8, 4)),
    ("The week of 23 August 2023", "relative", "week", date(2023, 8, 21), date(2023, 8, 28)),
    ("The weekend before 17 July 2023", "relative", "weekend", date(2023, 7, 15), date(2023, 7, 17)),
    ("two weekends before 17 July 2023", "relative", "weekend", date(2023, 7, 8), date(2023, 7, 10)),
    ("The weekend after 3June, 2022.", "relative", "weekend", date(2022, 6, 4), date(2022, 6, 6)),
    ("first weekend of August 2023", "relative", "weekend", date(2023, 8, 5), date(2023, 8, 7)),
    ("November 5-6, 2022", "relative", "span", date(2022, 11, 5), date(2022, 11, 7)),
    ("June 2023", "month", "month", date(2023, 6, 1), date(2023, 7, 1)),
    ("April.2023", "month", "month", date(2023, 4, 1), date(2023, 5, 1)),
    ("Around August 2022", "month", "month", date(2022, 8, 1), date(2022, 9, 1)),
    ("The summer of 2022", "season", "season", date(2022, 6, 1), date(2022, 9, 1)),
    ("2022", "year", "year", date(2022, 1, 1), date(2023, 1, 1)),
    ("Since 2016", "year", "year", date(2016, 1, 1), date(2017, 1, 1)),
])
def test_gold_parser(text, form, granularity, start, end):
    g = parse_time_answer(text)
    assert (g.form, g.granularity, g.start, g.end) == (form, granularity, start, end)


def test_gold_durations_and_unread():
    assert parse_time_answer("4 years").duration == (4, 4, "year")
    assert parse_time_answer("10 years ago").duration == (10, 10, "year")
    assert parse_time_answer("A few years ago").duration == (2, 5, "year")
    assert parse_time_answer("nearly three months").duration == (3, 3, "month")
    for text in ("her mother", "13 August", "Seattle", "", None):
        assert parse_time_answer(text) is None  # not a time this parser reads: counted, never scored


DAY = GoldTime("date", "day", date(2023, 5, 7), date(2023, 5, 8))
WEEK = GoldTime("relative", "week", date(2023, 6, 2), date(2023, 6, 9))
MONTH = GoldTime("month", "month", date(2023, 6, 1), date(2023, 7, 1))


def test_strict_and_lenient():
    assert score(DAY, date(2023, 5, 7), date(2023, 5, 8)) == (True, True)
    assert score(DAY, date(2023, 5, 6), date(2023, 5, 7)) == (False, False)  # the day before
    assert score(DAY, date(2023, 5, 1), date(2023, 6, 1)) == (False, False)  # a month for a day: coarser
    assert score(WEEK, date(2023, 6, 5), date(2023, 6, 6)) == (False, True)  # a day inside the week
    assert score(MONTH, date(2023, 6, 12), date(2023, 6, 19)) == (True, True)  # a week, widened to its month
    assert score(MONTH, date(2023, 5, 29), date(2023, 6, 5)) == (False, True)  # across two months: overlaps
    assert score(DAY, None, None) == (False, False)
    length = GoldTime("duration", "duration", duration=(4, 4, "year"))
    assert score(length, None, None, (4, 4, "year")) == (True, True)
    assert score(length, None, None, (3, 3, "year")) == (False, False)
    assert score(length, None, None, (48, 48, "month")) == (True, True)
    assert score(GoldTime("duration", "duration", duration=(2, 5, "year")), None, None, (3, 3, "year")) == (False, True)


@pytest.mark.parametrize("text", ["I went yesterday", "I went last week", "We went this week", "last weekend",
                                  "two weekends ago", "next month", "last year", "last summer", "last Friday"])
def test_rendered_answers_read_back(text):
    """What the memory writes, the evaluation's parser reads back to the same interval (two separate codes)."""
    said = datetime(2023, 7, 17, 14, tzinfo=timezone.utc)
    t = read_event_time(text, said).time
    g = parse_time_answer(render(t, said))
    assert (g.start, g.end) == (t.start.date(), t.end.date())


def locomo_file(tmp_path):
    conv = dict(ZYPHRA, session_1_date_time="9:00 am on 5 May, 2023", session_2_date_time="8:00 am on 12 May, 2023")
    conv["session_2"] = [dict(conv["session_2"][0], text="I started pottery classes yesterday."),
                         conv["session_2"][1]]
    qa = [{"question": "When did Bob start pottery classes?", "answer": "11 May 2023", "evidence": ["D2:1"],
           "category": 2},
          {"question": "When did Ann adopt Rex?", "answer": "5 May, 2023", "evidence": ["D1:1"], "category": 2},
          {"question": "Who adopted Rex?", "answer": "Ann", "evidence": ["D1:1"], "category": 2},
          {"question": "What did Bob start?", "answer": "pottery", "evidence": ["D2:1"], "category": 4}]
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([{"sample_id": "conv-x", "conversation": conv, "qa": qa}]))
    return path


class FakeLLM:
    identity = "fake"

    def generate(self, chats, **kw):
        from retrieval.llm import GenerationResult

        return [GenerationResult("I think it was 11 May 2023.", True, None, 0.0, "fake", "fake") for _ in chats]


def test_evaluate_end_to_end(tmp_path, tiny_backbone):
    from models.dual_encoder import DualEncoder

    report = locomo_answers.evaluate(str(locomo_file(tmp_path)), DualEncoder.from_backbone(tiny_backbone),
                                     dev=("conv-x",), backend=FakeLLM())
    assert report["n_scored"] == 2 and [f["answer"] for f in report["gold_unread"]] == ["Ann"]
    res = report["results"]
    assert res["dev"]["gold_evidence"] == {"n": 2, "strict": 100.0, "lenient": 100.0}
    assert res["dev"]["llm"]["strict"] == 50.0 and "held_out" in res and set(res["by_form"]) == {"date"}
    (q,) = [q for q in report["questions"] if q["gold"] == "11 May 2023"]
    assert q["answers"]["gold_evidence"] == "11 May 2023" and q["answers"]["top_turn_timestamp"] in (
        "12 May 2023", "5 May 2023")
    assert "Excerpts" in locomo_answers.llm_prompt("When?", __import__("pandas").DataFrame())[1]["content"]


def test_command_writes_report(tmp_path, tiny_backbone, capsys):
    out = tmp_path / "answers.json"
    code = locomo_answers.main(["--locomo", str(locomo_file(tmp_path)), "--encoder", tiny_backbone, "--cache-dir", "",
                                "--dev", "conv-x", "--output", str(out)])
    printed = capsys.readouterr().out
    assert code == 0 and "gold_evidence" in printed and "unread gold" in printed and out.exists()
    assert json.loads(out.read_text())["ingest"]["conv-x"]["with_event_time"] == 1
    assert locomo_answers.main(["--locomo", str(tmp_path / "nope.json")]) == 2


def test_a_length_between_two_events_is_scored(tmp_path, tiny_backbone):
    """Rex adopted on 5 May (no expression: the day it was said), pottery started "yesterday" on 12 May: 6 days."""
    from models.dual_encoder import DualEncoder

    path = locomo_file(tmp_path)
    data = json.loads(path.read_text())
    data[0]["qa"] = [{"question": "How many days passed between Ann adopting Rex and Bob starting pottery classes?",
                      "answer": "6 days", "evidence": ["D1:1", "D2:1"], "category": 2}]
    path.write_text(json.dumps(data))
    report = locomo_answers.evaluate(str(path), DualEncoder.from_backbone(tiny_backbone), dev=("conv-x",),
                                     depth=1)
    (q,) = report["questions"]
    assert q["kind"] == "between" and q["answers"]["gold_evidence"] == "6 days" and q["strict"]["gold_evidence"]
    assert report["evidence_depth"] == 1 and q["form"] == "duration"


def test_gold_evidence_that_states_no_time_borrows_its_neighbours(tmp_path, tiny_backbone):
    """The gold turn is the reply after "I started pottery classes yesterday." (it states no time): the answer
    comes from the turn before it in its session, which shares "pottery" with the question."""
    from models.dual_encoder import DualEncoder

    path = locomo_file(tmp_path)
    data = json.loads(path.read_text())
    data[0]["conversation"]["session_2"][1]["text"] = "Pottery sounds so relaxing, enjoy the classes!"
    data[0]["qa"] = [{"question": "When did Bob start pottery classes?", "answer": "11 May 2023",
                      "evidence": ["D2:2"], "category": 2}]
    path.write_text(json.dumps(data))
    report = locomo_answers.evaluate(str(path), DualEncoder.from_backbone(tiny_backbone), dev=("conv-x",))
    (q,) = report["questions"]
    assert q["answers"]["gold_evidence"] == "11 May 2023" and q["strict"]["gold_evidence"]


def test_held_out_unread_gold_is_counted_not_shown(tmp_path, tiny_backbone, capsys):
    code = locomo_answers.main(["--locomo", str(locomo_file(tmp_path)), "--encoder", tiny_backbone, "--cache-dir", "",
                                "--dev", "conv-y"])
    printed = capsys.readouterr().out
    assert code == 0 and "Who adopted Rex?" not in printed
    assert "unread gold on the held-out conversations: 1 (listed in the JSON)" in printed


def test_the_learned_rows_answer_by_the_support_rule_beside_the_best_row_alone(tmp_path, tiny_backbone):
    """With a relevance model (here one that gives every candidate 0.5) the report holds both the support rule's
    answers and the best row's alone, scored on the same questions, and README's row names the second as a baseline."""
    import math

    from models.dual_encoder import DualEncoder
    from retrieval.memory.relevance.features import FEATURES
    from retrieval.memory.relevance.model import RelevanceModel

    n = len(FEATURES)
    model = RelevanceModel([0.0] * n, [1.0] * n, [0.0] * n, math.log(0.5 / 0.5), 0.5, "threshold")
    report = locomo_answers.evaluate(str(locomo_file(tmp_path)), DualEncoder.from_backbone(tiny_backbone),
                                     dev=("conv-x",), relevance={"conv-x": model})
    dev = report["results"]["dev"]
    assert dev["relevance"]["n"] == dev["relevance_top"]["n"] == dev["end_to_end"]["n"] == 2
    assert all({"relevance", "relevance_top"} <= set(q["answers"]) for q in report["questions"])
    report["folds"] = 1
    (learned,) = [h for h in locomo_answers.headline(report) if "learned relevance" in h.metric]
    assert learned.baselines["the model's best row alone"] == dev["relevance_top"]["strict"]
