"""The page's Live tab: what is said is recorded in a living memory with the time; a question is answered from what
was said before it (and not recorded)."""

from __future__ import annotations

from datetime import datetime, timezone

from retrieval.app.memory_demo import LiveMemory, MemoryDemo, rows_table
from retrieval.app.render import PAGE_ERRORS, ROW_CHARS, ROW_WIDTHS, error_html, esc, when_html


def build_live_tab(memories: MemoryDemo, live: LiveMemory) -> None:
    """The tab's components and events, inside the page's ``gr.Tab``."""
    import gradio as gr

    if live.folder is None:
        gr.Markdown("No living memory: start the page with `--live FOLDER`.")
    else:
        gr.Markdown(f"What you **say** is recorded in the living memory `{esc(live.folder)}` with "
                    "the time; **Ask** answers from what was said before (the question is not recorded).")
        chat = gr.Chatbot(label="Conversation", elem_id="live-chat", height=300)
        with gr.Row():
            speaker = gr.Textbox(value="user", label="Speaker", scale=1, elem_id="live-speaker")
            line = gr.Textbox(label="Message", placeholder="I adopted a cat called Miso today.", scale=4,
                              elem_id="live-line")
            say = gr.Button("Say", elem_id="live-say", scale=1)
            lask = gr.Button("Ask", variant="primary", elem_id="live-ask", scale=1)
        lerror = gr.HTML(elem_id="live-error")
        lwhen = gr.HTML(elem_id="live-when")
        lrows = gr.Dataframe(label="Rows the question selected", elem_id="live-rows", wrap=True,
                             column_widths=ROW_WIDTHS, max_chars=ROW_CHARS,
                             interactive=False)

        def on_say(messages, who, text):
            try:
                if not (text or "").strip():
                    raise ValueError("the message is empty")
                memory = live.get()
                idx = memory.add(who.strip() or "user", text.strip(), datetime.now(timezone.utc))
            except PAGE_ERRORS as e:
                return gr.skip(), gr.skip(), error_html(str(e))
            last = memory.table.last_row()  # the turn just recorded
            note = f"recorded [{idx}] in session {None if last is None else int(last['session'])}"
            return [*messages, {"role": "user", "content": f"{who}: {text}"},
                    {"role": "assistant", "content": note}], "", ""

        def on_live_ask(messages, text):
            try:
                memory = live.get()
                got = memories.ask(memory, text or "", now=datetime.now(timezone.utc))
            except PAGE_ERRORS as e:
                return gr.skip(), gr.skip(), error_html(str(e)), gr.skip(), gr.skip()
            r = got.result
            top = "; ".join(f"[{i}] {row['speaker']}: {row['text'][:80]}"
                            for i, row in r.rows.head(3).iterrows())
            reply = (r.answer.answer if r.answer is not None and r.answer.answer else
                     f"{len(r.rows)} rows" + (f": {top}" if top else ""))
            return ([*messages, {"role": "user", "content": f"(ask) {text}"},
                     {"role": "assistant", "content": reply}], "", "", when_html(r.answer),
                    rows_table(r.rows, r.execution.scores))

        say.click(on_say, [chat, speaker, line], [chat, line, lerror])
        line.submit(on_say, [chat, speaker, line], [chat, line, lerror])
        lask.click(on_live_ask, [chat, line], [chat, line, lerror, lwhen, lrows])
