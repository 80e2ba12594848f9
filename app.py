"""lagmem's web app: `streamlit run app.py`. The router: it draws the page list, builds the running
parts once per process (``web.loading``), lets the sidebar pick the conversation and hands the page
what it works on (``web.shell``), then runs the page: the chat (``pages/chat_page.py``) or the memory
inspector (``pages/inspector_page.py``).
"""

from __future__ import annotations

import streamlit as st

from assistant import runtime
from assistant.errors import ConfigError
from web.loading import log_through_streamlit
from web.loading import store as open_store
from web.shell import Shell, hand_over
from web.sidebar import conversation_sidebar, model_panel
from web.signin import require_sign_in
from web.text import show_plain

log_through_streamlit()
require_sign_in()  # a visitor who is not signed in sees only the sign-in button
# The page list is drawn here, first: Streamlit's own list (from the pages/ directory) would show
# "app" until the script had run, so it is off (.streamlit/config.toml) and the navigation hidden.
# A page file's name must differ from its url_path: Streamlit first treats pages/ as an old-style
# page folder, and a page named like a file there would run that file alone, without this router.
PAGES = [
    st.Page("pages/chat_page.py", title="Chat", icon=":material/forum:", default=True, url_path="chat"),
    st.Page("pages/inspector_page.py", title="Memory inspector", icon=":material/insights:", url_path="inspector"),
]
page = st.navigation(PAGES, position="hidden")
with st.sidebar:
    for p in PAGES:
        st.page_link(p)
try:
    store = open_store()
    db = str(runtime.get_store().engine.url)  # conversation ids are per database
except ConfigError as exc:  # a bad setting: say which, instead of a traceback
    show_plain(exc.message, kind="error", icon=":material/settings:")  # it may quote a URL with credentials
    st.stop()
hand_over(Shell(store, conversation_sidebar(store), db))
page.run()
model_panel()
