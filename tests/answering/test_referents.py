"""What a user's turn is about when it does not say (assistant.answering.referents) and how the notes
use it: a pronoun points back to the latest recent statement of a fitting kind, the question's own
names are not its answer, a correction wins over chatter between, the same "my X is" slot stated
again corrects it, a code is asked for by its label. Pure functions on hand-made turns."""

from __future__ import annotations

from assistant.answering.note import Note
from assistant.answering.notes import asked_subject, correction_of, expected_kind, has_kind, kind_beyond, select_notes
from assistant.answering.quoting import extractive
from assistant.answering.referents import followers, points_back, referent, restates, unmentioned_role
from assistant.retrieval.step import Cite
from tests.answering.conversation import Step, Turn, turns


def users(active):
    return [t for t in active if t.role == "user"]


def test_a_pronoun_points_back_to_the_latest_recent_statement_of_its_kind():
    told = users(turns("My best friend is Lukas.", "He lives in Vienna.", "My cousin Emma lives in Dublin."))
    assert referent(told[1], told).number == 1
    she = Turn(7, "user", "I'm visiting her in April.")
    assert referent(she, [*told, she]).number == 5  # "her": Emma, the latest person
    # "she" is not a brother; a statement naming nobody and no pronoun points nowhere
    bro = users(turns("My brother is Jan.", "The weather is awful.", "She moved to Rome."))
    assert referent(bro[2], bro) is None
    assert referent(bro[1], bro) is None and not points_back("The weather is awful.")
    # too far back: only the RECENT statements before it are looked at
    far = users(turns("My dad is Piet.", "Busy day.", "Lunch was good.", "Rain again.", "He retired in May."))
    assert referent(far[4], far) is None


def test_followers_chain_through_pronouns():
    told = users(turns("my son Theo started at a new school", "it's called Greenfield Primary", "he seems to like it"))
    assert [c.number for c in followers(1, told)] == [3, 5]
    assert followers(3, told)[0].number == 5


def test_the_questions_own_names_are_not_its_answer():
    assert has_kind("My best friend is Lukas.", "place")
    assert not kind_beyond("My best friend is Lukas.", "place", "Where does Lukas live?")
    assert not kind_beyond("my son Theo started at a new school", "name", "What's the name of Theo's school?")
    assert kind_beyond("it's called Greenfield Primary", "name", "What's the name of Theo's school?")


def test_a_pronoun_statement_answers_a_question_about_the_named_person():
    active = turns("My best friend is Lukas.", "He lives in Vienna.", "My cousin Emma lives in Dublin.")
    # the retrieval step cites the statement naming Lukas and the one sharing "live"
    picked = select_notes("Where does Lukas live?", active, Step([Cite(1, 0.5, 0.6), Cite(5, 0.4, 0.5)], (1, 5, 3)))
    assert picked.notes[0].number == 3
    assert extractive(picked.notes) == "You told me (turn 3): He lives in Vienna."
    # a possessive subject and a chain of "it"
    active = turns("hi", "my son Theo started at a new school", "it's called Greenfield Primary", "he seems to like it")
    picked = select_notes("What's the name of Theo's school?", active, Step([Cite(3, 0.5, 0.6)], (3, 7, 1)))
    assert picked.notes[0].number == 5


def test_nothing_beyond_the_questions_name_is_i_dont_know():
    active = turns("My best friend is Lukas.", "I had pasta today.")
    picked = select_notes("Where does Lukas live?", active, Step([Cite(1, 0.5, 0.6)], (1, 3)))
    assert picked.unknown and picked.notes == []


def test_a_correction_wins_over_chatter_between():
    note = Note(1, "user", "The kids' school play is on the 12th.", 0.5)
    later = users(turns("The kids' school play is on the 12th.", "ok thanks", "lol", "They moved it to the 19th."))
    assert correction_of(note, later, "time").number == 7
    # without a value of the kind, chatter with a cue corrects nothing
    assert correction_of(note, users(turns("x", "wait what"))[1:], "time") is None
    active = turns("The kids' school play is on the 12th.", "ok thanks", "They moved it to the 19th.")
    picked = select_notes("When is the school play?", active, Step([Cite(1, 0.5, 0.6)], (1, 5, 3)))
    assert [n.number for n in picked.notes] == [5] and "19th" in picked.required


def test_the_same_slot_stated_again_corrects_it_without_a_cue():
    assert restates("My dentist is Dr. Amani.", "My dentist is Dr. Lindqvist.")
    assert not restates("My dentist is Dr. Lindqvist.", "My dentist is Dr. Lindqvist.")
    assert not restates("My doctor is Dr. Amani.", "My dentist is Dr. Lindqvist.")
    note = Note(1, "user", "My dentist is Dr. Lindqvist.", 0.5)
    later = users(turns("My dentist is Dr. Lindqvist.", "Teeth are fine.", "My dentist is Dr. Amani."))
    assert correction_of(note, later, "name").number == 5


def test_a_code_is_asked_for_by_its_label():
    assert expected_kind("What's the code for my locker?") == "code"
    assert expected_kind("What's my phone PIN?") == "code"
    assert not has_kind("My gym locker is number 27.", "code")
    assert has_kind("my bike lock code is 5093", "code")
    assert has_kind("The wifi password at the cabin is pinecone42", "code")
    active = turns("My gym locker is number 27.", "I go after work, usually around six.")
    picked = select_notes("What's the code for my locker?", active, Step([Cite(1, 0.5, 0.6)], (1, 3)))
    assert picked.unknown
    active = turns("my locker number at the pool is 218", "my bike lock code is 5093")
    picked = select_notes("What's the code for my bike lock?", active, Step([Cite(1, 0.5, 0.6)], (1, 3)))
    assert extractive(picked.notes) == "You told me (turn 3): my bike lock code is 5093"


def test_a_statement_about_someone_else_by_name_is_left_out():
    active = turns("My best friend is Lukas.", "He lives in Vienna.", "My cousin Emma lives in Dublin.", "Busy week.")
    step = Step([Cite(5, 0.5, 0.6), Cite(3, 0.4, 0.5), Cite(7, 0.3, 0.4)], (5, 3, 7, 1))
    assert [n.number for n in select_notes("Where does Lukas live?", active, step).notes] == [3, 7]
    # the asked name never mentioned: nothing said is about him, whatever is cited
    step = Step([Cite(5, 0.5, 0.6)], (5, 7))
    assert select_notes("Where does Lukas live?", users(active)[2:], step).unknown
    assert asked_subject("What's the name of Theo's school?") == "theo"
    assert asked_subject("When is my train to Leipzig?") is None


def test_someone_asked_about_by_a_role_nobody_mentioned_is_i_dont_know():
    assert unmentioned_role("What's my wife's name?", ["I've got a meeting at 3."])
    assert unmentioned_role("Where does Nadia's brother live?", ["My friend Nadia is a nurse.", "She lives in Leeds."])
    assert not unmentioned_role("What's the name of Lea's teacher?", ["my daughter Lea has a new teacher"])
    assert not unmentioned_role("What's my mum's name?", ["My mother is called Ilse."])  # another word for her
    assert not unmentioned_role("What's my dog's name?", ["We have two dogs."])
    active = turns("My friend Nadia is a nurse.", "She lives in Leeds.")
    assert select_notes("Where does Nadia's brother live?", active, Step([Cite(3, 0.5, 0.6)], (3, 1))).unknown


def test_a_change_verb_is_a_correction_cue():
    note = Note(1, "user", "The team dinner is on Friday.", 0.5)
    later = users(turns("The team dinner is on Friday.", "hope the weather holds", "They pushed it to Saturday."))
    assert correction_of(note, later, "time").number == 5
