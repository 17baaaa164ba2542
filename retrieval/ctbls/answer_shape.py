"""What shape a question's answer set has, predicted from its words: one cell, a whole column, or some of a column.

SQA's sequences follow a pattern (counted over our train tables): a first question mostly asks for a whole column
("what are all the venues?": 58 %), a later one mostly for one cell among the rows the previous answer named
("which of those was in May?"). The extractive selector (retrieval/ctbls/cell_selector.py) takes the column and
the rows from the tracker's ranking; how many cells to keep is this shape. A logistic regression over the
question's word uni- and bigrams and its position (first, second, third, later) learns it from training turns.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

from retrieval.data.types import Conversation, Table

SHAPES = ("cell", "column", "subset")


def answer_shape(targets: Sequence[tuple[int, int]], table: Table) -> str:
    """The shape of a gold answer: one cell, every row of one column, or anything else (several rows or columns)."""
    if len(targets) == 1:
        return "cell"
    if len({c for _, c in targets}) == 1 and len({r for r, _ in targets}) == table.n_rows:
        return "column"
    return "subset"


def shape_text(question: str, position: int) -> str:
    """What the classifier reads: the question and a token for its position (0, 1, 2, 3 = later)."""
    return f"{question} __position{min(position, 3)}"


class AnswerShapeClassifier:
    """Predicts :data:`SHAPES` from a question and its position; fit on conversations with gold answer cells."""

    def __init__(self, seed: int = 0):
        self.model = make_pipeline(TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True),
                                   LogisticRegression(max_iter=2000, C=4.0, random_state=seed))

    def fit(self, conversations: Iterable[Conversation], tables: dict[str, Table]) -> AnswerShapeClassifier:
        texts, shapes = [], []
        for conv in conversations:
            for position, turn in enumerate(conv.turns):
                if turn.targets:
                    texts.append(shape_text(turn.query, position))
                    shapes.append(answer_shape(turn.targets, tables[conv.table_id]))
        if len(set(shapes)) < 2:
            raise ValueError(f"answer shapes need at least two kinds among the training turns, got {set(shapes)}")
        self.model.fit(texts, shapes)
        return self

    def predict(self, questions: Sequence[str], positions: Sequence[int]) -> list[str]:
        if not questions:
            return []
        return [str(s) for s in self.model.predict([shape_text(q, p) for q, p in zip(questions, positions)])]
