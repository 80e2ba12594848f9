"""The README's "Testing your assistant's memory" example, run as a user would run it: the Python
block extracted, saved as a test file beside a saved conversation, and run by pytest with the
plugin (first writing the snapshot, then checking against it)."""

from __future__ import annotations

import re

from tests.assistant.test_saved_memory import ROOT, _pytest
from tests.conftest import CONVERSATIONS


def readme_example() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Testing your assistant's memory", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_readme_example_is_ten_lines_and_passes(tmp_path):
    code = readme_example()
    assert len([line for line in code.splitlines() if line.strip()]) <= 10
    (tmp_path / "conversations").mkdir()
    # the README's trip.jsonl is the pins conversation: a passport number pinned, then small talk
    (tmp_path / "conversations" / "trip.jsonl").write_text((CONVERSATIONS / "pins.jsonl").read_text(encoding="utf-8"))
    (tmp_path / "test_readme.py").write_text(code)
    update = _pytest(["-p", "assistant.testing.plugin", "--lagmem-update"], tmp_path)
    assert update.returncode == 0, update.stdout + update.stderr
    assert (tmp_path / "conversations" / "trip.timeline.json").exists()
    check = _pytest(["-p", "assistant.testing.plugin"], tmp_path)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "2 passed" in check.stdout
