"""Composing answers (assistant/answering/): grounding, caps, notes, which question an answer answers."""
