"""The web shell's helpers, one concern per module, so the pages (``app.py``, ``pages/``) stay thin.

``views`` turns stored state into plain data (tables, chart series, sentences for people) and
imports no streamlit. The Streamlit pieces both pages share: ``loading`` (the store at once, the
ChatService built in the background), ``signin`` (who is signed in; the page guard), ``text`` (user
and model text shown literally), ``actions`` (pin, unpin, restore, feedback callbacks and their
messages), ``sidebar`` (the conversation picker, import and export, the model caption) and
``settings`` (a conversation's memory settings form).
"""
