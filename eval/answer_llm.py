"""The LLM fine stage on SQA: the LLM is given the tracker's top cells and writes an answer, which is mapped back
to the cells it names by their text (retrieval/ctbls/answer_sets.py: ``cells_named``), so SQA's answer accuracy
can score it beside the extractive selector; ROUGE of the answer text against the gold answer texts too.

The prompt is the cTBLS response prompt (retrieval/ctbls/pipeline.py: ``response_messages``) with the earlier
questions and their *reference* answers as history, as eval.response does; the knowledge is the top-k cells'
text as the tracker wrote them; generation is greedy and cached (:func:`eval.generation.generate_all`).
"""

from __future__ import annotations

from eval.generation import generate_all, rouge_scores
from retrieval.ctbls.answer_sets import cells_named
from retrieval.ctbls.pipeline import DEFAULT_MAX_NEW_TOKENS, response_messages
from retrieval.ctbls.prompts import DEFAULT_KNOWLEDGE_BUDGET, RESPONSE_SYSTEM_PROMPT
from retrieval.ctbls.state_tracker import CellStateTracker, dialogue_turns
from retrieval.data.conversation_sets import ConversationSet
from retrieval.llm import LLMBackend


def llm_answers(tracker: CellStateTracker, data: ConversationSet, llm: LLMBackend, top_k: int = 3,
                max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS, knowledge_budget: int = DEFAULT_KNOWLEDGE_BUDGET,
                batch_size: int = 64, chunk: int = 8) -> tuple[dict[str, list], dict]:
    """Each turn's cells as named by the LLM's answer (from the top ``top_k`` cells it was shown), and a summary:
    ROUGE of the answers against the gold texts, failures, answers naming no cell. ``tracker`` must have indexed
    ``data``'s tables."""
    turns = [(c, p, t) for c in data.conversations for p, t in dialogue_turns(c)]
    ranked = tracker.rank_texts([tracker.history(p, t.query) for _, p, t in turns], [c.table_id for c, *_ in turns],
                                top_k, batch_size)
    ids, texts, _ = tracker.cells(data.tables.values())
    text_of = dict(zip(ids, texts))
    prompts = [response_messages(p, [text_of[i] for i, _ in cells], t.query, knowledge_budget=knowledge_budget,
                                 system_prompt=RESPONSE_SYSTEM_PROMPT)
               for (_, p, t), cells in zip(turns, ranked)]
    results = generate_all(llm, prompts, max_new_tokens=max_new_tokens, temperature=0.0, chunk=chunk)
    answers = {}
    for (_, _, turn), cells, result in zip(turns, ranked, results):
        shown = [(i, data.tables[i[0]].cell(i[1], i[2]).text) for i, _ in cells]
        answers[turn.turn_id] = cells_named(result.text, shown)
    references = [", ".join(data.answer_texts[t.turn_id]) for *_, t in turns]
    summary = {**rouge_scores([r.text for r in results], references), "top_k": top_k,
               "failed": sum(not r.ok for r in results), "named_no_cell": sum(not v for v in answers.values()),
               "examples": [{"question": t.query, "answer": r.text, "gold": data.answer_texts[t.turn_id]}
                            for (*_, t), r in list(zip(turns, results))[:5]]}
    return answers, summary
