"""``lagmem loadtest`` on a small scale: the invariants (not the speed) hold with threads and with
processes, on SQLite and (with LAGMEM_TEST_DATABASE_URL) PostgreSQL; and its checks do catch damage."""

from __future__ import annotations

import json

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from bench.fakes.loadtest_server import FakeOpenAIServer
from bench.loadtest import SETTINGS, check_contract, make_service, ok, run
from cli.main import main
from storage.models import EvictionRow

KEYS = {
    "exchanges",
    "exchanges_per_s",
    "p99_ms",
    "lost",
    "duplicated",
    "gaps",
    "contract_violations",
    "errors_shown_to_users",
}


def _assert_clean(report, exchanges):
    assert report["exchanges"] == exchanges, report["errors"]
    assert (report["lost"], report["duplicated"], report["gaps"]) == (0, 0, 0), report["problems"]
    assert report["contract_violations"] == 0, report["problems"]
    assert report["errors_shown_to_users"] == 0 and report["locked_errors"] == 0, report["errors"]
    assert report["evictions"] > 0  # the budget is small on purpose: eviction happened under load
    assert ok(report)


def test_loadtest_command_with_threads(db_url, tmp_path, capsys):
    out = tmp_path / "load.json"
    code = main(["loadtest", "--writers", "4", "--exchanges", "10", "--db", db_url, "--json", str(out), "--quiet"])
    report = json.loads(out.read_text())
    assert KEYS <= set(report)
    _assert_clean(report, 40)
    assert code == 0
    assert "PASS" in capsys.readouterr().out


def test_loadtest_with_processes(db_url):
    report = run(db_url, 3, 4, processes=True, progress=False)
    assert report["mode"] == "processes"
    _assert_clean(report, 12)


def test_the_contract_check_catches_a_missing_eviction_record(tmp_path):
    url = f"sqlite:///{tmp_path / 'damaged.db'}"
    with FakeOpenAIServer() as server:
        svc = make_service(url, server.base_url, migrate=True)
        conv = svc.store.create("t", SETTINGS)
        for j in range(8):
            svc.ask(conv, f"w0-x{j} apple river budget lisbon piano garden orbit cable violet harbor")
    assert check_contract(svc.store, conv) == []
    with Session(svc.store.engine) as s, s.begin():
        first = s.scalars(select(EvictionRow.id).order_by(EvictionRow.id)).first()
        s.execute(delete(EvictionRow).where(EvictionRow.id == first))
    assert any("eviction records" in p for p in check_contract(svc.store, conv))
    svc.store.engine.dispose()
