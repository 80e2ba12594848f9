"""Cheap deterministic stand-ins for the models, shared by the benchmarks and the tests.

``embedder.HashEmbedder`` replaces the embedding model where only plumbing is measured; ``llm.FakeLLM``
is a scripted client with the LLM client's interface (a queue of replies and a history);
``openai_http.FakeOpenAI`` is a real local HTTP server speaking the OpenAI API, scripted per test
(retries, timeouts, broken streams), for the client code path; ``loadtest_server`` is the load
test's fast deterministic model behind a real socket. A test that claims to check the real model,
the real embeddings or the real client uses those, not these.
"""
