"""What an install needs: the product runs without the benchmarks' extra, the pytest plugin costs
nothing to load, and constraints.txt pins every package pyproject.toml declares.

The extra (``.[bench]``: scikit-learn, scipy, matplotlib, tqdm) is imported only by ``bench/`` and
the benchmark commands. sentence-transformers needs scikit-learn, scipy and tqdm itself, so a
product install still holds them: the runtime check below hides them from *our* modules only (an
import of one from a file of this checkout fails), and the static check finds an import of one
anywhere in the product's source, also one that would run only later or inside a function.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).parent.parent
BENCH_ONLY = ("sklearn", "scipy", "matplotlib", "tqdm")
# the product: everything but bench/ and the benchmark commands
PRODUCT_DIRS = ("assistant", "memory", "storage", "web", "pages", "cli")
# the benchmark commands: cli/bench*.py, and `bench cites` and `bench probes`
BENCH_COMMANDS = {p.relative_to(ROOT).as_posix() for p in (ROOT / "cli").glob("bench*.py")}
BENCH_COMMANDS |= {"cli/cites.py", "cli/probes.py"}

# Installed first in the child: a finder that refuses the bench-only packages to any module of
# this checkout, wherever the import statement sits (third-party libraries still get them).
BLOCKER = """
import importlib.abc, sys
from pathlib import Path
ROOTS = [Path(r) for r in {roots!r}]
BLOCKED = {blocked!r}
class _BenchExtraAbsent(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] not in BLOCKED:
            return None
        f = sys._getframe(1)
        while f is not None and (f.f_code.co_filename.startswith("<") or "importlib" in f.f_code.co_filename):
            f = f.f_back
        where = Path(f.f_code.co_filename).resolve() if f is not None else None
        if where is not None and any(r in where.parents for r in ROOTS) and ".venv" not in where.parts:
            raise ImportError(f"{{name}} (the bench extra) imported by {{where}}:{{f.f_lineno}}")
        return None
sys.meta_path.insert(0, _BenchExtraAbsent())
for m in [m for m in sys.modules if m.partition(".")[0] in BLOCKED]:
    del sys.modules[m]
"""


def _product_files() -> list[Path]:
    files = [ROOT / "app.py"]
    for d in PRODUCT_DIRS:
        files += [p for p in sorted((ROOT / d).rglob("*.py")) if "migrations" not in p.parts]
    return [p for p in files if p.relative_to(ROOT).as_posix() not in BENCH_COMMANDS]


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _run_child(code: str, tmp_path: Path, ours: Path = ROOT, timeout: int = 300) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "LAGMEM_"))}
    env.update(LAGMEM_DATA_DIR=str(tmp_path / "data"), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    env["TIKTOKEN_CACHE_DIR"] = os.environ.get("TIKTOKEN_CACHE_DIR", str(tmp_path / "tiktoken"))
    prelude = BLOCKER.format(roots=[str(ours.resolve())], blocked=BENCH_ONLY)
    return subprocess.run(
        [sys.executable, "-c", prelude + code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_no_product_module_imports_a_bench_only_package():
    offenders = []
    for path in _product_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            offenders += [
                f"{path.relative_to(ROOT)}:{node.lineno} imports {n}" for n in names if n.split(".")[0] in BENCH_ONLY
            ]
    assert offenders == []


def test_the_blocker_refuses_our_imports_and_lets_libraries_through(tmp_path):
    """The runtime check can fail: a module of the checked tree importing scipy is refused, while a
    library importing it (``importlib`` on behalf of this child's top level, no file of ours) is not."""
    ours = tmp_path / "tree"
    ours.mkdir()
    (ours / "probe_module.py").write_text('"""Imports a bench-only package."""\nimport scipy  # noqa: F401\n')
    out = _run_child(
        f"import importlib, sys\nsys.path.insert(0, {str(ours)!r})\n"
        "try:\n    import probe_module\nexcept ImportError as e:\n    print('refused:', e)\n"
        "importlib.import_module('scipy'); print('library import: ok')\n",
        tmp_path,
        ours=ours,
    )
    assert out.returncode == 0, out.stderr
    assert "refused: scipy (the bench extra) imported by" in out.stdout and "probe_module.py:2" in out.stdout
    assert "library import: ok" in out.stdout


def test_every_product_module_imports_without_the_bench_extra(tmp_path):
    modules = [_module(p) for p in _product_files() if p.parent.name != "pages" and p.name != "app.py"]
    code = (
        "import importlib, json\n"
        f"failed = {{}}\nfor m in {modules!r}:\n"
        "    try:\n        importlib.import_module(m)\n"
        "    except ImportError as e:\n        failed[m] = str(e)\n"
        "print(json.dumps(failed))\n"
    )
    out = _run_child(code, tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {}


def test_the_terminal_commands_run_without_the_bench_extra(tmp_path):
    """``lagmem replay / import / export / list`` and ``ask`` (against the local HTTP fake of the
    OpenAI API, with the real embeddings) with the bench-only packages refused to our code."""
    saved = ROOT / "tests" / "conversations" / "pins.jsonl"
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    code = f"""
import sys
from bench.fakes.openai_http import FakeOpenAI
from cli.main import main
def run(*argv):
    try:
        rc = main(list(argv))
    except SystemExit as e:
        rc = e.code
    print('rc', argv[0], rc, file=sys.stderr)
    assert rc in (0, None), (argv, rc)
run('replay', {str(saved)!r}, '--json')
run('import', {str(saved)!r}, '--db', {db!r})
run('list', '--db', {db!r})
run('export', '1', '--db', {db!r}, '-o', {str(tmp_path / "out.jsonl")!r})
import os
with FakeOpenAI() as fake:
    os.environ.update(OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY='sk-fake', LAGMEM_MODEL='fake-model')
    run('ask', 'What did I pin?', '--db', {db!r}, '--conversation', '1')
"""
    out = _run_child(code, tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    for command in ("replay", "import", "list", "export", "ask"):
        assert f"rc {command} 0" in out.stderr or f"rc {command} None" in out.stderr, out.stderr[-3000:]
    assert (tmp_path / "out.jsonl").read_text(encoding="utf-8").count('"role"') >= saved.read_text().count('"role"')


def test_the_app_runs_without_the_bench_extra(tmp_path):
    """Both pages drawn headless (Streamlit's AppTest) with the bench-only packages refused to our code."""
    code = """
from streamlit.testing.v1 import AppTest
at = AppTest.from_file('app.py', default_timeout=120).run()
assert not at.exception, [e.value for e in at.exception]
print('chat page:', len(at.chat_input), 'chat input')
at.switch_page('pages/inspector_page.py').run()
assert not at.exception, [e.value for e in at.exception]
print('inspector drawn')
"""
    out = _run_child(code, tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "chat page: 1 chat input" in out.stdout and "inspector drawn" in out.stdout


def test_loading_the_pytest_plugin_loads_neither_the_store_nor_sqlalchemy(tmp_path):
    """The plugin is registered in every pytest run of an environment lagmem is installed in."""
    out = _run_child(
        "import sys, assistant.testing.plugin\n"
        "heavy = ('sqlalchemy', 'assistant.store', 'storage', 'memory.layer', 'tiktoken', 'torch', 'streamlit')\n"
        "print([m for m in heavy if m in sys.modules])\n",
        tmp_path,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def _declared() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    reqs = list(project["dependencies"])
    for extra in project.get("optional-dependencies", {}).values():
        reqs += extra
    return [Requirement(r) for r in reqs]


def _pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            pins[re.sub(r"[-_.]+", "-", name).lower()] = version.strip()
    return pins


def test_constraints_pin_every_declared_package_within_its_range():
    """A dependency added to pyproject.toml without `make lock` (or a range the lock no longer
    meets) fails here, naming the package."""
    pins = _pins()
    problems = []
    for req in _declared():
        name = re.sub(r"[-_.]+", "-", req.name).lower()
        if name not in pins:
            problems.append(f"{req.name}: not in constraints.txt (run `make lock`)")
        elif not req.specifier.contains(pins[name], prereleases=True):
            problems.append(f"{req.name}: constraints.txt has {pins[name]}, pyproject.toml wants {req.specifier}")
    assert problems == []
