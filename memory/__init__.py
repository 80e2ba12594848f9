"""The pure core of lagmem: a token-budgeted memory of dialogue turns.

Nothing here imports streamlit, sqlalchemy, openai or the network; ``storage`` and ``assistant``
wrap it. The memory contract, tested by property tests (tests/memory/test_contract.py):

1. After every enforcement, active tokens <= budget, unless pinned + protected turns alone exceed
   it; that state is reported (``Snapshot.forced_over_budget``), never hidden.
2. A protected turn (age < lag, age counted from arrival or restore) or a pinned turn is never
   evicted.
3. Eviction is deterministic for a given state; ties go to the older turn first.
4. Every eviction yields exactly one ``EvictionRecord`` (storage writes it in the same transaction
   as the state change).
5. Eviction never deletes a turn: it only leaves the model's context; ``restore`` brings it back,
   protected again.
6. Citations name only turns that were offered; others are dropped and counted, never recorded.
7. The same saved conversation replayed twice gives identical states and records.

Importance is *measured*: a policy computes it from the raw citation log at the moment a decision
is made. No running score is stored anywhere.
"""
