"""The models lagmem talks to: ``llm`` (the only LLM client, through the openai package),
``local_model`` (the embedded SmolLM2 server, started and stopped by lagmem), ``embeddings``
(sentence-transformers, offline) and the token counters (``tokens``: tiktoken and the model's own
tokenizer; ``model_tokens``: exact counts from a compatible server)."""
