"""retrieval.memory.content_ranking: the fusion's speaker prior and the cuts, on hand-made lists and through a
memory built on a tiny encoder."""

from __future__ import annotations

import json

import pytest

from retrieval.memory.content_ranking import CUTS, PRIOR_WEIGHTS, cut_content, fuse_content
from retrieval.memory.temporal_memory import TemporalMemory
from retrieval.search.fusion import spread_cut

FUSED = [("a", 4.0), ("b", 3.0), ("c", 2.5), ("d", 1.0), ("e", 0.0)]


def test_spread_cut_can_reach_down_to_a_longer_lists_last():
    head = FUSED[:3]
    assert spread_cut(head, 0.5) == head[:1]  # its own spread: 4 - 2.5, floor 3.25
    assert spread_cut(head, 0.7) == head[:2]  # floor 2.95
    assert spread_cut(head, 0.5, last=0.0) == head  # the spread of all five: 4, floor 2.0
    assert spread_cut(head, 0.3, last=0.0) == head[:2]  # floor 2.8


def test_the_pool_cut_is_the_default_and_does_not_move_with_k():
    assert CUTS[0] == "pool"
    for k in (2, 3, 4):  # floor 4 - 0.3 * 4 = 2.8 whatever k is
        assert cut_content(FUSED, 0.3, "pool", "scores", k) == FUSED[:2]
    # the earlier cut measures the spread of the k kept: the same margin keeps a share of those
    assert cut_content(FUSED, 0.3, "spread", "scores", 3) == FUSED[:1]  # floor 4 - 0.3 * 1.5 = 3.55
    assert cut_content(FUSED, 0.3, "spread", "scores", 5) == FUSED[:2]
    assert cut_content(FUSED, None, "pool", "scores", 3) == FUSED[:3] == cut_content(FUSED, 1.0, "pool", "scores", 3)
    assert cut_content(FUSED, 0.3, "pool", "scores") == FUSED[:2] and cut_content([], 0.3, "pool", "scores", 3) == []
    assert cut_content(FUSED, 1.5, "top", "scores", 4) == FUSED[:3]  # within 1.5 of one list's top (1)
    with pytest.raises(ValueError, match="cut"):
        cut_content(FUSED, 0.3, "gap", "scores")


def test_the_speaker_prior_is_one_and_a_half_tops_for_scores():
    assert PRIOR_WEIGHTS == {"scores": 1.5, "rrf": 0.3}
    dense, sparse = [(1, 0.9), (2, 0.6), (3, 0.1)], [(1, 5.0), (3, 2.0), (2, 1.0)]
    plain = dict(fuse_content([dense, sparse], "scores", None))
    boosted = dict(fuse_content([dense, sparse], "scores", None, prefer=[2]))
    assert boosted[2] == pytest.approx(plain[2] + 1.5) and boosted[1] == plain[1]
    assert dict(fuse_content([dense, sparse], "scores", None, [2], prior=1.0))[2] == pytest.approx(plain[2] + 1.0)
    # 2 is second in one list and last in the other (0.625 in all): 1.5 lifts it past a row both put first (2),
    # the earlier 1.0 does not
    assert [i for i, _ in fuse_content([dense, sparse], "scores", 2, prefer=[2])] == [2, 1]
    assert [i for i, _ in fuse_content([dense, sparse], "scores", 2, prefer=[2], prior=1.0)] == [1, 2]


LOG = [{"speaker": s, "text": t, "timestamp": f"2023-05-12T08:{m:02d}:00+00:00"} for m, (s, t) in enumerate([
    ("Ann", "I started pottery classes this week."), ("Bob", "Pottery sounds relaxing, what did you make?"),
    ("Ann", "A bowl, but it cracked in the kiln."), ("Bob", "My dog Rex loves the park."),
    ("Ann", "We hiked up the hill on Sunday."), ("Bob", "The weather was great for hiking.")])]


def test_a_memory_cuts_the_whole_candidate_list_and_keeps_the_earlier_cut_by_flags(tmp_path, tiny_backbone):
    from models.dual_encoder import DualEncoder

    tiny_encoder = DualEncoder.from_backbone(tiny_backbone)
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in LOG) + "\n")
    memory = TemporalMemory.from_file(path, encoder=tiny_encoder, fmt="jsonl")
    ids = list(range(6))
    assert (memory.cut, memory.prior) == ("pool", None)
    rankings = memory.content_rankings("pottery kiln", 50, ids)
    fused = fuse_content(rankings, "scores", None, prefer=[0, 2, 4])
    for m in (0.0, 0.3, 0.6):
        kept = memory._rank("pottery kiln", 3, ids, prefer=[0, 2, 4], margin=m)
        assert kept == cut_content(fused, m, "pool", "scores", 3)
        floor = fused[0][1] - m * (fused[0][1] - fused[-1][1]) - 1e-9  # of all six candidates, not of the three
        assert kept == [(i, s) for i, s in fused[:3] if s >= floor]
    earlier = TemporalMemory(memory.table, cut="spread", prior=1.0)
    head = fuse_content(rankings, "scores", 3, prefer=[0, 2, 4], prior=1.0)
    assert earlier._rank("pottery kiln", 3, ids, prefer=[0, 2, 4], margin=0.6) == spread_cut(head, 0.6)
