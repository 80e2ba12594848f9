"""The models lagmem talks to: ``llm`` (the only LLM client, through the openai package), one
``profile`` of what the answering model can do (``ModelProfile``, read by every caller instead of a
backend name), declared per backend in ``embedded`` (the SmolLM2 model lagmem runs itself, with
``local_model``, its server), ``openai_api`` and ``compatible``, mapped from the configuration in
``backends``; ``embeddings`` (sentence-transformers, offline) and the token counters (``tokens``:
tiktoken; ``model_tokens``: a compatible server's own tokenizer; the embedded model's in
``embedded``)."""
