"""The page's Memory tab: a shipped, uploaded or living log; a question in plain words; how it was read, the plan
as steps, the rows on a timeline and in a table beside semantic-only search's, and the when-answer."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from retrieval.app.memory_demo import LIVE_LABEL, LiveMemory, MemoryDemo, rows_table
from retrieval.app.render import PAGE_ERRORS, ROW_CHARS, ROW_WIDTHS, error_html, esc, timeline_figure, when_html


def build_memory_tab(memories: MemoryDemo, live: LiveMemory, default_log: str | None) -> None:
    """The tab's components and events, inside the page's ``gr.Tab``."""
    import gradio as gr

    def labels() -> list[str]:
        return list(memories.logs) + ([LIVE_LABEL] if live.folder else [])

    gr.Markdown("Ask a conversation about what was said and when, in plain words. The plan's rows are "
                "shown beside semantic-only search (the paper's semantic@10 baseline).")
    with gr.Row():
        log = gr.Dropdown(labels(), value=default_log, label="Conversation log",
                          elem_id="memory-log", allow_custom_value=False, scale=3)
        upload = gr.File(label="…or upload a log (Zyphra / LoCoMo .json, JSONL)",
                         file_types=[".json", ".jsonl"], type="filepath", elem_id="memory-upload", scale=2,
                         height=110)
    with gr.Row():
        mq = gr.Textbox(label="Question", value="What did we discuss last Friday?",
                        elem_id="memory-question", scale=4)
        mask = gr.Button("Ask", variant="primary", elem_id="memory-ask", scale=1)
    with gr.Accordion("Earlier turns and the reference time", open=False):
        earlier = gr.Textbox(label="Earlier turns, one per line (for follow-ups: 'that week', 'then')",
                             lines=2, elem_id="memory-history")
        now = gr.Textbox(label="Now (ISO 8601; default: the end of the log)", elem_id="memory-now")
    merror = gr.HTML(elem_id="memory-error")
    when = gr.HTML(elem_id="memory-when")
    with gr.Row():
        reading = gr.Dataframe(headers=["part", "read as"], label="How the question was read",
                               elem_id="memory-reading", wrap=True, interactive=False)
        plan = gr.Markdown(elem_id="memory-plan", label="The plan")
    timeline = gr.Plot(show_label=False, elem_id="memory-timeline")
    with gr.Row():
        mrows = gr.Dataframe(label="The plan's rows", elem_id="memory-rows", wrap=True,
                             column_widths=ROW_WIDTHS, max_chars=ROW_CHARS, interactive=False)
        srows = gr.Dataframe(label="Semantic-only search (baseline)", elem_id="memory-semantic", wrap=True,
                             column_widths=ROW_WIDTHS, max_chars=ROW_CHARS,
                             interactive=False)

    def on_upload(path):
        if not path:
            return gr.skip(), ""
        try:
            label = memories.upload(path, Path(path).name)
        except PAGE_ERRORS as e:
            return gr.skip(), error_html(f"{Path(path).name}: cannot be read as a log: {e}")
        return gr.update(choices=labels(), value=label), ""

    def on_memory_ask(label, text, history_text, now_text):
        try:
            if not label:
                raise ValueError("pick a log first (or upload one)")
            memory = live.get() if label == LIVE_LABEL else memories.memory(label)
            got = memories.ask(memory, text or "", [h for h in (history_text or "").splitlines() if h.strip()],
                               (now_text or "").strip() or None)
        except PAGE_ERRORS as e:
            return error_html(str(e)), "", gr.skip(), gr.skip(), gr.skip(), gr.skip(), gr.skip()
        r = got.result
        figure = timeline_figure(got.frame, r.ids, got.semantic.index.tolist(), f"{label}: {text[:60]}")
        steps = "\n".join(f"- {s}" for s in got.plan_steps())
        said_first = "".join(f'<p class="warning">⚠ {esc(w)}</p>' for w in r.warnings)
        return ("", said_first + when_html(r.answer), pd.DataFrame(got.reading_rows(), columns=["part", "read as"]),
                f"**The plan** ({r.plan.planner} planner, {len(r.rows)} rows)\n\n{steps}", figure,
                rows_table(r.rows, r.execution.scores), rows_table(got.semantic))

    upload.upload(on_upload, upload, [log, merror])
    outs = [merror, when, reading, plan, timeline, mrows, srows]
    mask.click(on_memory_ask, [log, mq, earlier, now], outs)
    mq.submit(on_memory_ask, [log, mq, earlier, now], outs)

