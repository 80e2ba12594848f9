"""The model's answers as Markdown a browser can show safely; the user's own text stays literal.

Why: models write Markdown (``**Products**``, code fences, tables), and showing it raw is unreadable.
But an answer is untrusted text (prompt injection reaches it): it must not run or load anything, nor
use Streamlit's own syntax (``$`` LaTeX, ``:red[...]``, ``:material/icon:``).

How: the answer is parsed by a CommonMark parser (markdown-it-py, CommonMark plus GFM tables and
strikethrough), and the Markdown given to ``st.markdown`` is rebuilt from an allow-list of its
tokens, never copied from the input. So the structure we show is the one a CommonMark reader sees
(a mismatched backtick run, a longer closing fence or an indented "fence" cannot hide an image from
us), and the work is linear in the answer's length (no backtracking pattern). What is kept:

* paragraphs, line breaks, headings, emphasis, strong, strikethrough, lists, block quotes,
  thematic breaks, tables, code spans and code blocks (a fence's language only if it is one word);
* links only to ``http``, ``https`` and ``mailto`` targets (shown as links, percent-encoded); any
  other target (``javascript:``, ``data:``, relative paths) leaves the link's text alone;
* images are never loaded: ``[image: alt text]`` is shown instead;
* raw HTML (blocks and inline tags) is shown as the text it is;
* every other token, and every piece of text, is shown literally: each character that could start
  Markdown, HTML, an entity, LaTeX or a directive is backslash-escaped (those that only count at
  the start of a line, there, and at the start of every line a text piece begins).

Checked in Streamlit's own renderer in a browser (tests/web/test_browser_markdown.py). Two things it
does on text whatever the escaping: a bare web address becomes a link (GFM autolinks, still only
http/https), and ``:material/name:`` an icon from its bundled font; neither loads anything.

An answer longer than ``MAX_MARKDOWN_CHARS`` is shown as literal text (no formatting): the parser
is linear, but its constant (a few microseconds a character on adversarial input, holding the
interpreter lock) would still stall every session of the server for a multi-megabyte turn.
"""

from __future__ import annotations

import re

from markdown_it import MarkdownIt
from markdown_it.token import Token

SAFE_SCHEMES = ("http://", "https://", "mailto:")
MAX_MARKDOWN_CHARS = 50_000

_PARSER = MarkdownIt("commonmark").enable(["table", "strikethrough"])
# every target is parsed as a link (the parser would leave a javascript: link as text with its
# brackets); which targets stay links is decided here, by _safe_href
_PARSER.validateLink = lambda url: True
# characters that start or delimit a construct wherever they stand (Markdown, GFM, HTML, entities,
# Streamlit's LaTeX and directives, and "!" which would make an image of a link we write after it);
# "(" matters only after "]"
_ANYWHERE = re.compile(r"([\\`*_\[\]<&$:~|!])")
# characters that start a block only at the start of a line: a heading, a quote, a list item, a
# setext underline or thematic break, an ordered list's "1." or "1)"
_LINE_START = re.compile(r"^([ \t]*)([#>+\-=]|\d{1,9}[.)])", re.M)
_URL_UNSAFE = re.compile(r"[^A-Za-z0-9\-._~:/?#\[\]@!&'*+,;=%]")  # percent-encoded in a link target
_INFO = re.compile(r"[A-Za-z0-9_+#.\-]{1,40}")
_BACKTICKS = re.compile(r"`+")
_INLINE_MARKS = {"em_open": "*", "em_close": "*", "strong_open": "**", "strong_close": "**", "s_open": "~~"}
_INLINE_MARKS["s_close"] = "~~"


def escape_text(text: str) -> str:
    """Text that renders literally in CommonMark and in Streamlit's Markdown, wherever it stands."""
    text = _ANYWHERE.sub(r"\\\1", text)
    return _LINE_START.sub(lambda m: m.group(1) + m.group(2)[:-1] + "\\" + m.group(2)[-1], text)


def literal_lines(text: str) -> list[str]:
    """Text shown literally, as lines of Markdown: each line ends in a hard break but the last."""
    lines = [escape_text(line.strip()) for line in text.splitlines() if line.strip()]
    return [line + "\\" for line in lines[:-1]] + lines[-1:]


def answer_markdown(text: str) -> str:
    """A model's answer as safe Markdown (see the module's docstring)."""
    if len(text) > MAX_MARKDOWN_CHARS:
        return "\n".join(literal_lines(text))
    tokens = _PARSER.parse(text)
    lines, _ = _blocks(tokens, 0, len(tokens), tight=False)
    return "\n".join(lines)


def _code_span(code: str, in_table: bool) -> str:
    if in_table:
        code = code.replace("|", "\\|")  # GFM splits cells at a pipe even inside code
    longest = max((len(m) for m in _BACKTICKS.findall(code)), default=0)
    fence = "`" * (longest + 1)
    if code.strip(" ") and (code[0] in " `" or code[-1] in " `"):
        code = f" {code} "  # one space each side is stripped by the reader
    return f"{fence}{code}{fence}"


def _safe_href(href: str) -> str | None:
    if not href.lower().startswith(SAFE_SCHEMES):
        return None
    return _URL_UNSAFE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group(0).encode()), href)


def _inline(children: list[Token], *, breaks: bool = True, in_table: bool = False) -> str:
    """One block's inline tokens, flat (links cannot nest, emphasis is just its marks)."""
    out: list[str] = []
    links: list[str | None] = []  # the safe target of each open link, or None (shown as text)
    for t in children:
        kind = t.type
        if kind in ("text", "text_special"):
            out.append(escape_text(t.content))
        elif kind == "html_inline":  # a tag may span lines: each line is a line of the block
            out.append(("\n" if breaks else " ").join(escape_text(line) for line in t.content.split("\n")))
        elif kind == "softbreak":
            out.append("\n" if breaks else " ")
        elif kind == "hardbreak":
            out.append("\\\n" if breaks else " ")
        elif kind == "code_inline":
            out.append(_code_span(t.content, in_table))
        elif kind in _INLINE_MARKS:
            out.append(_INLINE_MARKS[kind])
        elif kind == "link_open":
            href = _safe_href(str(t.attrs.get("href", "")))
            links.append(href)
            if href is not None:
                out.append("[")
        elif kind == "link_close":
            href = links.pop() if links else None
            if href is not None:
                out.append(f"]({href})")
        elif kind == "image":
            out.append(escape_text(f"[image: {t.content}]"))
        else:  # not on the allow-list: its text, literally
            out.append(escape_text(t.content))
    return "".join(out)


def _fence(code: str, info: str) -> list[str]:
    longest = max((len(m) for m in _BACKTICKS.findall(code)), default=0)
    fence = "`" * max(3, longest + 1)
    word = info.strip().split(" ")[0] if info.strip() else ""
    lang = word if _INFO.fullmatch(word) else ""
    body = code[:-1] if code.endswith("\n") else code
    return [fence + lang, *(body.split("\n") if body else []), fence]


def _close(tokens: list[Token], i: int) -> int:
    """Index of the token closing the one opened at ``i``."""
    depth = 0
    for j in range(i, len(tokens)):
        depth += tokens[j].nesting
        if depth == 0:
            return j
    return len(tokens) - 1


def _blocks(tokens: list[Token], start: int, end: int, *, tight: bool) -> tuple[list[str], int]:
    """The lines of the blocks in ``tokens[start:end]``; blank lines between them unless ``tight``."""
    lines: list[str] = []
    i = start
    while i < end:
        block, i = _block(tokens, i, tight)
        if block is None:
            continue
        if lines and not tight:
            lines.append("")
        lines.extend(block)
    return lines, i


def _block(tokens: list[Token], i: int, tight: bool) -> tuple[list[str] | None, int]:
    """One block starting at ``tokens[i]``: its lines and the index after it."""
    t = tokens[i]
    kind = t.type
    if kind == "paragraph_open":
        return _inline(tokens[i + 1].children or []).split("\n"), i + 3
    if kind == "heading_open":
        level = int(t.tag[1]) if t.tag[1:].isdigit() else 1
        text = _inline(tokens[i + 1].children or [], breaks=False)
        return [("#" * level + " " + text).rstrip()], i + 3
    if kind in ("fence", "code_block"):
        return _fence(t.content, t.info if kind == "fence" else ""), i + 1
    if kind == "hr":
        return ["***"], i + 1
    if kind == "html_block":
        return literal_lines(t.content) or None, i + 1
    if kind == "blockquote_open":
        j = _close(tokens, i)
        inner, _ = _blocks(tokens, i + 1, j, tight=False)
        return [f"> {line}" if line else ">" for line in inner] or [">"], j + 1
    if kind in ("bullet_list_open", "ordered_list_open"):
        return _list(tokens, i)
    if kind == "table_open":
        j = _close(tokens, i)
        return _table(tokens[i:j]), j + 1
    if kind == "inline":
        return _inline(t.children or []).split("\n"), i + 1
    if t.nesting == 1:  # an unknown container: its content, as blocks
        j = _close(tokens, i)
        inner, _ = _blocks(tokens, i + 1, j, tight=tight)
        return inner or None, j + 1
    if t.content:
        return literal_lines(t.content), i + 1
    return None, i + 1


def _list(tokens: list[Token], i: int) -> tuple[list[str], int]:
    t = tokens[i]
    end = _close(tokens, i)
    ordered = t.type == "ordered_list_open"
    number = int(t.attrs.get("start", 1)) if ordered else 0
    delim = (t.markup or ".")[-1] if ordered else (t.markup or "-")
    # a tight list hides its items' paragraphs (they are not separated by blank lines)
    tight = any(tok.type == "paragraph_open" and tok.hidden and tok.level == t.level + 2 for tok in tokens[i:end])
    lines: list[str] = []
    j = i + 1
    while j < end:
        if tokens[j].type != "list_item_open":
            j += 1
            continue
        close = _close(tokens, j)
        inner, _ = _blocks(tokens, j + 1, close, tight=tight)
        marker = f"{number}{delim}" if ordered else delim
        number += 1
        pad = " " * (len(marker) + 1)
        if lines and not tight:
            lines.append("")
        lines.append(f"{marker} {inner[0]}".rstrip() if inner else marker)
        lines.extend(f"{pad}{line}" if line else "" for line in inner[1:])
        j = close + 1
    return lines, end + 1


def _table(tokens: list[Token]) -> list[str]:
    rows: list[list[str]] = []
    aligns: list[str] = []
    for k, t in enumerate(tokens):
        if t.type == "tr_open":
            rows.append([])
        elif t.type in ("th_open", "td_open") and rows:
            cell = _inline(tokens[k + 1].children or [], breaks=False, in_table=True)
            rows[-1].append(cell.strip() or " ")
            if t.type == "th_open":
                style = str(t.attrs.get("style", ""))
                aligns.append(
                    {"text-align:left": ":--", "text-align:right": "--:", "text-align:center": ":-:"}.get(style, "---")
                )
    if not rows:
        return []
    width = len(rows[0])
    lines = ["| " + " | ".join(rows[0]) + " |", "| " + " | ".join(aligns[:width] or ["---"] * width) + " |"]
    for row in rows[1:]:
        row = (row + [" "] * width)[:width]
        lines.append("| " + " | ".join(row) + " |")
    return lines
