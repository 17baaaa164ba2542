"""The one way texts become a dense index: cached embeddings, one cache file per chunk, same vectors."""

import numpy as np
import pytest

from models.dual_encoder import DualEncoder
from retrieval.ctbls.cell_text import cells_by_table
from retrieval.search.cached_index import cached_index

TEXTS = ["the nile is long", "the amazon is wide", "rob davison scored", "kishore kumar sang", "faraar, 1975"]


@pytest.fixture(scope="module")
def encoder(tiny_backbone):
    return DualEncoder.from_backbone(tiny_backbone)


def test_chunks_are_cached_apart_and_found_again(encoder, tmp_path):
    ids = list(range(len(TEXTS)))
    index = cached_index(encoder, TEXTS, ids, tmp_path, chunks=[2, 0, 3])
    assert len(list(tmp_path.glob("docs-*.npy"))) == 2  # one file per non-empty chunk
    again = cached_index(encoder, TEXTS[2:], ids[2:], tmp_path)  # the second chunk alone: read from the cache
    assert len(list(tmp_path.glob("docs-*.npy"))) == 2
    assert index.encoder_id == encoder.identity and len(index) == 5
    q = encoder.encode_queries(["who scored"])
    uncached = cached_index(encoder, TEXTS, ids, None, chunks=[2, 3])
    assert index.search(q, 5) == uncached.search(q, 5)
    assert [i for i, _ in again.search(q, 3)[0]] == [i for i, _ in index.search(q, 3, subset=ids[2:])[0]]
    np.testing.assert_array_equal(index.index.reconstruct_n(0, 5), uncached.index.reconstruct_n(0, 5))


def test_chunks_must_cover_the_texts(encoder):
    with pytest.raises(ValueError, match="add up to 4"):
        cached_index(encoder, TEXTS, list(range(5)), None, chunks=[2, 2])


def test_cells_are_grouped_by_table_in_order():
    ids = [("a", 0, 0), ("b", 0, 0), ("a", 1, 0), ("b", 0, 1)]
    assert cells_by_table(ids) == {"a": [("a", 0, 0), ("a", 1, 0)], "b": [("b", 0, 0), ("b", 0, 1)]}
