"""The house rules, checked: the pure core stays pure, data flows one way, one door to storage.

Floors (``docs/architecture.md``): ``app.py, pages/, web/`` (the web shell) and ``cli/`` (the terminal
shell) -> ``assistant/`` (the product) -> ``memory/`` (the pure core); ``assistant/store.py`` ->
``storage/`` (-> memory's value types); ``bench/`` measures the product and the product never imports
it; ``tests/`` may import anything. Only the web shell imports streamlit. Only ``assistant/models/``
compares backend names (every other module reads the model's profile).
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parent.parent
OURS = {"memory", "storage", "assistant", "bench", "cli", "web", "pages", "app", "tests"}
WEB_SHELL = {"app", "pages", "web"}
# memory/ does no I/O at all: no files, no environment, no network, no outer layer.
MEMORY_FORBIDDEN = {
    "os",
    "pathlib",
    "platformdirs",
    "io",
    "shutil",
    "tempfile",
    "subprocess",
    "streamlit",
    "sqlalchemy",
    "openai",
    "httpx",
    "httpx2",
    "requests",
    "urllib",
    "urllib3",
    "socket",
    "alembic",
    "psycopg",
    "tiktoken",
    "torch",
    "sentence_transformers",
} | (OURS - {"memory"})
# what each floor may import of ours
ALLOWED = {
    "memory": {"memory"},
    "storage": {"storage", "memory"},
    "assistant": {"assistant", "memory", "storage"},
    "bench": {"bench", "assistant", "memory", "storage"},
    "cli": {"cli", "assistant", "bench", "memory"},
    "web": {"web", "assistant", "memory"},
    "pages": {"web", "assistant", "memory"},
    "app": {"web", "assistant", "memory"},
}


def _modules() -> dict[str, Path]:
    """Our modules by dotted name (app.py, pages/ and web/ are the web shell)."""
    out = {"app": ROOT / "app.py"}
    for floor in ("memory", "storage", "assistant", "bench", "cli", "web"):
        for path in (ROOT / floor).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            parts = path.relative_to(ROOT).with_suffix("").parts
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    for path in (ROOT / "pages").glob("*.py"):
        out[f"pages.{path.stem}"] = path
    return out


def _imports(name: str, path: Path) -> set[str]:
    """Every module ``path`` imports (absolute names; relative imports resolved)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            found.add(mod)
            found |= {f"{mod}.{a.name}" for a in node.names}
    return found


def test_memory_imports_no_io_and_no_outer_layer():
    offenders = []
    for name, path in _modules().items():
        if name.split(".")[0] != "memory":
            continue
        text = path.read_text(encoding="utf-8")
        offenders += [
            f"{name}: imports {m}" for m in sorted(_imports(name, path)) if m.split(".")[0] in MEMORY_FORBIDDEN
        ]
        if re.search(r"(?<![\w.])open\(", text):
            offenders.append(f"{name}: calls open(")
        if "environ" in text:
            offenders.append(f"{name}: reads the environment")
    assert offenders == []


def test_every_floor_imports_only_the_floors_below_it():
    offenders = []
    for name, path in _modules().items():
        floor = name.split(".")[0]
        for mod in sorted(_imports(name, path)):
            top = mod.split(".")[0]
            if top in OURS and top not in ALLOWED[floor]:
                offenders.append(f"{name} imports {mod}")
    assert offenders == []


def test_only_the_store_opens_the_door_to_storage():
    offenders = [
        name
        for name, path in _modules().items()
        if name.split(".")[0] not in ("storage", "bench")
        and name != "assistant.store"
        and any(m.split(".")[0] == "storage" for m in _imports(name, path))
    ]
    assert offenders == []


def test_no_import_cycles_between_our_modules():
    mods = _modules()
    graph = {name: {m for m in _imports(name, path) if m in mods and m != name} for name, path in mods.items()}
    # a package's __init__ importing its own submodules is not a cycle through the package
    cycles, state = [], {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(
                    " -> ".join(trail[trail.index(nxt) :] + [node, nxt]) if nxt in trail else f"{node} -> {nxt}"
                )
            elif nxt not in state:
                visit(nxt, trail + [node])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [])
    assert cycles == []


def test_importing_the_core_loads_no_io_library():
    code = (
        "import sys, memory.layer, memory.policies, memory.transcript, memory.types, memory.tokens;"
        "bad = [m for m in ('streamlit', 'sqlalchemy', 'openai', 'storage', 'assistant', 'tiktoken') if m in sys.modules];"
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == ""


def test_only_the_web_shell_imports_streamlit():
    """The product and the terminal never import streamlit; bench/ may drive the pages with
    Streamlit's AppTest (``streamlit.testing``) to measure them."""
    offenders = []
    for name, path in _modules().items():
        floor = name.split(".")[0]
        if floor in WEB_SHELL:
            continue
        for mod in _imports(name, path):
            if mod.split(".")[0] == "streamlit" and not (floor == "bench" and mod.startswith("streamlit.testing")):
                offenders.append(f"{name} imports {mod}")
    assert offenders == []


def _backend_names() -> set[str]:
    from assistant.config import BACKENDS

    return set(BACKENDS)


def _names_a_backend(node: ast.AST, names: set[str]) -> bool:
    """A backend's name as a literal (alone or in a tuple/list/set), a ``.backend`` attribute, or
    ``getattr(x, "backend", ...)``."""
    if isinstance(node, ast.Constant):
        return node.value in names
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_names_a_backend(e, names) for e in node.elts)
    if isinstance(node, ast.Attribute):
        return node.attr == "backend"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr":
        return len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and node.args[1].value == "backend"
    return False


def test_only_the_models_wing_names_backends():
    """Which model answers is its profile (assistant/models/profile.py), read by callers: a backend
    is compared, or its name read, only inside assistant/models/, and chosen from the environment in
    assistant/config.py. So a new backend is one module and one line in assistant/models/backends.py."""
    names = _backend_names()
    offenders = []
    for name, path in _modules().items():
        if name == "assistant.config" or name == "assistant.models" or name.startswith("assistant.models."):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            where = f"{name}:{getattr(node, 'lineno', '?')}"
            if isinstance(node, ast.Compare):
                if any(_names_a_backend(side, names) for side in (node.left, *node.comparators)):
                    offenders.append(f"{where} compares a backend")
            elif isinstance(node, ast.Attribute) and node.attr == "backend":
                offenders.append(f"{where} reads .backend")
            elif _names_a_backend(node, names) and isinstance(node, ast.Call):
                offenders.append(f"{where} reads getattr(..., 'backend')")
    assert offenders == []


def test_the_backend_check_sees_what_it_forbids():
    names = _backend_names()

    def flagged(code: str) -> bool:
        tree = ast.parse(code)
        return any(
            isinstance(n, ast.Compare) and any(_names_a_backend(s, names) for s in (n.left, *n.comparators))
            for n in ast.walk(tree)
        )

    assert flagged('x == "local"') and flagged("llm.backend != y") and flagged('getattr(llm, "backend", "") == z')
    assert flagged('b in ("openai", "compatible")')
    assert not flagged('name == "hybrid"') and not flagged('x.profile.cites == "model"')


def _sources() -> list[Path]:
    """Every Python file of the checkout (the environment and generated files aside)."""
    skip = {".venv", ".git", ".pytest_cache", "__pycache__", "node_modules"}
    return sorted(p for p in ROOT.rglob("*.py") if not skip & set(p.relative_to(ROOT).parts))


MAX_LINES = 400
# Files allowed over the limit (none today): a file may leave this list, and no other may exceed it.
OVER_THE_LIMIT: set[str] = set()


def test_no_file_over_400_lines():
    too_long = []
    for path in _sources():
        rel = path.relative_to(ROOT).as_posix()
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > MAX_LINES and rel not in OVER_THE_LIMIT:
            too_long.append(f"{rel}: {n} lines")
    assert too_long == []


def test_every_module_says_what_it_is_for():
    missing = [p.relative_to(ROOT).as_posix() for p in _sources() if not ast.get_docstring(ast.parse(p.read_text()))]
    assert missing == []


HISTORY = re.compile(r"\b(issue|round|iteration|sprint)\s*#?\s*\d+", re.IGNORECASE)


def test_comments_and_docstrings_say_what_not_when():
    """History (which issue, which round of work) goes in docs/CHANGELOG.md, not in the code."""
    found = []
    for path in _sources():
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if HISTORY.search(line):
                found.append(f"{path.relative_to(ROOT).as_posix()}:{i}: {line.strip()[:80]}")
    assert found == []
