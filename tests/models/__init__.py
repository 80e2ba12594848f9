"""The models (assistant/models/): the LLM client over a real local HTTP fake, the embedded model, embeddings, token counters."""
