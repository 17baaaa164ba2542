"""The fine stage by span choice: candidate spans, likelihood scoring with a shared prompt cache, the choice."""

from __future__ import annotations

import math

import pytest
from test_llm import tiny_lm_dir  # noqa: F401  (the tiny random Llama fixture)

from retrieval.ctbls.cell_text import CellTextSettings
from retrieval.ctbls.prompts import build_span_messages
from retrieval.ctbls.span_choice import SpanChoice, choose_cells, choose_span, select_examples, span_cells
from retrieval.ctbls.spans import Span, candidate_spans, passage_spans, value_spans
from retrieval.data.types import Cell, Table
from retrieval.llm import load_backend
from retrieval.llm.likelihood import AnswerScore, LikelihoodUnsupported, answer_log_probs


def test_value_spans_split_a_cell_at_its_separators():
    assert value_spans("3 ( 2011 , 2014 , 2015 )") == [("3 ( 2011 , 2014 , 2015 )", "cell"), ("3", "part"),
                                                      ("2011", "part"), ("2014", "part"), ("2015", "part")]
    assert value_spans("Guy Branston") == [("Guy Branston", "cell")]


def test_passage_spans_find_dates_numbers_entities_and_words():
    text = ("Charlie Bicknell ( born 6 November 1905 ) was a midfielder for the Royal Aircraft Factory in "
            "Sheffield , South Yorkshire , England , with 38 million fans")
    found = passage_spans(text)
    for expected in [("6 November 1905", "date"), ("November 1905", "date"), ("38 million", "number"),
                     ("Charlie Bicknell", "entity"), ("Royal Aircraft Factory", "entity"),
                     ("Sheffield , South Yorkshire , England", "entity"), ("midfielder", "word")]:
        assert expected in found, expected
    assert ("November 6 , 1905", "date") in passage_spans("born November 6 , 1905 in Leeds")


def test_candidate_spans_keep_the_first_occurrence_and_filter_kinds():
    spans = candidate_spans([("Madrid", ["Real Madrid plays in Madrid"]), ("madrid", ["Barcelona"])])
    assert [(s.text, s.rank, s.kind) for s in spans][:2] == [("Madrid", 0, "cell"), ("Real Madrid", 0, "entity")]
    assert sum(s.text.lower() == "madrid" for s in spans) == 1
    assert all(s.kind == "cell" for s in candidate_spans([("a", ["B C"]), ("d", [])], kinds=["cell"]))
    assert len(candidate_spans([("a", ["B C d e"])], max_spans=2)) == 2
    with pytest.raises(ValueError, match="unknown span kinds"):
        candidate_spans([], kinds=["nope"])


def _naive_log_prob(backend, messages, answer):
    """The same score without the shared cache: one forward pass over prompt + answer + end token."""
    import torch

    from retrieval.llm.likelihood import _end_token_id

    tok = backend.tokenizer
    prompt = tok.encode(backend.render(messages), add_special_tokens=False)
    answer_ids = tok.encode(answer, add_special_tokens=False) + [_end_token_id(backend)]
    ids = torch.tensor([prompt + answer_ids])
    with torch.inference_mode():
        logp = torch.log_softmax(backend.lm(input_ids=ids).logits[0].float(), dim=-1)
    return sum(logp[len(prompt) - 1 + j, t].item() for j, t in enumerate(answer_ids))


def test_cached_batched_scores_equal_one_pass_each(tiny_lm_dir):  # noqa: F811
    backend = load_backend(f"transformers:{tiny_lm_dir}")
    messages = [{"role": "user", "content": "Knowledge: Madrid is the capital of Spain. Query: which city?"}]
    answers = ["Madrid", "the capital of Spain", "Spain", "a much longer answer than the others here"]
    scores = answer_log_probs(backend, messages, answers, batch_tokens=6)  # several packs, ragged lengths
    for answer, score in zip(answers, scores, strict=True):
        assert score.text == answer and score.tokens == len(backend.tokenizer.encode(answer,
                                                                                    add_special_tokens=False)) + 1
        assert math.isclose(score.total, _naive_log_prob(backend, messages, answer), abs_tol=1e-4)
    assert answer_log_probs(backend, messages, []) == []


def test_choose_span_takes_the_likeliest_and_falls_back_without_scores(tiny_lm_dir):  # noqa: F811
    backend = load_backend(f"transformers:{tiny_lm_dir}")
    messages = [{"role": "user", "content": "which?"}]
    spans = [Span("alpha", 0, "cell"), Span("beta gamma", 1, "cell"), Span("delta", 1, "entity")]
    choice = choose_span(backend, messages, spans)
    totals = {s.text: a.total for s, a in choice.scores}
    assert choice.ok and choice.text == max(totals, key=totals.get)
    assert [a.total for _, a in choice.scores] == sorted(totals.values(), reverse=True)
    means = choose_span(backend, messages, spans, scoring="mean")
    assert means.text == max(means.scores, key=lambda sa: sa[1].mean)[0].text

    class Server:  # no local model: the documented fallback
        pass

    fallback = choose_span(Server(), messages, spans)
    assert not fallback.ok and fallback.text == "alpha" and "local transformers model" in fallback.error
    with pytest.raises(LikelihoodUnsupported):
        answer_log_probs(Server(), messages, ["x"])
    assert choose_span(backend, messages, []).span is None


def _table() -> Table:
    rows = [[Cell("Ben", ("/wiki/Ben",)), Cell("LSU")], [Cell("Ann"), Cell("Iowa")], [Cell("Bob"), Cell("LSU")]]
    return Table("t", "Players", ["Player", "School"], rows)


def test_span_cells_cut_the_linked_pages_and_choose_cells_by_margin():
    table = _table()
    passages = {"/wiki/Ben": "Ben McDonald was born in Baton Rouge " * 20}
    cells = span_cells(table, [(0, 0), (1, 1), (2, 1), (0, 1)], passages, CellTextSettings(), passage_words=10)
    assert cells[0].value == "Ben" and len(cells[0].passages[0].split()) == 10
    assert cells[0].text.endswith(cells[0].passages[0]) and cells[1].passages == ()
    score = lambda text, total: (Span(text, 0, "cell"), AnswerScore(text, total, 2))  # noqa: E731
    choice = SpanChoice(Span("Iowa", 1, "cell"), [score("Iowa", -1.0), score("LSU", -1.5), score("Ben", -1.6)])
    assert choose_cells(choice, cells) == [(1, 1)]
    # LSU is within 1.0 of the best and in Iowa's column (both of its cells); Ben is close but in another column
    assert choose_cells(choice, cells, margin=1.0) == [(1, 1), (2, 1), (0, 1)]
    assert choose_cells(SpanChoice(None), cells) == []


def test_span_messages_put_the_examples_before_the_history():
    messages = build_span_messages([("q1", "a1")], ["[cell] x"], "q2", examples=[(["k"], "eq", "ea")])
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert "Query: eq" in messages[1]["content"] and messages[2]["content"] == "ea"
    assert messages[3]["content"] == "q1" and "Query: q2" in messages[-1]["content"]


def test_select_examples_follow_the_rule():
    turns = [(["long " * 100], "q0", "Madrid", [Span("Madrid", 0, "cell")]),
             (["short"], "q1", "madrid", [Span("Madrid", 0, "cell")]),
             (["other"], "q2", "1905", [Span("1905", 0, "number")]),
             (["third"], "q3", "Ann", [Span("Ann", 0, "cell")])]
    assert select_examples(turns, kinds=("cell", "number", "entity"), max_words=60) == [
        (["short"], "q1", "Madrid"), (["other"], "q2", "1905")]
    repeated = [(["k1"], "q1", "Ben", [Span("Ben", 0, "cell")]), (["k1"], "q1 again", "Ben", [Span("Ben", 0, "cell")]),
                (["k2"], "q2", "Ben", [Span("Ben", 0, "cell")]), (["k3"], "q3", "Ann", [Span("Ann", 0, "cell")])]
    assert [q for _, q, _ in select_examples(repeated, kinds=("cell",), per_kind=3)] == ["q1", "q3"]
