"""What the Streamlit pages show, kept out of the pages so it can be tested without a browser.

``views`` turns stored state into plain data (tables, chart series, sentences for people) and
imports no streamlit; ``widgets`` holds the few Streamlit pieces both pages share (the cached
service, the conversation picker, safe text). For the chat: ``chat_view`` draws the messages,
``answering`` runs answers in worker threads (nothing the page does can cut one off),
``markdown`` makes the model's Markdown safe to render; for both pages: ``notices`` (toasts),
``onboarding`` (the first-run explanation), ``over_budget`` (what holds the memory over budget).
The pages themselves (``app.py``, ``pages/``) stay thin: they lay out what these modules compute.
"""
