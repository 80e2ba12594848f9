"""The model's answers as Markdown a browser can show safely; the user's own text stays literal.

Why: models write Markdown (``**Products**``, code fences), and showing it raw is unreadable. But
an answer is untrusted text: it must not run or load anything, nor use Streamlit's own syntax. So
``answer_markdown`` keeps Markdown's formatting (emphasis, lists, headings, tables, code) and
neutralises the rest, outside code (where nothing is interpreted anyway):

* HTML: ``<`` and ``&`` are escaped, so a tag or an entity shows as the text it is (and
  ``st.markdown`` is never given ``unsafe_allow_html``);
* links: kept only for ``http``, ``https`` and ``mailto``; any other target (``javascript:``,
  ``data:``, relative paths) leaves the link's text alone; a reference definition (``[1]: url``)
  is shown as text, since its ``:`` is escaped;
* images: never loaded; shown as ``[image: alt text]``;
* Streamlit's extensions: ``$`` (LaTeX) and ``:`` (``:red[...]``, ``:material/icon:``) are escaped.
"""

from __future__ import annotations

import re

SAFE_SCHEMES = ("http://", "https://", "mailto:")

# fenced code blocks (to the closing fence, or to the end of a cut-off answer) and inline code
_CODE = re.compile(r"(^[ \t]*(`{3,}|~{3,})[^\n]*\n.*?(?:^[ \t]*\2[ \t]*$|\Z)|`+[^`\n]*`+)", re.M | re.S)
_IMAGE = re.compile(r"!\[([^\]\n]*)\]\(([^)\n]*)\)")
_LINK = re.compile(r"\[([^\]\n]*)\]\(\s*<?((?:[^()\s<>]|\([^()\s]*\))*)>?(?:\s+\"[^\"\n]*\")?\s*\)")
_SPECIAL = re.compile(r"([<&$:])")


def _escape(text: str) -> str:
    # "](" left over is a link the patterns above did not take (odd targets): break it
    return _SPECIAL.sub(r"\\\1", text).replace("](", "\\](")


def _prose(text: str) -> str:
    """One stretch of text outside code."""
    out, pos = [], 0
    for m in re.finditer(f"{_IMAGE.pattern}|{_LINK.pattern}", text):
        out.append(_escape(text[pos : m.start()]))
        if m.group(0).startswith("!"):
            out.append(_escape(f"[image: {m.group(1)}]").replace("[", "\\[").replace("]", "\\]"))
        else:
            label, target = m.group(3), m.group(4)
            if target.lower().startswith(SAFE_SCHEMES):
                out.append(f"[{_escape(label)}]({target.replace(')', '%29')})")
            else:
                out.append(_escape(label))
        pos = m.end()
    out.append(_escape(text[pos:]))
    return "".join(out)


def answer_markdown(text: str) -> str:
    """A model's answer as safe Markdown (see the module's docstring)."""
    out, pos = [], 0
    for m in _CODE.finditer(text):
        out.append(_prose(text[pos : m.start()]))
        out.append(m.group(0))
        pos = m.end()
    out.append(_prose(text[pos:]))
    return "".join(out)
