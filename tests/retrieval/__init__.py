"""The retrieval step (assistant/retrieval/): shortlist, ranker features, cites."""
