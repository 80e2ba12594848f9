"""The test suite, grouped by what it tests (``memory/``, ``storage/``, ``assistant/``, ``models/``,
``retrieval/``, ``answering/``, ``web/``, ``bench/``, ``hardening/``); shared fixtures in ``conftest.py``."""
