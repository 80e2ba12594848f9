"""The saved-conversation format: every bad file is refused with its line number and a reason."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory import transcript as T

GOOD = """{"lagmem": 1, "title": "trip planning", "budget": 600, "lag": 4, "policy": "measured"}
{"role": "user", "content": "I'm flying to Lisbon on May 3rd."}
{"role": "assistant", "content": "Noted: Lisbon, May 3rd.", "cites": [1]}
{"event": "pin", "turn": 1}
{"event": "feedback", "turn": 2, "value": -1}
{"event": "unpin", "turn": 1}
{"event": "restore", "turn": 1}
"""


def test_the_issue_example_parses():
    t = T.parse(GOOD)
    assert t.header["budget"] == 600
    assert [(x.number, x.role) for x in t.turns] == [(1, "user"), (2, "assistant")]
    assert t.turns[1].cites == ((1, 1.0),)
    assert [e.event for e in t.items if isinstance(e, T.EventLine)] == ["pin", "feedback", "unpin", "restore"]


def test_the_header_is_optional_and_blank_lines_are_ignored():
    t = T.parse('\n{"role": "user", "content": "hi"}\r\n\n')
    assert t.header == {} and len(t.turns) == 1


def test_write_parse_write_is_stable():
    once = T.write(T.parse(GOOD))
    assert T.write(T.parse(once)) == once


def test_unicode_line_separators_inside_content_survive():
    text = json.dumps({"role": "user", "content": "a\u2028b\u0085c"}, ensure_ascii=False)
    t = T.parse(text)
    assert t.turns[0].content == "a\u2028b\u0085c"
    assert T.parse(T.write(t)).turns[0].content == "a\u2028b\u0085c"


@pytest.mark.parametrize(
    "lines, line, reason",
    [
        (['{"role": "user", "content": "a"}', "{not json"], 2, "not valid JSON"),
        (['["a list"]'], 1, "JSON object"),
        (['{"role": "robot", "content": "a"}'], 1, "role must be one of"),
        (['{"role": "user", "content": 5}'], 1, "needs 'content'"),
        (['{"role": "user", "content": "a", "cites": [1]}'], 1, "not an earlier turn"),
        (
            ['{"role": "user", "content": "a"}', '{"role": "user", "content": "b", "cites": ["1"]}'],
            2,
            "must name a turn",
        ),
        (['{"event": "pin", "turn": 1}'], 1, "only 0 turns exist"),
        (['{"role": "user", "content": "a"}', '{"event": "explode", "turn": 1}'], 2, "unknown event"),
        (['{"role": "user", "content": "a"}', '{"event": "feedback", "turn": 1, "value": 7}'], 2, "between -1 and 1"),
        (['{"role": "user", "content": "a"}', '{"lagmem": 1}'], 2, "first line"),
        (['{"lagmem": 2}'], 1, "unsupported format version"),
        (['{"lagmem": 1, "budget": -5}'], 1, "budget must be a positive"),
        (['{"lagmem": 1, "colour": "red"}'], 1, "unknown header key"),
        (['{"role": "user", "content": "a", "extra": 1}'], 1, "unexpected key"),
        (['{"hello": "world"}'], 1, "not a turn"),
        (['{"role": "user", "content": "\\ud800"}'], 1, "lone surrogate"),
    ],
)
def test_malformed_lines_are_refused_with_line_and_reason(lines, line, reason):
    with pytest.raises(T.TranscriptError) as info:
        T.parse("\n".join(lines))
    assert info.value.line == line
    assert reason in info.value.reason


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(max_size=40), st.from_regex(r'\{"(role|event|lagmem|turn|cites)": .{0,20}\}', fullmatch=True)
        ),
        max_size=8,
    )
)
def test_fuzzed_files_parse_or_fail_with_a_line_number(lines):
    text = "\n".join(lines)
    try:
        t = T.parse(text)
    except T.TranscriptError as exc:
        assert 1 <= exc.line <= max(1, len(text.split("\n")))
        assert exc.reason
    else:
        assert T.write(T.parse(T.write(t))) == T.write(t)
