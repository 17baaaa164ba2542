"""How the page draws results: a table with its chosen cells highlighted, the tables two rankers chose side by side,
a conversation's sessions on a timeline with the selected rows marked, a when-answer with its evidence.

Everything is plain HTML (escaped) or a matplotlib figure; long texts are cut with the whole text on demand (a
``<details>`` block, or the cell's tooltip).
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

import pandas as pd

from retrieval.ctbls.cell_text import CellId
from retrieval.data.jsonio import INPUT_ERRORS
from retrieval.data.types import Table
from retrieval.memory.when_answer import WhenAnswer

PAGE_ERRORS = (*INPUT_ERRORS, ValueError, KeyError, RuntimeError)  # bad input: said on the page, in its error box
# a rows table's columns: id, session, when, speaker, text, score (gradio's column_widths: str or int items)
ROW_WIDTHS: list[str | int] = ["7%", "9%", "17%", "11%", "46%", "10%"]

CELL_CHARS = 80  # a table cell's text shown before it is cut (the whole text in its tooltip)
ROW_CHARS = 160  # a rows table's cell shown before it is cut (the whole text on a click)
TEXT_CHARS = 300  # a longer text shows this much, then the rest on demand


def esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def error_html(message: str) -> str:
    return f'<p class="error-box" role="alert">{esc(message)}</p>'


def cut(text: str, limit: int = TEXT_CHARS) -> str:
    """``text`` as HTML: whole when short, else its start and the whole text in a ``<details>`` block."""
    if len(text) <= limit:
        return esc(text)
    return f'<details class="more"><summary>{esc(text[:limit - 1])}…</summary>{esc(text)}</details>'


def table_html(table: Table, tracker: Sequence[CellId] = (), reranked: Sequence[CellId] = (),
               gold: Sequence[tuple[int, int]] = (), max_rows: int = 60) -> str:
    """The table with the tracker's top cells (``cell-tracker``, numbered by rank), the state re-ranker's
    (``cell-rerank``) and the reference answer's (``cell-gold``) marked; rows past ``max_rows`` are left out,
    except those holding a marked cell, and the omission is said."""
    ranks = {(i[1], i[2]): n for n, i in enumerate(tracker, 1)}
    reranks = {(i[1], i[2]): n for n, i in enumerate(reranked, 1)}
    golden = {tuple(g) for g in gold}
    marked = {r for r, _ in [*ranks, *reranks, *golden]}
    shown = [r for r in range(table.n_rows) if r < max_rows or r in marked]
    head = "".join(f"<th>{esc(h)}</th>" for h in table.header)
    body, previous = [], -1
    for r in shown:
        if r != previous + 1:
            body.append(f'<tr class="gap"><td colspan="{table.n_cols}">…</td></tr>')
        previous = r
        cells = []
        for c, cell in enumerate(table.rows[r]):
            classes, badges = [], []
            if (r, c) in ranks:
                classes.append("cell-tracker")
                badges.append(f'<span class="badge tracker" title="tracker rank">{ranks[(r, c)]}</span>')
            if (r, c) in reranks:
                classes.append("cell-rerank")
                badges.append(f'<span class="badge rerank" title="re-ranker rank">{reranks[(r, c)]}</span>')
            if (r, c) in golden:
                classes.append("cell-gold")
            text = cell.text
            shown_text = esc(text) if len(text) <= CELL_CHARS else esc(text[:CELL_CHARS - 1]) + "…"
            cells.append(f'<td class="{" ".join(classes)}" data-row="{r}" data-col="{c}" title="{esc(text)}">'
                         f'{"".join(badges)}{shown_text}</td>')
        body.append(f"<tr>{''.join(cells)}</tr>")
    left = table.n_rows - len(shown)
    note = f'<p class="note">{left} more rows not shown</p>' if left else ""
    title = f"<h4>{esc(table.title)}</h4>" if table.title else ""
    return (f'{title}<div class="table-wrap"><table class="ctbls-table"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table></div>{note}")


def legend_html(reranker: bool) -> str:
    parts = ['<span class="badge tracker">1</span> the tracker\'s top cells',
             '<span class="cell-gold legend">gold</span> the reference answer (replayed conversations)']
    if reranker:
        parts.insert(1, '<span class="badge rerank">1</span> the state re-ranker\'s')
    return '<p class="legend">' + " · ".join(parts) + "</p>"


def rankings_html(rankings: Mapping[str, Sequence[tuple[str, float]]], tables: Mapping[str, Table],
                  gold: str | None = None) -> str:
    """The tables each ranker chose, side by side: per rank, each ranker's table (title, uid and score; ✓ and
    ``gold`` on the conversation's gold table); a ranker with nothing to rank (a table given) is said to be so."""
    if not any(rankings.values()):
        return '<p class="note">The table comes with the sequence: no table to rank.</p>'
    depth = max(len(r) for r in rankings.values())
    head = "<th>rank</th>" + "".join(f"<th>{esc(name)}</th>" for name in rankings)
    body = []
    for n in range(depth):
        cells = [f"<td>{n + 1}</td>"]
        for ranked in rankings.values():
            if n >= len(ranked):
                cells.append("<td></td>")
                continue
            uid, score = ranked[n]
            mark = ' <span class="gold-mark" title="the gold table">✓</span>' if uid == gold else ""
            cls = ' class="gold"' if uid == gold else ""
            cells.append(f'<td{cls}>{esc(tables[uid].title or uid)}{mark}<br><span class="note">{esc(uid)} · '
                         f"{float(score):.3f}</span></td>")
        body.append(f"<tr>{''.join(cells)}</tr>")
    return (f'<table class="ctbls-table rankings"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody>'
            "</table>")


def when_html(answer: WhenAnswer | None) -> str:
    """The when-answer: the date (or length), its interval and source, the derivation and the evidence rows."""
    if answer is None:
        return '<p class="note">Not a when-question: the rows below answer it.</p>'
    if not answer.answer:
        head = '<p class="when-answer none">No date could be given.</p>'
    else:
        span = f" [{answer.start:%Y-%m-%d %H:%M}, {answer.end:%Y-%m-%d %H:%M})" if answer.start and answer.end else ""
        head = (f'<p class="when-answer"><b>{esc(answer.answer)}</b>{esc(span)} '
                f'<span class="note">({esc(answer.granularity or "")} from {esc(answer.provenance)})</span></p>')
    steps = "".join(f"<li>{esc(s)}</li>" for s in answer.derivation)
    evidence = ""
    if answer.evidence is not None and len(answer.evidence):
        items = "".join(f"<li>[{int(i)}] {esc(r['timestamp'].strftime('%Y-%m-%d %H:%M'))} {esc(r['speaker'])}: "
                        f"{cut(str(r['text']), 200)}</li>" for i, r in answer.evidence.iterrows())
        evidence = f"<p>Evidence:</p><ul class='evidence'>{items}</ul>"
    return f"{head}<p>Derivation:</p><ol>{steps}</ol>{evidence}"


def timeline_figure(frame: pd.DataFrame, hits: Sequence[int], semantic: Sequence[int] = (), title: str = ""):
    """Every utterance as a grey tick at (time, session); the plan's rows as filled red dots, the semantic-only
    baseline's as open blue circles. A matplotlib figure (the caller closes it)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 3.2))
    if len(frame):
        t = frame["timestamp"].dt.tz_localize(None) if frame["timestamp"].dt.tz is not None else frame["timestamp"]
        ax.scatter(t, frame["session"], marker="|", s=30, color="#bbbbbb", label="utterance")
        sem = [i for i in semantic if i in frame.index]
        if sem:
            ax.scatter(t.loc[sem], frame.loc[sem, "session"], s=70, facecolors="none", edgecolors="#1f77b4",
                       linewidths=1.5, label="semantic-only search")
        got = [i for i in hits if i in frame.index]
        if got:
            ax.scatter(t.loc[got], frame.loc[got, "session"], s=28, color="#d62728", label="the plan's rows",
                       zorder=3)
    ax.set_xlabel("when it was said")
    ax.set_ylabel("session")
    ax.set_title((f"{title}\n" if title else "") + "the plan's rows (red) and semantic-only search's (blue circles), "
                 "by session and time", fontsize=9)
    ax.legend(loc="upper left", fontsize=8)
    fig.autofmt_xdate()
    fig.tight_layout()
    return fig
