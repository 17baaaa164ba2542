"""The cTBLS response prompt: sections, the knowledge budget, stop-word removal."""

from __future__ import annotations

from retrieval.ctbls.prompts import (
    RESPONSE_SYSTEM_PROMPT,
    build_response_messages,
    build_response_prompt,
    fit_knowledge,
    remove_stop_words,
)

CELLS = [
    "Club: Liverpool F.C. Founded: 1892",  # 5 words
    "Ground: Anfield. Capacity: 61,276 seats",  # 5 words
    "Manager: Arne Slot since 2024",  # 5 words
]


def test_messages_hold_history_turns_then_ranked_knowledge_and_query():
    messages = build_response_messages([("Which club?", "Liverpool."), ("Founded?", "1892.")], CELLS[:2], "Where?")
    assert messages[:5] == [
        {"role": "system", "content": RESPONSE_SYSTEM_PROMPT},
        {"role": "user", "content": "Which club?"},
        {"role": "assistant", "content": "Liverpool."},
        {"role": "user", "content": "Founded?"},
        {"role": "assistant", "content": "1892."},
    ]
    assert messages[5] == {"role": "user", "content": f"Knowledge:\n[1] {CELLS[0]}\n[2] {CELLS[1]}\n\nQuery: Where?"}


def test_paper_layout_puts_everything_in_one_prompt():
    messages = build_response_messages([("Which club?", "Liverpool.")], CELLS[:1], "Where?", history_as_turns=False)
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[1]["content"] == (
        f"Dialogue history:\nUser: Which club?\nAssistant: Liverpool.\n\nKnowledge:\n[1] {CELLS[0]}\n\nQuery: Where?"
    )


def test_first_turn_without_knowledge_is_just_the_query():
    assert build_response_prompt([], [], "Which club?") == "Query: Which club?"
    assert build_response_messages([], ["  "], "q", system_prompt=None) == [{"role": "user", "content": "Query: q"}]


def test_budget_keeps_whole_items_in_rank_order_then_cuts_one():
    assert fit_knowledge(CELLS, None) == CELLS
    assert fit_knowledge(CELLS, 15) == CELLS
    assert fit_knowledge(CELLS, 10) == CELLS[:2]
    assert fit_knowledge(CELLS, 12) == [*CELLS[:2], "Manager: Arne"]
    assert fit_knowledge(CELLS, 0) == []


def test_budget_counts_with_the_given_tokenizer():
    def count_chars(text: str) -> int:  # stands in for a subword tokenizer: more tokens than words
        return len(text)

    kept = fit_knowledge(CELLS, len(CELLS[0]) + 12, count_chars)
    assert kept == [CELLS[0], "Ground:"]  # "Ground: Anfield." (16 chars) would pass 12
    prompt = build_response_prompt([], CELLS, "q", knowledge_budget=len(CELLS[0]), count_tokens=count_chars)
    assert CELLS[0] in prompt and "Anfield" not in prompt


def test_stop_words_go_and_content_stays():
    assert remove_stop_words("The club was founded in 1892, and it is not in London.") == (
        "club founded 1892, not London."
    )
    assert remove_stop_words("Artist: The Beatles (band)") == "Artist: Beatles (band)"


def test_stop_word_removal_makes_more_knowledge_fit():
    cells = ["the ground of the club is the Anfield", "the manager of the club is Arne Slot"]
    plain = build_response_prompt([], cells, "q", knowledge_budget=9)
    compact = build_response_prompt([], cells, "q", knowledge_budget=9, drop_stop_words=True)
    assert "Slot" not in plain
    assert "[1] ground club Anfield\n[2] manager club Arne Slot" in compact
