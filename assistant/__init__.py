"""The product: wires the pure memory core, the database and the model together.

``config`` reads and validates the settings; ``runtime`` builds the running parts once; ``service``
runs one exchange (store the user's turn, retrieve, answer, record, evict); ``store`` is the only
door to ``storage/``; ``replay``, ``importer`` and ``whatif`` run saved conversations through the
memory layer; ``need`` loads the shipped need estimator. The wings: ``models/`` (the LLM client, the
embedded model, embeddings, token counters), ``retrieval/`` (the retrieval step), ``answering/``
(composing the answer from the cited turns) and ``testing/`` (the users' saved-conversation test
library and its pytest plugin).
"""
