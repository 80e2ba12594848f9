# Start/stop a throwaway PostgreSQL cluster on 127.0.0.1 (Debian's packages). Source this file.
pg_start() {
  local bin
  bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
  PG_DIR=$(mktemp -d /tmp/lagmem-pg.XXXXXX)
  PG_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  local run_as=()
  if [ "$(id -u)" -eq 0 ]; then
    chown postgres "$PG_DIR"
    run_as=(runuser -u postgres --)
  fi
  "${run_as[@]}" "$bin/initdb" -D "$PG_DIR/data" -U lagmem --auth=trust >/dev/null
  "${run_as[@]}" "$bin/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/log" -w \
    -o "-h 127.0.0.1 -p $PG_PORT -k $PG_DIR -c fsync=off -c max_connections=200" start >/dev/null
  PG_BIN=$bin
  PG_RUN_AS=("${run_as[@]}")
  PG_URL="postgresql+psycopg://lagmem@127.0.0.1:$PG_PORT/postgres"
  export PG_URL PG_DIR PG_BIN
  echo "PostgreSQL running at $PG_URL"
}

pg_stop() {
  [ -n "${PG_DIR:-}" ] || return 0
  "${PG_RUN_AS[@]}" "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m fast -w stop >/dev/null 2>&1 || true
  rm -rf "$PG_DIR"
}
