"""The page's Tables tab: a typed question or a replayed conversation, the DTR's tables beside BM25's, the chosen
table with its top cells marked, the extractive answer at once and the LLM's when written (two events, chained)."""

from __future__ import annotations

from retrieval.app.render import PAGE_ERRORS, error_html, esc, legend_html, rankings_html, table_html
from retrieval.app.tables_demo import Dialogue, TablesDemo


def answer_html(turn, pending: bool, has_llm: bool) -> str:
    a = turn.answer
    if pending:
        llm = "writing…"
    elif not has_llm:
        llm = "(no LLM: the extractive answer only)"
    elif not a.llm_ok:
        llm = f"(the LLM failed: {esc(a.error)}; the top cell stands)"
    else:
        llm = esc(a.answer)
    reference = f'<p>Reference: <b class="reference">{esc(turn.reference)}</b></p>' if turn.reference else ""
    score = f" (DTR score {a.table_score:.3f})" if a.table_score is not None else " (given with the sequence)"
    return (f'<div class="table-answer"><p>Table: <b>{esc(a.table_title or a.table_id)}</b> ({esc(a.table_id)})'
            f'{score}</p><p>Extractive answer (the top cell): <b class="extractive">{esc(a.extractive)}</b></p>'
            f'<p>LLM answer: <b class="llm-answer">{llm}</b></p>{reference}</div>')


def history_messages(dialogue: Dialogue) -> list[dict]:
    out = []
    for t in dialogue.turns:
        out += [{"role": "user", "content": t.query}, {"role": "assistant", "content": t.answer.answer}]
    return out


def tables_outputs(demo: TablesDemo, dialogue: Dialogue, turn, pending: bool):
    """(answer, rankings, table, history, error) for one turn."""
    pipe = demo.pipe(dialogue)
    gold_uid = dialogue.conversation.table_id if dialogue.conversation else None
    rankings = "<h4>Tables ranked: the DTR beside BM25</h4>" + rankings_html(
        {"DTR": turn.dtr, "BM25": turn.bm25}, pipe.tables, gold_uid)
    table = pipe.tables[turn.answer.table_id]
    view = legend_html(turn.reranked is not None) + table_html(
        table, [i for i, _, _ in turn.answer.cells], [i for i, _ in turn.reranked or []], turn.gold)
    return answer_html(turn, pending, pipe.llm is not None), rankings, view, history_messages(dialogue), ""


def build_tables_tab(tables: TablesDemo | None) -> None:
    """The tab's components and events, inside the page's ``gr.Tab``."""
    import gradio as gr

    if tables is None:
        gr.Markdown("No tables loaded (the OTT-QA folder was not found; pass --data-dir).")
    else:
        dialogue = gr.State(Dialogue())
        gr.Markdown("Ask about a table, or replay a conversation turn by turn. "
                    + "".join(f"\n- *{n}*" for n in tables.notes))
        with gr.Row():
            question = gr.Textbox(label="Question", placeholder="Which river flows through Egypt?",
                                  elem_id="tables-question", scale=4)
            ask = gr.Button("Ask", variant="primary", elem_id="tables-ask", scale=1)
            new = gr.Button("New conversation", elem_id="tables-new", scale=1)
        with gr.Row():
            replay = gr.Dropdown(list(tables.conversations), label="Replay a conversation",
                                 value=None, elem_id="tables-replay", scale=4)
            step = gr.Button("Next turn", elem_id="tables-next", scale=1)
        error = gr.HTML(elem_id="tables-error")
        answer = gr.HTML(elem_id="tables-answer")
        with gr.Row():
            with gr.Column(scale=3):
                table_view = gr.HTML(elem_id="tables-table")
            with gr.Column(scale=2):
                rankings = gr.HTML(elem_id="tables-rankings")
                history = gr.Chatbot(label="Conversation", elem_id="tables-history", height=260)
        outputs = [answer, rankings, table_view, history, error]

        def first_step(state: Dialogue, text: str, reference=None):
            try:
                turn = tables.extract(state, text, reference)
            except PAGE_ERRORS as e:
                return state, None, gr.skip(), gr.skip(), gr.skip(), gr.skip(), error_html(str(e))
            return state, turn, *tables_outputs(tables, state, turn, pending=True)

        def second_step(state: Dialogue, turn):
            if turn is None:
                return state, gr.skip(), gr.skip(), gr.skip(), gr.skip(), gr.skip()
            tables.respond(state, turn)
            state.turns.append(turn)
            return state, *tables_outputs(tables, state, turn, pending=False)

        pending = gr.State(None)

        def on_ask(state, text):
            if state.conversation is not None and state.source != "typed" and \
                    tables.next_reference(state) is None:
                state = Dialogue()  # a replayed conversation ended: a typed question starts afresh
            return first_step(state, text)

        def on_step(state, label):
            if not label:
                return state, None, gr.skip(), gr.skip(), gr.skip(), gr.skip(), \
                    error_html("pick a conversation to replay first")
            source, conversation = tables.conversations[label]
            if state.conversation is None or state.source != source or \
                    state.conversation.conv_id != conversation.conv_id:
                state = Dialogue(source, conversation)
            ref = tables.next_reference(state)
            if ref is None:
                return state, None, gr.skip(), gr.skip(), gr.skip(), gr.skip(), \
                    error_html("the conversation has no more turns: pick another or start a new one")
            return first_step(state, ref[0], (ref[1], ref[2]))

        ask.click(on_ask, [dialogue, question], [dialogue, pending, *outputs]).then(
            second_step, [dialogue, pending], [dialogue, *outputs])
        question.submit(on_ask, [dialogue, question], [dialogue, pending, *outputs]).then(
            second_step, [dialogue, pending], [dialogue, *outputs])
        step.click(on_step, [dialogue, replay], [dialogue, pending, *outputs]).then(
            second_step, [dialogue, pending], [dialogue, *outputs])
        new.click(lambda: (Dialogue(), "", "", "", [], ""), None,
                  [dialogue, answer, rankings, table_view, history, error])

