"""A conversation's title stores the same on every database, or is refused before anything is
stored: a header's title that cannot be stored is an error naming its line; a title made from a
file's name is cut and cleaned the same way everywhere. Runs on SQLite, and on PostgreSQL (whose
200-character column enforces what SQLite does not) when LAGMEM_TEST_DATABASE_URL is set."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from cli.main import main
from memory import transcript as T
from storage.models import Conversation

TURN = '{"role": "user", "content": "hello"}\n'


def _conversations(engine) -> list[Conversation]:
    with Session(engine) as s:
        return list(s.scalars(select(Conversation)))


@pytest.mark.parametrize(
    "title, why",
    [
        ("x" * (T.TITLE_MAX_CHARS + 1), "201 characters long; at most 200"),
        ("a\udcffb", "lone surrogate"),
        ("a\x00b", "NUL"),
    ],
)
def test_a_header_title_that_cannot_be_stored_is_refused_at_its_line(title, why):
    text = json.dumps({"lagmem": 1, "title": title}) + "\n" + TURN
    with pytest.raises(T.TranscriptError, match=why) as exc:
        T.parse(text)
    assert exc.value.line == 1 and "'title'" in exc.value.reason


def test_a_title_of_exactly_the_column_width_is_kept():
    title = "é" * T.TITLE_MAX_CHARS
    assert T.parse(json.dumps({"lagmem": 1, "title": title}) + "\n" + TURN).header["title"] == title


def test_lagmem_import_refuses_a_long_title_and_stores_nothing(db_url, tmp_path, engine):
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps({"lagmem": 1, "title": "t" * 300}) + "\n" + TURN, encoding="utf-8")
    with pytest.raises(SystemExit, match=r"line 1: the header's 'title' is 300 characters") as exc:
        main(["import", str(path), "--db", db_url])
    assert "nothing was stored" in str(exc.value)
    with pytest.raises(SystemExit, match="--title is 300 characters"):
        main(["import", str(path), "--db", db_url, "--title", "t" * 300])
    assert _conversations(engine) == []


def test_a_title_from_a_long_or_undecodable_file_name_is_cut_the_same_everywhere(db_url, tmp_path, engine):
    for stem, title in [("n" * 240, "n" * 200), ("caf\udce9", "caf?")]:  # a non-UTF-8 name: a lone surrogate
        path = tmp_path / (stem + ".jsonl")
        path.write_text(TURN, encoding="utf-8")
        assert main(["import", str(path), "--db", db_url]) == 0
        assert _conversations(engine)[-1].title == title
    assert T.fit_title("a\udcffb\x00" + "z" * 300) == "a?b" + "z" * 197


def test_the_store_refuses_a_title_no_database_can_keep_the_same(store, engine):
    for bad in ("x" * 201, "a\udcffb"):
        with pytest.raises(ValueError, match="the title"):
            store.create(bad)
    conv = store.create("ok")
    with pytest.raises(ValueError, match="201 characters"):
        store.rename(conv, "x" * 201)
    store.rename(conv, "y" * 200)
    with Session(engine) as s:
        assert s.scalar(select(func.count()).select_from(Conversation)) == 1
        assert s.scalar(select(Conversation.title)) == "y" * 200
