"""BM25 words and scores, the hybrid ranker's order and its threshold (real MiniLM where the claim
is about embeddings), and the retrieval step citing with the ranker alone."""

from __future__ import annotations

import numpy as np
import pytest

from assistant.retrieval import hybrid, rank_features
from assistant.retrieval.lexical import bm25_scores, words
from assistant.retrieval.step import Candidate, RetrievalConfig, retrieve


@pytest.fixture(scope="module")
def real():
    from assistant.models.embeddings import get_embedder

    return get_embedder()


def cands(texts, emb):
    vecs = emb.encode(texts)
    return [Candidate(i + 1, "user", t, v) for i, (t, v) in enumerate(zip(texts, vecs))]


def test_words_fold_inflections_and_drop_stop_words():
    assert words("I was painting; she paints. They painted the paintings!") == ["paint"] * 4
    assert words("What did you do?") == []
    assert words("Melanie's games") == ["melanie", "game"]


def test_bm25_ranks_the_rare_matching_word_first_and_handles_empty_input():
    docs = [words(t) for t in ("lisbon lisbon weather", "weather again", "kyoto flight", "")]
    scores = bm25_scores(words("flight to kyoto"), docs)
    assert int(np.argmax(scores)) == 2 and scores[1] == 0 and scores[3] == 0
    assert bm25_scores(words("kyoto"), []).shape == (0,)
    assert not bm25_scores(words("kyoto"), [[], []]).any()
    assert not bm25_scores([], docs).any()


FACTS = [
    "Hi there! How are you today?",
    "I live in Lisbon, near the river.",
    "The weather has been lovely this week.",
    "I had pasta for lunch, nothing special.",
    "My sister Ingrid plays the cello.",
    "Traffic was awful this morning.",
]


def test_hybrid_ranks_the_fact_first_and_cites_it_with_a_confidence(real):
    cs = cands(FACTS, real)
    msg = "Which city do I live in?"
    res = retrieve(None, msg, real.encode(msg)[0], cs, config=RetrievalConfig(ask_model=False))
    assert res.ranked[0] == 2
    assert res.cited_ids[:1] == (2,) and 0 < res.cited[0].weight <= 1
    assert res.source == "hybrid" and res.parsed_as == "ranker"


def test_threshold_cites_nothing_for_an_unrelated_question(real):
    cs = cands(FACTS, real)
    msg = "What is the boiling point of mercury in kelvin?"
    res = retrieve(None, msg, real.encode(msg)[0], cs, config=RetrievalConfig(ask_model=False))
    assert res.cited == () and len(res.ranked) == len(cs)


def test_lexical_match_beats_embedding_only_on_a_name(real):
    texts = [
        "We adopted a dog last spring.",
        "Oscar is the name of my goldfish.",
        "Pets are a lot of work.",
        "I like animals in general.",
    ]
    cs = cands(texts, real)
    msg = "Who is Oscar?"
    vec = real.encode(msg)[0]
    ranking = hybrid.rank(msg, np.array([c.vector @ vec for c in cs]), texts)
    assert hybrid.order(ranking.score, [1, 2, 3, 4])[0] == 1  # index of turn 2
    assert ranking.confidence[1] == ranking.confidence.max()


def test_confidence_is_a_probability_and_order_is_deterministic():
    cos = np.array([0.2, 0.2, 0.9, 0.1])
    bm = np.array([0.0, 0.0, 3.0, 0.0])
    texts = ["Nice.", "Sure thing, see you then.", "My sister Ingrid plays the cello in Oslo.", "Ok!"]
    s = hybrid.hybrid_score(rank_features.features("Who plays the cello?", cos, bm, texts))
    p = hybrid.calibrate(s, bm, cos)
    assert ((0 <= p) & (p <= 1)).all() and int(np.argmax(s)) == 2 and int(np.argmax(p)) == 2
    assert hybrid.order(np.array([1.0, 1.0, 0.5]), [7, 3, 9]) == [1, 0, 2]  # tie: older turn first
    assert hybrid.calibrate(np.zeros(0), np.zeros(0), np.zeros(0)).shape == (0,)
    assert hybrid.hybrid_score(np.zeros((0, len(rank_features.NAMES)))).shape == (0,)


def test_weights_must_match_the_features():
    from dataclasses import replace

    with pytest.raises(ValueError, match="features"):
        hybrid.hybrid_score(np.zeros((2, len(rank_features.NAMES))), replace(hybrid.DEFAULT_PARAMS, weights=(1.0, 2.0)))


def test_embeddings_ranker_cites_its_top_k_without_a_model(real):
    cs = cands(FACTS, real)
    msg = "Which city do I live in?"
    res = retrieve(
        None, msg, real.encode(msg)[0], cs, config=RetrievalConfig(ranker="embeddings", ask_model=False, k=3)
    )
    assert len(res.cited) <= 3 and set(res.cited_ids) <= set(res.offered)
    assert res.source == "embeddings"


def test_alone_the_ranker_does_not_cite_a_greeting_in_a_tiny_memory(real):
    cs = cands(["Hello."], real)
    msg = "Hi there! How are you today?"
    res = retrieve(None, msg, real.encode(msg)[0], cs, config=RetrievalConfig(ask_model=False))
    assert res.cited == () and res.ranked == (1,)


def test_bm25_query_leaves_out_the_transcripts_speaker_names():
    texts = ["Evan: I drive a Prius.", "Sam: Evan, nice car!"]
    assert hybrid.query_terms("What car does Evan drive?", texts) == ("car", "drive")
    assert hybrid.query_terms("Evan?", texts) == ("evan",)  # names only: kept
    assert hybrid.query_terms("What car does Evan drive?", ["I drive a Prius."]) == ("car", "evan", "drive")
