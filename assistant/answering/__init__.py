"""Composing the answer from the cited turns: ``answer`` (grounded answers, the checks a model
answer must pass, the prompt for a configured model), ``notes`` (which cited turns the answer is
built from) and ``wording`` (the app's fixed sentences, in the user's language)."""
