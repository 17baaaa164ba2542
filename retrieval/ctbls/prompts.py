"""Every prompt template in one place, and the cTBLS response prompt builder.

cTBLS' fine state tracking and response step (Sundar & Heck, NLP4ConvAI 2023) prompts an LLM with the
dialogue history, the top-k cells ranked by the coarse state tracker, and the current query. Knowledge
is cut to a token budget (counted with the backend's tokenizer, ``backend.count_tokens``, or whitespace
words); the paper's optional stop-word removal lets more of it fit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from retrieval.search.english import CONTRACTION_FRAGMENTS, ENGLISH_STOP_WORDS, NEGATIONS

RESPONSE_SYSTEM_PROMPT = (
    "You are a helpful assistant answering questions about a table. Use the knowledge, most relevant "
    "first, and the conversation so far to answer the query briefly, in one sentence."
)

# Sections of the prompt text, each left out when empty (no history on the first turn, or when the
# history goes as chat turns; no knowledge in the paper's "no knowledge" setting).
RESPONSE_HISTORY_TEMPLATE = "Dialogue history:\n{history}"
RESPONSE_TURN_TEMPLATE = "User: {query}\nAssistant: {answer}"
RESPONSE_KNOWLEDGE_TEMPLATE = "Knowledge:\n{knowledge}"
RESPONSE_KNOWLEDGE_ITEM_TEMPLATE = "[{rank}] {text}"
RESPONSE_QUERY_TEMPLATE = "Query: {query}"

DEFAULT_KNOWLEDGE_BUDGET = 512

# The shared English list less the negations, which flip facts when dropped, and less the contraction
# fragments, which whitespace splitting never produces but which a cell's value may be.
STOP_WORDS = ENGLISH_STOP_WORDS - NEGATIONS - CONTRACTION_FRAGMENTS

_PUNCTUATION = "\"'.,;:!?()[]{}"

TokenCounter = Callable[[str], int]


def whitespace_token_count(text: str) -> int:
    """Words separated by whitespace: the budget unit when no tokenizer is at hand."""
    return len(text.split())


def remove_stop_words(text: str) -> str:
    """``text`` without English stop words, keeping the other words as written (case, punctuation)."""
    return " ".join(w for w in text.split() if w.strip(_PUNCTUATION).lower() not in STOP_WORDS)


def fit_knowledge(
    knowledge: Sequence[str], budget: int | None, count_tokens: TokenCounter = whitespace_token_count
) -> list[str]:
    """The ranked knowledge that fits in ``budget`` tokens, best first.

    Items are taken in rank order while they fit whole; the first that does not is cut to the tokens
    left (at a word boundary) and nothing after it is kept. ``budget=None`` keeps everything.
    """
    if budget is None:
        return list(knowledge)
    kept: list[str] = []
    left = budget
    for text in knowledge:
        n = count_tokens(text)
        if n <= left:
            kept.append(text)
            left -= n
            continue
        head = _truncate(text, left, count_tokens)
        if head:
            kept.append(head)
        break
    return kept


def _truncate(text: str, budget: int, count_tokens: TokenCounter) -> str:
    """The longest word prefix of ``text`` that counts at most ``budget`` tokens (binary search)."""
    words = text.split()
    lo, hi = 0, len(words)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count_tokens(" ".join(words[:mid])) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return " ".join(words[:lo])


def build_response_prompt(
    history: Sequence[tuple[str, str]],
    knowledge: Sequence[str],
    query: str,
    *,
    knowledge_budget: int | None = DEFAULT_KNOWLEDGE_BUDGET,
    count_tokens: TokenCounter = whitespace_token_count,
    drop_stop_words: bool = False,
) -> str:
    """The cTBLS response prompt as one text: dialogue history, ranked knowledge, query.

    ``history`` holds the earlier turns as (query, answer) pairs, oldest first; ``knowledge`` the
    ranked cells' text, best first. Stop words are removed (when asked) before the budget is applied.
    Empty sections are left out.
    """
    if drop_stop_words:
        knowledge = [remove_stop_words(k) for k in knowledge]
    knowledge = fit_knowledge([k for k in knowledge if k.strip()], knowledge_budget, count_tokens)
    sections = []
    if history:
        turns = "\n".join(RESPONSE_TURN_TEMPLATE.format(query=q, answer=a) for q, a in history)
        sections.append(RESPONSE_HISTORY_TEMPLATE.format(history=turns))
    if knowledge:
        items = "\n".join(RESPONSE_KNOWLEDGE_ITEM_TEMPLATE.format(rank=r, text=t) for r, t in enumerate(knowledge, 1))
        sections.append(RESPONSE_KNOWLEDGE_TEMPLATE.format(knowledge=items))
    sections.append(RESPONSE_QUERY_TEMPLATE.format(query=query))
    return "\n\n".join(sections)


def build_response_messages(
    history: Sequence[tuple[str, str]],
    knowledge: Sequence[str],
    query: str,
    *,
    knowledge_budget: int | None = DEFAULT_KNOWLEDGE_BUDGET,
    count_tokens: TokenCounter = whitespace_token_count,
    drop_stop_words: bool = False,
    system_prompt: str | None = RESPONSE_SYSTEM_PROMPT,
    history_as_turns: bool = True,
) -> list[dict[str, str]]:
    """Chat messages for one cTBLS response.

    By default the earlier turns are real user/assistant messages and the last user message holds the
    knowledge and the query: small chat models (SmolLM2) otherwise continue the transcript's format
    instead of answering. ``history_as_turns=False`` gives the paper's layout, everything in one
    prompt. Pass ``count_tokens=backend.count_tokens`` to budget knowledge in the backend's tokens.
    """
    prompt = build_response_prompt(
        [] if history_as_turns else history,
        knowledge,
        query,
        knowledge_budget=knowledge_budget,
        count_tokens=count_tokens,
        drop_stop_words=drop_stop_words,
    )
    messages = [{"role": "system", "content": system_prompt}] if system_prompt else []
    if history_as_turns:
        for q, a in history:
            messages += [{"role": "user", "content": q}, {"role": "assistant", "content": a}]
    return [*messages, {"role": "user", "content": prompt}]


# The fine stage's span choice (retrieval/ctbls/span_choice.py): the model reads the knowledge and is asked for the
# exact phrase; its answer is then scored among the candidate spans, never generated freely.
SPAN_SYSTEM_PROMPT = (
    "You answer questions about a table. Reply with only the exact words from the knowledge that answer the "
    "query: a name, a number, a date or a short phrase, nothing else."
)


def build_span_messages(
    history: Sequence[tuple[str, str]],
    knowledge: Sequence[str],
    query: str,
    *,
    examples: Sequence[tuple[Sequence[str], str, str]] = (),
    knowledge_budget: int | None = DEFAULT_KNOWLEDGE_BUDGET,
    count_tokens: TokenCounter = whitespace_token_count,
    system_prompt: str | None = SPAN_SYSTEM_PROMPT,
) -> list[dict[str, str]]:
    """Chat messages for choosing a span: the system prompt, few-shot examples, the history, then this turn.

    ``examples`` are ``(knowledge, query, answer)`` triples, each written as a user message in this turn's
    layout and the answer as the assistant's reply (few-shot, as in the paper's no-knowledge setting).
    """
    shots: list[dict[str, str]] = []
    for shot_knowledge, shot_query, shot_answer in examples:
        shots += [{"role": "user", "content": build_response_prompt([], shot_knowledge, shot_query,
                                                                     knowledge_budget=knowledge_budget,
                                                                     count_tokens=count_tokens)},
                  {"role": "assistant", "content": shot_answer}]
    turn = build_response_messages(history, knowledge, query, knowledge_budget=knowledge_budget,
                                   count_tokens=count_tokens, system_prompt=None)
    head = [{"role": "system", "content": system_prompt}] if system_prompt else []
    return [*head, *shots, *turn]
