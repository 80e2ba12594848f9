"""The retrieval step: which stored turns an exchange needs.

``step`` runs it (shortlist the in-memory turns, let the ranker or the LLM cite, validate the cites,
find misses among evicted turns); ``hybrid`` is the learnt ranker over ``rank_features`` (cosine,
BM25 from ``lexical``, neighbours, turn features); ``cite_prompt`` builds the LLM's citation prompt
and parses its answer."""
