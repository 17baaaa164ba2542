"""Documents about known topics, generated from templates, to plant into real conversation logs at known rates.

Five topics that the LoCoMo / Zyphra conversations do not discuss (electric cars, cryptocurrency, the
metaverse, home solar power, a local election). A sentence is a conversational *frame* filled with one of
the topic's subjects or claims, so the same topic is said in many ways; frames are split in two disjoint
halves, one to calibrate thresholds on and one to evaluate on. Near misses share the topic's surface words
without being about it ("my car broke down", "the solar eclipse"): they count as not relevant.

Rate patterns say how a topic's share of the utterances changes over a log's time span (position t in
[0, 1]): rising, falling, a spike, flat, and absent-then-appearing (a step). None of this is tuned to a method.
:func:`plant_topics` adds the topics' utterances to a log's sessions at those rates and records the truth.

``python -m eval.trends`` counts them; :func:`planted_turn_rows` gives the per-turn topic model
(:mod:`retrieval.trends.topic_turns`) the calibration log's planted turns to learn from (``train.topic_turns``), so
it sees a topic said in single turns among others as well as the user trials' chats' threads.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import numpy as np

from retrieval.config import option
from retrieval.data.conversation_log import Utterance, load_log
from retrieval.data.paths import data_dir_option, default_cache_dir
from retrieval.memory.conversation_table import ConversationTable, utterance_frame
from retrieval.search.cached_index import cached_index
from retrieval.trends.topic_turns import turn_features

FRAMES = [
    "I've been reading a lot about {s} lately.",
    "Did you see the news about {s}? Apparently {c}.",
    "My cousin won't stop talking about {s}.",
    "Honestly, {c}.",
    "I keep thinking about {s}. What's your take?",
    "We had a long debate about {s} at work today.",
    "Someone told me {c}, can you believe it?",
    "Have you ever looked into {s}?",
    "A friend of mine just got into {s} and loves it.",
    "I'm not sure about {s}; {c}.",
    "Random thought, but {c}.",
    "By the way, any opinion on {s}? I heard {c}.",
    "There was a podcast about {s} on my drive this morning.",
    "Funny, my dad asked me about {s} yesterday.",
    "I'm starting to wonder if {c}.",
    "Everyone at the gym was going on about {s}.",
]
CALIBRATION_FRAMES = FRAMES[0::2]
TEST_FRAMES = FRAMES[1::2]

TOPICS: dict[str, dict[str, list[str] | str]] = {
    "electric_cars": {
        "query": "electric cars",
        "subjects": ["electric cars", "EVs", "my neighbour's new Tesla", "electric vehicles",
                     "charging stations for electric cars", "a plug-in hybrid", "switching to an electric car"],
        "claims": ["the battery range of electric cars keeps getting better",
                   "charging an EV at home costs less than filling up with gas",
                   "there still aren't enough fast chargers for electric cars on the highway",
                   "electric car prices dropped a lot this year", "Tesla cut the price of the Model 3 again"],
        "near_misses": ["My car broke down on the highway again.", "The electricity bill was huge this month.",
                        "We took the bus downtown because parking is impossible."],
    },
    "crypto": {
        "query": "cryptocurrency",
        "subjects": ["bitcoin", "cryptocurrency", "crypto trading", "Ethereum", "a crypto wallet", "NFTs",
                     "buying crypto"],
        "claims": ["bitcoin lost a third of its value in a week", "crypto exchanges keep collapsing",
                   "everyone at the office is buying Ethereum now", "a crypto wallet got drained by hackers",
                   "NFT prices have crashed"],
        "near_misses": ["I found an old coin collection in my grandpa's attic.",
                        "The bank changed the password rules for online banking.",
                        "I've been saving money for a new bike."],
    },
    "metaverse": {
        "query": "the metaverse",
        "subjects": ["the metaverse", "virtual reality headsets", "a VR headset", "virtual worlds",
                     "Meta's metaverse plans", "meeting people in virtual reality"],
        "claims": ["people are buying land in virtual worlds", "VR headsets are still too heavy to wear for long",
                   "companies hold meetings in the metaverse now", "the metaverse is losing billions every quarter",
                   "kids spend hours hanging out in virtual worlds"],
        "near_misses": ["I read a great fantasy novel about another world.",
                        "Our team meeting was online again today.", "My glasses need a new prescription."],
    },
    "solar": {
        "query": "solar panels",
        "subjects": ["solar panels", "rooftop solar", "a home battery for solar power", "solar energy",
                     "putting panels on our roof", "community solar projects"],
        "claims": ["our solar panels covered the whole electricity bill last month",
                   "rooftop solar pays for itself in about eight years",
                   "the government raised the subsidy for solar panels",
                   "solar panels work even on cloudy days", "the installer mounted twenty panels on the roof"],
        "near_misses": ["We watched the solar eclipse from the park.", "The sun was so hot at the beach today.",
                        "The roof started leaking after the storm."],
    },
    "election": {
        "query": "the local election",
        "subjects": ["the mayoral election", "the city council vote", "the local election", "the candidates' debate",
                     "voting in the local election", "the ballot measure on the school budget"],
        "claims": ["the mayor is running for a third term", "turnout at the council vote was really low",
                   "the challenger is ahead in the polls", "the debate between the candidates got heated",
                   "early voting for the city election opens on Monday"],
        "near_misses": ["We voted on where to go for dinner.", "The kids elected a new team captain.",
                        "The town is repaving the main road."],
    },
}

PLANTED_LOG = "26"  # the log eval.trends calibrates on (never one it reports on), and the per-turn model learns from
PATTERNS = ("rising", "falling", "spike", "flat", "step")


def pattern_rate(pattern: str, t: float, peak: float, centre: float = 0.5) -> float:
    """Share of utterances about the topic at time position ``t`` in [0, 1], for a pattern peaking at ``peak``."""
    if pattern == "rising":
        return peak * t
    if pattern == "falling":
        return peak * (1 - t)
    if pattern == "spike":
        return peak if abs(t - centre) <= 0.12 else peak / 10
    if pattern == "flat":
        return peak / 2
    if pattern == "step":
        return 0.0 if t < centre else peak
    raise ValueError(f"unknown pattern {pattern!r}; choose from {PATTERNS}")


def topic_sentence(topic: str, frames: list[str], rng: random.Random) -> str:
    """One sentence about ``topic``: a random frame filled with a random subject and claim."""
    spec = TOPICS[topic]
    text = rng.choice(frames).format(s=rng.choice(spec["subjects"]), c=rng.choice(spec["claims"]))
    return text[0].upper() + text[1:]


def plant_topics(utterances: Sequence[Utterance], frames: list[str], rng: random.Random, peak: float = 0.08,
                 near_miss_rate: float = 0.01) -> tuple[list[Utterance], dict[int, str], dict[str, dict]]:
    """Add topic utterances (and near misses) to a log's sessions at pattern rates.

    Returns the utterances (real + planted), truth (response_idx -> topic, or "near_miss:<topic>") and each
    topic's pattern. A session at time position t in [0, 1] of the log gets Poisson(rate(t) * its size)
    utterances of a topic, at uniform random times inside the session.
    """
    nrng = np.random.default_rng(rng.randrange(2**32))
    by_session: dict[int, list[Utterance]] = {}
    for u in utterances:
        by_session.setdefault(u.session, []).append(u)
    t0, t1 = min(u.timestamp for u in utterances), max(u.timestamp for u in utterances)
    patterns = dict(zip(TOPICS, rng.sample(PATTERNS, len(PATTERNS))))
    centres = {topic: round(rng.uniform(0.3, 0.7), 3) for topic in patterns}
    specs = {topic: {"pattern": p, "centre": centres[topic], "peak": peak} for topic, p in patterns.items()}
    out, truth = list(utterances), {}
    next_id = max(u.response_idx for u in utterances) + 1
    for session, turns in sorted(by_session.items()):
        start, end = turns[0].timestamp, turns[-1].timestamp
        t = (start - t0) / (t1 - t0) if t1 > t0 else 0.0
        speakers = sorted({u.speaker for u in turns})
        for topic, p in patterns.items():
            n_topic = nrng.poisson(pattern_rate(p, t, peak, centres[topic]) * len(turns))
            n_miss = nrng.poisson(near_miss_rate * len(turns))
            texts = [(topic, topic_sentence(topic, frames, rng)) for _ in range(n_topic)]
            texts += [(f"near_miss:{topic}", rng.choice(TOPICS[topic]["near_misses"])) for _ in range(n_miss)]
            for label, text in texts:
                offset = rng.uniform(0, max((end - start).total_seconds(), 60.0))
                out.append(Utterance(next_id, session, rng.choice(speakers), start + timedelta(seconds=offset), text,
                                     f"planted:{label}"))
                truth[next_id] = label
                next_id += 1
    return out, truth, specs


def build_table(utterances: Sequence[Utterance], encoder, cache_dir: str | None) -> ConversationTable:
    """A conversation table whose real and planted texts are embedded (and cached) separately, so the
    real log's embeddings are computed once however often it is planted into."""
    real = [u for u in utterances if not u.turn_id.startswith("planted:")]
    planted = [u for u in utterances if u.turn_id.startswith("planted:")]
    index = cached_index(encoder, [u.text for u in real + planted], [u.response_idx for u in real + planted],
                         cache_dir, chunks=[len(real), len(planted)])
    return ConversationTable(utterance_frame(utterances), index, encoder)


def planted_turn_rows(zyphra_folder: str | Path, log: str, encoder, cache_dir: str | None, seed: int = 0,
                      peak: float = 0.08) -> tuple[np.ndarray, np.ndarray]:
    """Training rows for the per-turn topic model (:mod:`retrieval.trends.topic_turns`) from a planted log: Zyphra
    log ``log`` of ``zyphra_folder`` (its ``ConversationData/``) planted with :data:`CALIBRATION_FRAMES` as
    ``eval.trends`` plants its calibration log (the same seed, the same table), every turn's features against each
    topic's query and whether it is one of that topic's planted turns (near misses and real turns are not)."""
    path = Path(zyphra_folder) / "ConversationData" / f"{log}.json"
    utterances, truth, _ = plant_topics(load_log(path), CALIBRATION_FRAMES, random.Random(f"{seed}:{log}"), peak)
    table = build_table(utterances, encoder, cache_dir)
    x = [turn_features(table, str(spec["query"])) for spec in TOPICS.values()]
    y = [np.array([float(truth.get(i) == topic) for i in table.frame.index]) for topic in TOPICS]
    return np.concatenate(x), np.concatenate(y)


@dataclass
class TurnSources:
    """Where the per-turn topic model's labelled turns come from (the settings ``train.topic_turns`` and
    ``eval.trend_turn_folds`` share): chats a person marked, and a planted log."""

    chats: list[str] = option(help="chat folders, each with chat.jsonl and questions.jsonl holding trend questions "
                              "(counts keys)")
    encoder: str | None = option(None, "dual encoder (default: packaged MiniLM); a model is for the encoder it was "
                                 "trained with")
    planted_log: str = option(PLANTED_LOG, "a Zyphra log planted with topics as eval.trends plants its calibration "
        "log (its frames, its seed): its planted turns are learned from too, so the model knows a topic said in one "
        "turn among others as well as a chat's threads ('' for the chats alone)")
    data_dir: str = data_dir_option("zyphra_temporal/ (for --planted-log)")
    cache_dir: str = option(help="embedding cache of the planted log ('' for none)",
                            default_factory=lambda: default_cache_dir("trends"))

    def planted_rows(self, encoder) -> tuple[np.ndarray, np.ndarray] | None:
        """The planted log's rows (:func:`planted_turn_rows`), or None with ``--planted-log ''``."""
        if not self.planted_log:
            return None
        return planted_turn_rows(Path(self.data_dir) / "zyphra_temporal", self.planted_log, encoder,
                                 self.cache_dir or None)
