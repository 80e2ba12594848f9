"""memory/ is the pure core: no streamlit, sqlalchemy, openai, network or outer layers."""

import ast
import subprocess
import sys
from pathlib import Path

FORBIDDEN = {"streamlit", "sqlalchemy", "openai", "httpx", "httpx2", "requests", "urllib3", "socket",
             "storage", "assistant", "alembic", "psycopg"}
MEMORY = Path(__file__).parent.parent / "memory"


def test_memory_imports_nothing_from_outer_layers_or_io_libraries():
    offenders = []
    for path in MEMORY.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            offenders += [f"{path.name}: {n}" for n in names if n.split(".")[0] in FORBIDDEN]
    assert offenders == []


def test_importing_the_core_loads_no_io_library():
    code = (
        "import sys, memory.layer, memory.policies, memory.transcript, memory.types;"
        "bad = [m for m in ('streamlit', 'sqlalchemy', 'openai', 'storage', 'assistant') if m in sys.modules];"
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=MEMORY.parent, check=True)
    assert out.stdout.strip() == ""
