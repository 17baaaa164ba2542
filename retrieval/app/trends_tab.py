"""The page's Trends tab: a topic over a log or uploaded documents, the volume plot, the samples per period and
the report (each analysis also written as a folder)."""

from __future__ import annotations

from pathlib import Path

from retrieval.app.render import PAGE_ERRORS, ROW_CHARS, error_html
from retrieval.app.trends_demo import TrendsDemo, periods_frame
from retrieval.trends.periods import PERIODS


def build_trends_tab(trends: TrendsDemo, default_source: str | None) -> None:
    """The tab's components and events, inside the page's ``gr.Tab``."""
    import gradio as gr

    gr.Markdown("How much a topic is talked about, period by period, with the closest examples. A conversation is "
                "counted by the per-turn topic model, other documents by a threshold read off the encoder's "
                "similarities (retrieval.trends); the notes say which.")
    with gr.Row():
        source = gr.Dropdown(list(trends.sources), value=default_source, label="Documents",
                             elem_id="trends-source", scale=3)
        tupload = gr.File(label="…or upload a CSV / JSONL of {text, timestamp} or a log",
                          file_types=[".csv", ".jsonl", ".json"], type="filepath", elem_id="trends-upload",
                          scale=2, height=140)
    with gr.Row():
        tq = gr.Textbox(label="Question", value="How has the talk about travel evolved?",
                        elem_id="trends-question", scale=3)
        period = gr.Dropdown(["auto", *PERIODS], value="auto", label="Period", scale=1)
        topic = gr.Textbox(label="Topic (default: read from the question)", scale=2)
        tgo = gr.Button("Analyse", variant="primary", elem_id="trends-go", scale=1)
    terror = gr.HTML(elem_id="trends-error")
    volume = gr.Image(label="Volume per period", type="filepath", elem_id="trends-volume")
    tperiods = gr.Dataframe(label="Per period: documents, relevant ones, samples", elem_id="trends-periods",
                            max_chars=ROW_CHARS,
                            wrap=True, interactive=False)
    report = gr.Markdown(elem_id="trends-report")

    def on_trends_upload(path):
        if not path:
            return gr.skip(), ""
        try:
            label = trends.upload(path, Path(path).name)
        except PAGE_ERRORS as e:
            return gr.skip(), error_html(f"{Path(path).name}: cannot be read as documents: {e}")
        return gr.update(choices=list(trends.sources), value=label), ""

    def on_trend(label, text, period_name, topic_text):
        try:
            if not label:
                raise ValueError("pick the documents first (or upload a file)")
            result, paths = trends.analyse(label, text or "", period_name, (topic_text or "").strip() or None)
        except PAGE_ERRORS as e:
            return error_html(str(e)), gr.skip(), gr.skip(), gr.skip()
        report_text = "\n".join(line for line in paths["report"].read_text(encoding="utf-8").splitlines()
                                 if not line.startswith("!["))  # the plot is shown above, not as a relative link
        return "", str(paths["plot"]), periods_frame(result), report_text + f"\n\n*Written to {paths['report'].parent}*"

    tupload.upload(on_trends_upload, tupload, [source, terror])
    tgo.click(on_trend, [source, tq, period, topic], [terror, volume, tperiods, report])

