"""Hostile and failing input: malformed files, dying model servers, limits."""
