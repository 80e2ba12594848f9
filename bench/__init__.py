"""Everything that measures lagmem; the product (``assistant/``) never imports it.

Eviction quality, on the pure core:

* ``locomo``    LoCoMo's JSON format: turns, repaired evidence ids, question placement.
* ``protocol``  runs a policy through the protocol over a ``MemoryLayer``; one result per question.
* ``oracle``    the exact offline optimum (an integer program, scipy's ``milp``) and the policy
                that replays it.
* ``synthetic`` a generator of sharp, delayed reuse amid briefly cited chatter.
* ``report``    metrics, tables and plots from the results.

Speed and load, on the product:

* ``speed``        per-step cost of the layer, pure and persisted to SQLite, as a conversation grows.
* ``retrieval``    the retrieval step's own cost (LLM excluded) and the embedding model per turn.
* ``model_speed``  the embedded model: server start, time to first token, tokens/s.
* ``loadtest``     concurrent writers against one database, then a check that nothing was lost;
                   with ``fakes`` (a stdlib fake of the API, a hash embedder) so only our own
                   work is loaded.

The terminal front ends are ``lagmem bench ...`` (``cli/bench.py``) and ``lagmem loadtest`` (``cli/loadtest.py``).
"""
