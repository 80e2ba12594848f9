"""Benchmarks of the memory core: computation only (no I/O beyond reading a JSON file you name).

* ``locomo``    LoCoMo's JSON format: turns, repaired evidence ids, question placement.
* ``protocol``  runs a policy through the protocol over a ``MemoryLayer``; one result per question.
* ``oracle``    the exact offline optimum (an integer program, scipy's ``milp``) and the policy
                that replays it.
* ``synthetic`` a generator of sharp, delayed reuse amid briefly cited chatter.
* ``report``    metrics and tables from per-question results.

The terminal front end (progress bar, plot, JSON) is ``cli/bench.py``.
"""
