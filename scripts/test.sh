#!/usr/bin/env bash
# The whole test suite: on SQLite, then the database-facing tests again on a PostgreSQL server
# started here on 127.0.0.1 (a throwaway cluster in a temp dir, stopped at the end).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1

# lint and format first: a tree that does not pass them does not get a test run
$PY -m ruff check .
$PY -m ruff format --check .

$PY -m pytest "$@"

if [ "${LAGMEM_SKIP_POSTGRES:-}" = "1" ]; then
  echo "LAGMEM_SKIP_POSTGRES=1: the PostgreSQL run was not done"
  exit 0
fi
source scripts/postgres.sh
pg_start
trap pg_stop EXIT
LAGMEM_TEST_DATABASE_URL="$PG_URL" $PY -m pytest "$@"
