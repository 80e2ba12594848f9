"""The probe benchmark's scoring: a fact probe needs the fact and no corrected (stale) value; a
probe with no fact stated needs an admission of not knowing; both probe files load."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import probes
from bench.probes import Probe, abstains, passes, sure

BENCH = Path(probes.__file__).parent


def test_fact_probe_needs_the_fact_case_insensitively():
    p = Probe("x", ("My dog is Biscuit.",), "Dog?", ("Biscuit",))
    assert passes(p, "Your dog is called biscuit.")
    assert not passes(p, "I am not sure.")


def test_a_stale_value_fails_a_corrected_probe_even_next_to_the_fact():
    p = Probe("x", (), "When?", ("Saturday",), ("Friday",))
    assert passes(p, "You are meeting Jonas on Saturday.")
    assert not passes(p, "On Friday or Saturday.")
    assert not passes(p, "On Friday.")


def test_an_unknown_probe_passes_only_when_the_answer_admits_it():
    p = Probe("x", ("Work was tiring.",), "When is my flight?", ())
    assert p.unknown
    assert passes(p, "You haven\u2019t told me when your flight is.")
    assert passes(p, "I don't know.")
    assert not passes(p, "Your flight is on Monday.")
    assert not passes(p, "You told me (turn 1): Work was tiring.")


def test_abstains_reads_curly_apostrophes():
    assert abstains("I don\u2019t know that.")
    assert not abstains("Lyon.")


@pytest.mark.parametrize("name", ["probes.jsonl", "probes_heldout.jsonl"])
def test_probe_files_load(name):
    items = probes.load(BENCH / name)
    assert len(items) >= 24
    assert len({p.id for p in items}) == len(items)


def test_the_held_out_set_has_the_kinds_it_claims():
    items = probes.load(BENCH / "probes_heldout.jsonl")
    assert len(items) >= 30
    assert any(p.unknown for p in items)
    assert any(p.stale for p in items)


def test_a_malformed_line_is_refused_with_its_number(tmp_path):
    f = tmp_path / "p.jsonl"
    f.write_text('{"id": "a", "turns": [], "question": "q", "fact": ["x"]}\n{"id": "b"}\n')
    with pytest.raises(ValueError, match=r"p.jsonl:2"):
        probes.load(f)


def test_the_first_minute_set_is_fair_to_a_quoting_answer():
    """The first-minute set: enough probes of each kind, and a quote of a wrong message never passes."""
    items = probes.load(BENCH / "probes_first_minute.jsonl")
    assert len({p.id for p in items}) == len(items)
    assert sum(not p.unknown for p in items) >= 30 and sum(p.unknown for p in items) >= 6
    for p in items:
        texts = [*p.turns, p.question]
        if p.unknown:
            assert not any(abstains(t) for t in texts), p.id
        else:
            assert sum(passes(p, t) for t in texts) == 1, p.id


def test_the_strict_pass_refuses_a_hedge_on_either_kind_of_probe():
    fact = Probe("x", ("My dog is Biscuit.",), "What's my dog called?", ("Biscuit",))
    guess = "I am not sure; the closest thing in memory: you told me (turn 1): My dog is Biscuit."
    assert passes(fact, guess) and not sure(fact, guess)
    assert sure(fact, "You told me (turn 1): My dog is Biscuit.")
    never = Probe("x", ("My dog is Biscuit.",), "What's my cat called?", ())
    assert passes(never, guess) and not sure(never, guess)
    assert sure(never, "I don't know; you haven't told me that.")
