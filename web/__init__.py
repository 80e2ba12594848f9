"""The web shell's helpers, one concern per module, so the router (``app.py``) and the pages
(``pages/``) stay thin; with them, the only code that imports streamlit.

Stored state as plain data, one module per view and no streamlit: ``views`` (what every view
starts from: a conversation read for a page, shortened text, a policy in words), ``chat_history``
(the chat's messages), ``inspector_tables`` (the inspector's tables), ``why_forgotten`` (an eviction
explained in words) and ``chart_series`` (the inspector's chart data, drawn by ``charts``).

The Streamlit pieces both pages share: ``loading`` (the store at once, the ChatService built in the
background), ``signin`` (who is signed in; the page guard), ``text`` (user and model text shown
literally), ``actions`` (pin, unpin, restore, feedback callbacks and their messages), ``sidebar``
(the conversation picker, import and export, the model caption), ``settings`` (a conversation's
memory settings form), ``notices`` (toasts), ``onboarding`` (the first-run explanation) and
``over_budget`` (what holds the memory over budget). For the chat:
``chat_view`` draws the messages, ``answering`` runs answers in worker threads (nothing the page
does can cut one off), ``markdown`` makes the model's Markdown safe to render.
"""
