"""What the Streamlit pages show, kept out of the pages so it can be tested without a browser.

``views`` turns stored state into plain data (tables, chart series, sentences for people) and
imports no streamlit; ``widgets`` holds the few Streamlit pieces both pages share (the cached
service, the conversation picker, safe text). The pages themselves (``app.py``, ``pages/``) stay
thin: they lay out what these modules compute.
"""
