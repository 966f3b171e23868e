#!/usr/bin/env bash
# Corkboard's benchmarks beside their baselines, in one run (see bench/README.md).
#   bench/run.sh            full run: 10 s per figure, 100k pins for the list figure
#   bench/run.sh --smoke    a few seconds, tiny sizes, debug build: keeps the harness from
#                           rotting (.ci/run); fails when a figure is missing, never when slow
# BENCH_STORES=postgres picks stores, BENCH_PG_URL the server, BENCH_PROFILE=release|debug
# the build (release unless --smoke), BENCH_ONLY=rendered only the rendered-list figure
# (each store filled as for the list figure, nothing else measured), BENCH_ONLY=mcp only
# the MCP figure (REST POST /v1/pins, then tools/call create_pin, nothing else measured),
# BENCH_ONLY=events only the live-events figures (REST POST /v1/pins with no viewer, then
# the push probes and POST/s with 1,000 viewers; with dashing-js's push figures),
# BENCH_ONLY=hooks only the inbound hook figure (PATCH /v1/datasets/{id}, then POST /in/{token}),
# BENCH_ONLY=writes only the automation writes (upserts beside GET and PATCH, appends beside PATCH),
# BENCH_ONLY=updates only the update figures (PATCH in one workspace, in 8, and in one of as
# many pins as the 8, beside POST and, on PostgreSQL, pgbench of sql/update.sql),
# BENCH_ONLY=export only moving a store: `corkboard export` and `migrate-store` PostgreSQL ->
# SQLite of a PostgreSQL store of $LIST_PINS pins, beside pg_dump of the same database,
# BENCH_ONLY=signals only the signals' sweeps (POST/s with the freshness and status sweeps
# running every second over 10,000 pins, beside a server that sweeps once an hour; the
# sweeps' time per run).
# BENCH_ONLY=webhooks only the webhook fan-out (3,000 events to 10 webhooks, beside as many
# plain POSTs by a Rust client to the same local receiver, five rounds alternating the two).
# Prints one line per figure: `name: ours=... baseline=... ratio=...`.
set -euo pipefail
cd "$(dirname "$0")/.."

SMOKE=0 DUR=10 WARM=3 LIST_PINS=100000 PROFILE=release
if [ "${1:-}" = "--smoke" ]; then SMOKE=1 DUR=1 WARM=1 LIST_PINS=500 PROFILE=debug; fi
PROFILE=${BENCH_PROFILE:-$PROFILE}
ONLY=${BENCH_ONLY:-}
case "$ONLY" in ""|rendered|mcp|events|hooks|writes|updates|export|signals|webhooks) ;; *) echo "BENCH_ONLY: only 'rendered', 'mcp', 'events', 'hooks', 'writes', 'updates', 'export', 'signals' and 'webhooks' are known" >&2; exit 1 ;; esac
PG_ADMIN=${BENCH_PG_URL:-postgres://postgres@127.0.0.1:5432}
CONNS=32

for tool in wrk pgbench psql python3 curl node ss gcc; do
  command -v "$tool" >/dev/null || { echo "bench needs $tool (apt-get install wrk postgresql-client)" >&2; exit 1; }
done

if [ "$PROFILE" = release ]; then
  cargo build --release --quiet --bin corkboard --example http_ceiling --example push_floor --example webhook_fanout
else
  cargo build --quiet --bin corkboard --example http_ceiling --example push_floor --example webhook_fanout
fi
BIN=$PWD/target/$PROFILE/corkboard
WORK=$(mktemp -d)
PIDS=()
DBS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for db in "${DBS[@]}"; do psql -q "$PG_ADMIN/postgres" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true; done
  [ -n "${BENCH_KEEP:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT

# Limits raised by settings, so the limiter still runs and reports but never refuses.
export CORKBOARD_RATE_LIMITS__TIERS__TEAM__PER_MINUTE=2000000000
export CORKBOARD_RATE_LIMITS__TIERS__TEAM__PER_HOUR=2000000000
export CORKBOARD_RATE_LIMITS__WRITE_BUCKET__CAPACITY=2000000000
export CORKBOARD_HOOKS__PER_MINUTE=2000000000
# The webhook fan-out's receiver runs on 127.0.0.1.
export CORKBOARD_WEBHOOKS__ALLOW_PRIVATE_TARGETS=true
export RUST_LOG=warn CORKBOARD_MAX_CONNECTIONS=$CONNS
# Enough streams for 1,000 viewers of one key (and workspace), all from 127.0.0.1.
export CORKBOARD_EVENTS__MAX_STREAMS_PER_KEY=5000
export CORKBOARD_EVENTS__MAX_STREAMS_PER_WORKSPACE=5000
export CORKBOARD_HTTP__MAX_CONNECTIONS_PER_ADDRESS=5000
unset DATABASE_URL

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
rss_mib() { awk '/VmRSS/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }
ratio() { python3 -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); print(f'{a / b:.3f}' if b else 'n/a')" "$1" "$2"; }
is_number() { [[ $1 =~ ^[0-9]+(\.[0-9]+)?$ ]]; }
# line NAME OURS BASELINE: one figure; a missing or non-numeric one fails the run.
line() {
  is_number "$2" && is_number "$3" || { echo "$1: missing figure (ours='$2' baseline='$3')" >&2; exit 1; }
  echo "$1: ours=$2 baseline=$3 ratio=$(ratio "$2" "$3")"
}
wait_up() { for _ in $(seq 1 100); do curl -sf "$1/healthz" >/dev/null && return; sleep 0.1; done; echo "server did not start" >&2; exit 1; }

# wrk_run URL LUA [BODY_FILE] -> "rps p99_ms", after a warm-up; fails on any non-2xx answer
# (and on any MCP tool error, which a script reports as `tool_errors=N`). The measured run's
# count of answers is left in $WORK/requests.
wrk_run() {
  local url=$1 script=$2 body=${3:-/dev/null} out
  BODY_FILE=$body wrk -t2 -c$CONNS -d${WARM}s -s "$script" "$url" >/dev/null
  out=$(BODY_FILE=$body wrk -t2 -c$CONNS -d${DUR}s -s "$script" "$url")
  if grep -q "Non-2xx" <<<"$out"; then echo "non-2xx answers from $url: $out" >&2; exit 1; fi
  if grep -q "^tool_errors=[1-9]" <<<"$out"; then echo "tool errors from $url: $out" >&2; exit 1; fi
  awk '/ requests in / { print $1 }' <<<"$out" >"$WORK/requests"
  echo "$(awk '/Requests\/sec/ { print $2 }' <<<"$out") $(sed -n 's/^p99_ms=//p' <<<"$out")"
}

# pg_tps FILE URL VARS...: transactions/s of pgbench running FILE; fails if pgbench does.
pg_tps() {
  local file=$1 url=$2 out
  shift 2
  if ! out=$(pgbench -n -M prepared -c $CONNS -j 2 -T "$DUR" -f "$file" "$@" "$url" 2>&1); then
    echo "pgbench $file failed: $out" >&2
    exit 1
  fi
  sed -n 's/^tps = \([0-9.]*\).*/\1/p' <<<"$out"
}

# pg_list FILE URL VARS...: "tps p99_ms" of pgbench running FILE, the p99 from its
# per-transaction log (the third column is the transaction's time in microseconds).
pg_list() {
  local file=$1 url=$2 tps
  shift 2
  rm -f "$WORK"/pglog*
  tps=$(pg_tps "$file" "$url" "$@" -l --log-prefix="$WORK/pglog")
  echo "$tps $(cat "$WORK"/pglog* | python3 -c '
import sys
times = sorted(int(line.split()[2]) for line in sys.stdin)
print(f"{times[int(len(times) * 0.99)] / 1000:.3f}")')"
}

python3 - "$WORK" <<'PY'
import json, sys
card = {"title": "Revenue", "value": "$1.2M", "change": "+4%", "trend": "up"}
pin = {"pin_type": "stat-cards", "pin_config": {"cards": [card]}}
json.dump(pin, open(f"{sys.argv[1]}/pin.json", "w"))
json.dump({"pins": [pin] * 100}, open(f"{sys.argv[1]}/batch.json", "w"))
# The rendered list's pins: two dataset variables each, tagged so the list selects them alone.
card = {"title": "Revenue {{sales.region}}", "value": "{{sales.total}}", "change": "+4%", "trend": "up"}
pin = {"pin_type": "stat-cards", "pin_config": {"cards": [card]}, "metadata": {"tags": ["rendered"]}}
json.dump({"pins": [pin] * 100}, open(f"{sys.argv[1]}/rendered_batch.json", "w"))
json.dump({"name": "sales", "format": "json", "data": {"total": 1250, "region": "EU"}},
          open(f"{sys.argv[1]}/dataset.json", "w"))
# Inbound hooks: the same small JSON pushed to a hook's url and PATCHed as a dataset's data.
push = {"total": 1250, "region": "EU", "updated": "2026-11-25T10:00:00Z"}
json.dump(push, open(f"{sys.argv[1]}/hook_push.json", "w"))
json.dump({"data": push}, open(f"{sys.argv[1]}/hook_patch.json", "w"))
json.dump({"name": "patched", "format": "json", "data": push}, open(f"{sys.argv[1]}/hook_dataset.json", "w"))
json.dump({"name": "bench", "dataset": "pushed"}, open(f"{sys.argv[1]}/hook.json", "w"))
# Automation writes (bench_writes): a stat card whose value each request changes (`@U@`, see
# lua/spread.lua), sent whole by PUT by key and as pin_config by PATCH; line charts of 100
# points (labels and values as long as spread.lua's), one point appended with max_points 100,
# or the whole configuration PATCHed with its window moved on by one point, as the append moves it.
card = {"title": "Revenue", "value": "@U@", "change": "+4%", "trend": "up"}
json.dump({"pin_type": "stat-cards", "pin_config": {"cards": [card]}}, open(f"{sys.argv[1]}/writes_put.json", "w"))
json.dump({"pin_config": {"cards": [card]}}, open(f"{sys.argv[1]}/writes_patch.json", "w"))
labels = [f"00000.0.{i:06d}" for i in range(100)]
values = [1000 + i for i in range(100)]
chart = {"labels": labels, "series": [{"name": "latency", "data": values}], "y_label": "ms"}
json.dump({"pin_type": "line-chart", "pin_config": chart}, open(f"{sys.argv[1]}/writes_chart.json", "w"))
moved = {"labels": labels[1:] + ["@U@"], "series": [{"name": "latency", "data": values[1:] + ["@N@"]}], "y_label": "ms"}
open(f"{sys.argv[1]}/writes_chart_patch.json", "w").write(json.dumps({"pin_config": moved}).replace('"@N@"', "@N@"))
point = {"points": [{"label": "@U@", "values": {"latency": "@N@"}}], "max_points": 100}
open(f"{sys.argv[1]}/writes_append.json", "w").write(json.dumps(point).replace('"@N@"', "@N@"))
# MCP: the same pin as pin.json, created by tools/call create_pin (JSON-RPC over POST /mcp).
json.dump({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
           "params": {"name": "create_pin", "arguments": json.load(open(f"{sys.argv[1]}/pin.json"))}},
          open(f"{sys.argv[1]}/mcp_create_pin.json", "w"))
PY

# Moving a store (BENCH_ONLY=export): a PostgreSQL store of $LIST_PINS pins (bench/fill.py), 100
# datasets and 100 boards of 10 placed pins each, served, then stopped; each command's wall
# time and peak RSS (/usr/bin/time -v) beside pg_dump of the same database, same run.
# timed NAME CMD...: runs CMD under /usr/bin/time -v; sets SECS and RSS_MIB.
timed() {
  local name=$1; shift
  /usr/bin/time -v "$@" 2>"$WORK/$name.time" >/dev/null || { cat "$WORK/$name.time" >&2; echo "$name failed" >&2; exit 1; }
  SECS=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; printf "%.2f", s }' "$WORK/$name.time")
  RSS_MIB=$(awk -F': ' '/Maximum resident set size/ { printf "%.1f", $2 / 1024 }' "$WORK/$name.time")
}
bench_export() {
  local db="corkboard_bench_export_$$" port base pid key auth board pins
  psql -q "$PG_ADMIN/postgres" -c "CREATE DATABASE $db" >/dev/null
  DBS+=("$db")
  port=$(free_port) base="http://127.0.0.1:$port"
  DATABASE_URL="$PG_ADMIN/$db" CORKBOARD_LISTEN="127.0.0.1:$port" CORKBOARD_DEFAULT_TIER=team "$BIN" serve >"$WORK/export.out" 2>"$WORK/export.err" &
  pid=$!
  PIDS+=($pid)
  wait_up "$base"
  key=$(sed -n 's/^    \(cbk_[A-Za-z0-9_-]*\)$/\1/p' "$WORK/export.out")
  auth=(-H "Authorization: Bearer $key" -H 'Content-Type: application/json')
  python3 bench/fill.py "$base" "$key" "$LIST_PINS"
  pins=$(curl -sf "${auth[@]}" "$base/v1/pins?limit=200" | python3 -c 'import json, sys; print(" ".join(p["id"] for p in json.load(sys.stdin)["data"]))')
  for i in $(seq 1 100); do
    curl -sf "${auth[@]}" -d "{\"name\": \"ds_$i\", \"format\": \"json\", \"data\": {\"total\": $i, \"rows\": [1, 2, 3]}}" "$base/v1/datasets" >/dev/null
    board=$(curl -sf "${auth[@]}" -d "{\"title\": \"Board $i\"}" "$base/v1/pinboards" | python3 -c 'import json, sys; print(json.load(sys.stdin)["data"]["id"])')
    for p in $(tr ' ' '\n' <<<"$pins" | shuf -n 10); do
      curl -sf "${auth[@]}" -d "{\"pin_id\": \"$p\"}" "$base/v1/pinboards/$board/pins" >/dev/null
    done
  done
  kill -TERM $pid; wait $pid 2>/dev/null || true
  local size; size=$(psql -Atq "$PG_ADMIN/$db" -c "SELECT pg_size_pretty(pg_database_size(current_database()))")
  echo "export: $LIST_PINS pins, 100 datasets, 100 boards of 10 placements; database $size"
  timed pg_dump pg_dump -f "$WORK/dump.sql" "$PG_ADMIN/$db"
  local dump_s=$SECS dump_rss=$RSS_MIB
  timed export env DATABASE_URL="$PG_ADMIN/$db" "$BIN" export --out "$WORK/archive.json"
  local export_s=$SECS export_rss=$RSS_MIB
  python3 -c 'import json, sys; a = json.load(open(sys.argv[1])); assert len(a["pins"]) == int(sys.argv[2]) and len(a["placements"]) == 1000, (len(a["pins"]), len(a["placements"]))' \
    "$WORK/archive.json" "$LIST_PINS" || { echo "export: the archive is not as expected" >&2; exit 1; }
  timed migrate "$BIN" migrate-store --from "$PG_ADMIN/$db" --to "sqlite://$WORK/moved.db"
  local migrate_s=$SECS migrate_rss=$RSS_MIB
  echo "export: archive $(du -h "$WORK/archive.json" | cut -f1), pg_dump $(du -h "$WORK/dump.sql" | cut -f1), SQLite copy $(du -h "$WORK/moved.db" | cut -f1)"
  line "postgres.export_s (vs pg_dump of the same database)" "$export_s" "$dump_s"
  line "postgres.export_peak_rss_mib (vs pg_dump; target < 256)" "$export_rss" "$dump_rss"
  line "postgres.migrate_store_to_sqlite_s (vs pg_dump of the same database)" "$migrate_s" "$dump_s"
  line "postgres.migrate_store_peak_rss_mib (vs pg_dump; target < 256)" "$migrate_rss" "$dump_rss"
}
if [ "$ONLY" = export ]; then
  echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(nproc) cores; export of $LIST_PINS pins"
  bench_export
  exit 0
fi

# Signals (CONTRACT.md 15): a store of 10,000 pins, 1,000 of which expect a push every 10 s and
# are made overdue before each measured run (the first sweep logs 1,000 lapses), 100 of those
# also with status rules over a dataset. POST/s with both sweeps every second
# (freshness.check_secs = 1), beside the same store served by a server that sweeps once an
# hour, alternately, twice each; each sweep's time per run from /metrics
# (corkboard_sweep_duration_seconds: its store statements, as the server waits for them):
# the mean, and the median run's bucket. Then the status load: a loop rewrites the dataset
# every second, each rewrite flipping the 100 pins' status (100 new versions and pin.status
# events a second), POST/s beside the last sweeping run without it.
signals_serve() {
  local store=$1 check=$2 port
  port=$(free_port)
  SIGNALS_BASE="http://127.0.0.1:$port"
  env "${SIGNALS_ENV[@]}" CORKBOARD_LISTEN="127.0.0.1:$port" CORKBOARD_FRESHNESS__CHECK_SECS="$check" \
    "$BIN" serve >>"$WORK/signals_$store.out" 2>>"$WORK/signals_$store.err" &
  SIGNALS_PID=$!
  PIDS+=($SIGNALS_PID)
  wait_up "$SIGNALS_BASE"
}
signals_stop() { kill -TERM "$SIGNALS_PID"; wait "$SIGNALS_PID" 2>/dev/null || true; }
# signals_age STORE: every pin with an expectation is overdue (an hour since its last push).
signals_age() {
  local sql="UPDATE pins SET last_pushed_at = last_pushed_at - 3600000, stale_due_at = last_pushed_at - 3600000 + expected_every_secs * 1000 WHERE expected_every_secs IS NOT NULL"
  if [ "$1" = sqlite ]; then
    python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1], timeout=30); c.execute(sys.argv[2]); c.commit()' "$WORK/signals_sqlite/corkboard.db" "$sql"
  else
    psql -q "$SIGNALS_DB" -c "$sql"
  fi
}
# signals_sweep_ms METRICS SWEEP: mean milliseconds per run of SWEEP, the upper bound (ms)
# of the bucket holding the median run, and the runs.
signals_sweep_ms() {
  python3 -c '
import re, sys
text, sweep = open(sys.argv[1]).read(), sys.argv[2]
name = "corkboard_sweep_duration_seconds"
def value(part):
    m = re.search(r"^%s_%s\{sweep=\"%s\"\} ([0-9.e+-]+)$" % (name, part, sweep), text, re.M)
    return float(m.group(1)) if m else 0.0
runs, total = value("count"), value("sum")
buckets = sorted((float(le), float(n)) for le, n in re.findall(
    r"^%s_bucket\{sweep=\"%s\",le=\"([0-9.e+-]+)\"\} ([0-9.e+-]+)$" % (name, sweep), text, re.M))
median = next((le for le, n in buckets if n >= runs / 2), float("inf"))
print(f"{total / runs * 1000:.3f} {median * 1000:g} {runs:.0f}" if runs else "n/a n/a 0")' "$1" "$2"
}
bench_signals() {
  local store=$1 key auth ds plain=90 watched=10 round on=() off=() flipper rps stale_ms stale_median stale_runs status_ms status_median status_runs
  [ $SMOKE = 1 ] && plain=2 watched=1
  SIGNALS_ENV=()
  if [ "$store" = sqlite ]; then
    SIGNALS_ENV=(CORKBOARD_DATA_DIR="$WORK/signals_sqlite")
  else
    SIGNALS_DB="$PG_ADMIN/corkboard_bench_signals_$$"
    psql -q "$PG_ADMIN/postgres" -c "CREATE DATABASE corkboard_bench_signals_$$" >/dev/null
    DBS+=("corkboard_bench_signals_$$")
    SIGNALS_ENV=(DATABASE_URL="$SIGNALS_DB")
  fi
  signals_serve "$store" 3600
  key=$(env "${SIGNALS_ENV[@]}" "$BIN" keys create --name signals --scopes '*' --tier team)
  auth=(-H "Authorization: Bearer $key" -H 'Content-Type: application/json')
  ds=$(curl -sf "${auth[@]}" -d '{"name": "load", "format": "json", "data": {"v": 50}}' "$SIGNALS_BASE/v1/datasets" \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["data"]["id"])') \
    || { echo "$store: creating the signals' dataset failed" >&2; exit 1; }
  python3 - "$SIGNALS_BASE" "$key" "$plain" "$watched" <<'PY' || { echo "$store: filling the signals' store failed" >&2; exit 1; }
import http.client, json, sys, urllib.parse
base, key, plain, watched = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
url = urllib.parse.urlparse(base)
conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
card = {"cards": [{"title": "Revenue", "value": "$1.2M"}]}
rules = [{"path": "pin_config.cards[0].value", "op": "gt", "value": 90, "status": "critical"}]
def batch(pins):
    conn.request("POST", "/v1/pins/batch", json.dumps({"pins": pins}), headers)
    res = conn.getresponse()
    body = res.read()
    assert res.status == 200, (res.status, body[:300])
for _ in range(plain):
    batch([{"pin_type": "stat-cards", "pin_config": card}] * 100)
for i in range(watched):
    pin = {"pin_type": "stat-cards", "pin_config": card, "expected_every_secs": 10}
    pins = [pin] * 100
    if i == 0:
        ruled = {"pin_type": "stat-cards", "expected_every_secs": 10, "status_rules": rules,
                 "pin_config": {"cards": [{"title": "Load", "value": "{{load.v}} %"}]}}
        pins = [ruled] * 100
    batch(pins)
PY
  signals_stop
  for round in 1 2; do
    signals_age "$store"
    signals_serve "$store" 1
    read -r rps _ <<<"$(KEY=$key wrk_run "$SIGNALS_BASE/v1/pins" bench/lua/post.lua "$WORK/pin.json")"
    on+=("$rps")
    curl -sf "$SIGNALS_BASE/metrics" >"$WORK/signals_metrics_$round"
    signals_stop
    signals_age "$store"
    signals_serve "$store" 3600
    read -r rps _ <<<"$(KEY=$key wrk_run "$SIGNALS_BASE/v1/pins" bench/lua/post.lua "$WORK/pin.json")"
    off+=("$rps")
    signals_stop
    read -r stale_ms stale_median stale_runs <<<"$(signals_sweep_ms "$WORK/signals_metrics_$round" stale)"
    line "$store.sweep_stale_ms_per_run (round $round, mean of $stale_runs runs, 1,000 lapses in the first; target < 5)" "$stale_ms" 5
    line "$store.sweep_stale_median_run_ms_at_most (round $round; target < 5)" "$stale_median" 5
    line "$store.post_pin_rps_sweeping (round $round, vs a server sweeping once an hour)" "${on[-1]}" "${off[-1]}"
  done
  if [ "$store" = postgres ]; then
    # The database's own time for a check, apart from waiting for a pooled connection
    # behind 32 clients (which the server-side figure above includes): the check that finds
    # nothing due, and the sweep's statement over 500 due pins (rolled back).
    local check_ms sweep_ms now
    now=$(date +%s%3N)
    check_ms=$(psql -Atq "$SIGNALS_DB" -c "EXPLAIN (ANALYZE, FORMAT JSON) SELECT 1 FROM pins WHERE stale_due_at <= $now ORDER BY stale_due_at LIMIT 1" \
      | python3 -c 'import json, sys; print(json.load(sys.stdin)[0]["Execution Time"])')
    signals_age "$store"
    sweep_ms=$(psql -Atq "$SIGNALS_DB" -c "BEGIN" -c "EXPLAIN (ANALYZE, FORMAT JSON) UPDATE pins SET stale_due_at = NULL WHERE id IN (SELECT id FROM pins WHERE stale_due_at <= $now ORDER BY stale_due_at LIMIT 500 FOR UPDATE SKIP LOCKED) RETURNING workspace_id" -c "ROLLBACK" \
      | python3 -c 'import json, sys; print(json.load(sys.stdin)[0]["Execution Time"])')
    line "postgres.sweep_stale_check_db_ms (nothing due, EXPLAIN ANALYZE; target < 5)" "$check_ms" 5
    line "postgres.sweep_stale_500_db_ms (500 due, the sweep's statement, EXPLAIN ANALYZE)" "$sweep_ms" 5
  fi
  signals_serve "$store" 1
  ( v=50; while true; do v=$((145 - v)); curl -sf -X PATCH "${auth[@]}" -d "{\"data\": {\"v\": $v}}" "$SIGNALS_BASE/v1/datasets/$ds" >/dev/null; sleep 1; done ) &
  flipper=$!
  PIDS+=($flipper)
  read -r rps _ <<<"$(KEY=$key wrk_run "$SIGNALS_BASE/v1/pins" bench/lua/post.lua "$WORK/pin.json")"
  kill "$flipper" 2>/dev/null || true
  wait "$flipper" 2>/dev/null || true
  curl -sf "$SIGNALS_BASE/metrics" >"$WORK/signals_metrics_status"
  signals_stop
  read -r status_ms status_median status_runs <<<"$(signals_sweep_ms "$WORK/signals_metrics_status" status)"
  line "$store.sweep_status_ms_per_run (mean of $status_runs runs, 100 statuses changing a second)" "$status_ms" 5
  line "$store.post_pin_rps_status_load (100 statuses changing a second, vs the last sweeping run without)" "$rps" "${on[-1]}"
}
if [ "$ONLY" = signals ]; then
  echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(nproc) cores; ${DUR}s per figure, $CONNS connections"
  for store in ${BENCH_STORES:-sqlite postgres}; do bench_signals "$store"; done
  exit 0
fi

# The HTTP ceiling: a fixed-body axum handler, same profile.
if [ -z "$ONLY" ]; then
  CEIL_PORT=$(free_port)
  "target/$PROFILE/examples/http_ceiling" "127.0.0.1:$CEIL_PORT" & PIDS+=($!)
  wait_up "http://127.0.0.1:$CEIL_PORT"
  read -r CEIL_RPS _ <<<"$(KEY= wrk_run "http://127.0.0.1:$CEIL_PORT/healthz" bench/lua/get.lua)"
fi

# Push latency is measured with the peer's C probe (sse_probe.c: one epoll loop, ~1-2 us a
# delivery, where sse_probe.js spends ~26 us and at 1,000 viewers sets the p99 itself).
PEER=../shared/bench/peer-dashing
gcc -O2 -o "$WORK/sse_probe" "$PEER/sse_probe.c"
# push_probe PORT POST_PATH BODY_TEMPLATE VIEWERS UPDATES [HEADER]...: the probe's JSON line
# (%SEQ% in BODY_TEMPLATE is the update's number; viewers on /v1/events, or /events for
# dashing-js), one update every 100 ms.
push_probe() {
  local port=$1 post=$2 body=$3 k=$4 m=$5 events=/v1/events
  shift 5
  [ "$post" = /widgets/revenue ] && events=/events
  timeout 150 "$WORK/sse_probe" "$port" "$events" "$post" "$body" "$k" "$m" 100 "$@"
}
# p99_if_complete JSON: the probe's p99, or nothing when a delivery was missing.
p99_if_complete() {
  python3 -c 'import json, sys; o = json.loads(sys.argv[1]); print(o["push_p99_ms"] if o["deliveries"] == o["deliveries_expected"] else "")' "$1"
}
PUSH_BODY='{"pin_type":"json","pin_config":{"data":{"bench_seq":%SEQ%}}}'

# The peer, dashing-js: its POST/s (its own run.sh), and its push-to-viewer p99 at 100 and
# 1,000 viewers with the same C probe as ours (a dashing-js this harness starts).
DASHING_RPS="" DASHING_PUSH_100="" DASHING_PUSH_1000="" DASHING_LOADED=""
peer_field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p" <<<"$2" | tail -n 1; }
if [ $SMOKE = 0 ] && { [ -z "$ONLY" ] || [ "$ONLY" = events ]; } && [ -f $PEER/run.sh ]; then
  out=$(bash $PEER/run.sh "$DUR" 2>/dev/null || true)
  DASHING_RPS=$(peer_field post_rps "$out")
  out=$(SSE_VIEWERS=1000 LOADED_VIEWERS=1000 bash $PEER/run.sh "$DUR" 2>/dev/null || true)
  DASHING_LOADED=$(peer_field post_rps_1000v "$out")
  [ -n "$DASHING_LOADED" ] && line "dashing-js.post_rps_1000_viewers (vs its own with none)" "$DASHING_LOADED" "$(peer_field post_rps "$out")"
  # run.sh set the peer up under $PEER_DASHING_DIR (default /tmp/peer-dashing).
  PEER_DIR=${PEER_DASHING_DIR:-/tmp/peer-dashing}
  if [ -f "$PEER_DIR/server.js" ]; then
    DASHING_PORT=$(free_port)
    (cd "$PEER_DIR" && NODE_ENV=production HOST=127.0.0.1 PORT="$DASHING_PORT" \
      DASHING_AUTH_TOKEN="$(cat auth_token)" exec node server.js) >"$WORK/dashing.log" 2>&1 &
    DASHING_PID=$!
    PIDS+=($DASHING_PID)
    for _ in $(seq 1 100); do curl -s -o /dev/null "http://127.0.0.1:$DASHING_PORT/" && break; sleep 0.2; done
    dashing_body="{\"auth_token\":\"$(cat "$PEER_DIR/auth_token")\",\"current\":1,\"bench_seq\":%SEQ%}"
    for k in 100 1000; do
      # dashing-js drops deliveries at 1,000 viewers (0.2-0.4 %): its p99 is then taken over
      # what it delivered, which flatters it, and the shortfall printed beside it.
      out=$(push_probe "$DASHING_PORT" /widgets/revenue "$dashing_body" "$k" 50)
      read -r p99 got expected silent <<<"$(python3 -c 'import json, sys
o = json.loads(sys.argv[1])
print(o["push_p99_ms"], o["deliveries"], o["deliveries_expected"], o["viewers_got_nothing"])' "$out")"
      echo "dashing-js.push_${k}v: p99_ms=$p99 (C probe) delivered=$got/$expected silent_viewers=$silent"
      [ $k = 100 ] && DASHING_PUSH_100=$p99 || DASHING_PUSH_1000=$p99
    done
    kill "$DASHING_PID" 2>/dev/null || true
  fi
fi

# The push floor (bench/push_floor.rs): the same probe against a server that stores and checks
# nothing and writes each frame on every viewer's socket in one loop: the latency the probe
# and the kernel alone give on this machine, at the same viewer counts as ours.
FLOOR_PUSH_100="" FLOOR_PUSH_1000=""
if [ -z "$ONLY" ] || [ "$ONLY" = events ]; then
  FLOOR_PORT=$(free_port)
  "target/$PROFILE/examples/push_floor" "127.0.0.1:$FLOOR_PORT" & PIDS+=($!)
  for _ in $(seq 1 50); do (exec 3<>/dev/tcp/127.0.0.1/$FLOOR_PORT) 2>/dev/null && break; sleep 0.1; done
  floor_viewers=(100 1000) floor_updates=50
  [ $SMOKE = 1 ] && floor_viewers=(5 20) floor_updates=3
  for k in "${floor_viewers[@]}"; do
    p99=$(p99_if_complete "$(push_probe "$FLOOR_PORT" /v1/pins "$PUSH_BODY" "$k" "$floor_updates")")
    echo "push_floor.push_${k}v: p99_ms=$p99"
    [ "$k" = "${floor_viewers[0]}" ] && FLOOR_PUSH_100=$p99 || FLOOR_PUSH_1000=$p99
  done
fi

bench_store() {
  local store=$1 port base env=() pid key rkey lookup ws key_id id
  port=$(free_port)
  base="http://127.0.0.1:$port"
  if [ "$store" = sqlite ]; then
    env=(CORKBOARD_DATA_DIR="$WORK/sqlite")
  else
    local db="corkboard_bench_$$"
    psql -q "$PG_ADMIN/postgres" -c "CREATE DATABASE $db" >/dev/null
    DBS+=("$db")
    env=(DATABASE_URL="$PG_ADMIN/$db")
  fi
  env "${env[@]}" CORKBOARD_LISTEN="127.0.0.1:$port" "$BIN" serve >"$WORK/$store.out" 2>"$WORK/$store.err" &
  pid=$!
  PIDS+=($pid)
  wait_up "$base"
  key=$(env "${env[@]}" "$BIN" keys create --name bench --scopes '*' --tier team)
  # The rendered-list figure's key: a workspace of its own (see bench_rendered).
  rkey=$(env "${env[@]}" "$BIN" keys create --name rendered --scopes '*' --tier team --workspace rendered)
  lookup=${key:4:12}
  sleep 0.5
  line "$store.rss_idle_mib" "$(rss_mib $pid)" 64
  if [ "$ONLY" = rendered ]; then
    fill_store "$store" "$base" "$key"
    bench_rendered "$store" "$base" "$rkey"
    return
  fi
  if [ "$ONLY" = hooks ]; then
    bench_hooks "$store" "$base" "$key"
    return
  fi
  if [ "$ONLY" = writes ]; then
    bench_writes "$store" "$base" "$key"
    return
  fi
  if [ "$ONLY" = updates ]; then
    bench_updates "$store" "$base" "$key"
    return
  fi
  if [ "$ONLY" = webhooks ]; then
    bench_webhooks "$store" "$base" "$key"
    return
  fi

  read -r post_rps post_p99 <<<"$(KEY=$key wrk_run "$base/v1/pins" bench/lua/post.lua "$WORK/pin.json")"
  if [ "$ONLY" = events ]; then
    line "$store.post_pin_rps (no viewer)" "$post_rps" "$post_rps"
    bench_events "$store" "$base" "$key" "$pid" "$post_rps"
    return
  fi
  bench_mcp "$store" "$base" "$key" "$post_rps" "$post_p99"
  [ "$ONLY" = mcp ] && return
  id=$(curl -sf -H "Authorization: Bearer $key" -H 'Content-Type: application/json' -d @"$WORK/pin.json" "$base/v1/pins" \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["data"]["pin_id"])')
  read -r get_rps get_p99 <<<"$(KEY=$key wrk_run "$base/v1/pins/$id" bench/lua/get.lua)"
  read -r batch_rps batch_p99 <<<"$(KEY=$key wrk_run "$base/v1/pins/batch" bench/lua/post.lua "$WORK/batch.json")"

  if [ "$store" = sqlite ]; then
    local ceiling
    ws=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT workspace_id FROM api_keys WHERE lookup = ?", (sys.argv[2],)).fetchone()[0])' "$WORK/sqlite/corkboard.db" "$lookup")
    # A copy of the store, so the loop runs on the same schema and indexes.
    python3 -c 'import sqlite3, sys; sqlite3.connect(sys.argv[1]).backup(sqlite3.connect(sys.argv[2]))' "$WORK/sqlite/corkboard.db" "$WORK/ceiling.db"
    ceiling=$(python3 bench/sqlite_ceiling.py "$WORK/ceiling.db" "$ws" "$DUR")
    ceiling_batch=$(python3 bench/sqlite_ceiling.py "$WORK/ceiling.db" "$ws" "$DUR" 100)
    line "sqlite.post_pin_rps (vs the same statements in a SQLite loop)" "$post_rps" "$ceiling"
    line "sqlite.batch100_rps (vs the same statements in a SQLite loop)" "$batch_rps" "$ceiling_batch"
    line "sqlite.batch100_cost_in_pins of the SQLite loop itself" "$(ratio "$ceiling" "$ceiling_batch")" 5
  else
    local url="$PG_ADMIN/corkboard_bench_$$" create_tps read_tps batch_tps vars pin
    read -r key_id ws <<<"$(psql -tA -F ' ' "$url" -c "SELECT id, workspace_id FROM api_keys WHERE lookup = '$lookup'")"
    # The values the service binds (sql/*.sql says which statement takes which).
    vars=(-D key="$key_id" -D ws="$ws" -D now="$(date +%s%3N)")
    pin=(-D pin_type=stat-cards -D layout=1x1 -D tags='{}'
      -D config='{"cards":[{"change":"+4%","title":"Revenue","trend":"up","value":"$1.2M"}]}')
    create_tps=$(pg_tps bench/sql/create.sql "$url" "${vars[@]}" "${pin[@]}")
    read_tps=$(pg_tps bench/sql/read.sql "$url" "${vars[@]}" -D id="$id")
    batch_tps=$(pg_tps bench/sql/batch.sql "$url" "${vars[@]}" "${pin[@]}")
    line "postgres.post_pin_rps (vs pgbench of the same statements)" "$post_rps" "$create_tps"
    line "postgres.get_pin_rps (vs pgbench of the same statements)" "$get_rps" "$read_tps"
    line "postgres.batch100_rps (vs pgbench of the same statements)" "$batch_rps" "$batch_tps"
    line "postgres.batch100_cost_in_pins of pgbench itself" "$(ratio "$create_tps" "$batch_tps")" 5
  fi
  [ -n "$DASHING_RPS" ] && line "$store.post_pin_rps (vs dashing-js POST)" "$post_rps" "$DASHING_RPS"
  line "$store.get_pin_rps (vs the HTTP ceiling)" "$get_rps" "$CEIL_RPS"
  echo "$store.post_pin_p99_ms: ours=$post_p99 get_pin_p99_ms=$get_p99 batch100_p99_ms=$batch_p99"
  line "$store.batch100_cost_in_pins (target < 5)" "$(ratio "$post_rps" "$batch_rps")" 5
  bench_hooks "$store" "$base" "$key"
  bench_writes "$store" "$base" "$key"
  bench_updates "$store" "$base" "$key"
  bench_webhooks "$store" "$base" "$key"

  fill_store "$store" "$base" "$key"
  read -r list_rps list_p99 <<<"$(KEY=$key wrk_run "$base/v1/pins?limit=200" bench/lua/get.lua)"
  line "$store.list200_p99_ms (target < 20, $LIST_PINS+ pins stored)" "$list_p99" 20
  if [ "$store" = postgres ]; then
    local list_tps list_pg_p99
    read -r list_tps list_pg_p99 <<<"$(pg_list bench/sql/list.sql "$PG_ADMIN/corkboard_bench_$$" \
      -D key="$key_id" -D ws="$ws" -D now="$(date +%s%3N)")"
    line "postgres.list200_rps (vs pgbench of the same statements)" "$list_rps" "$list_tps"
    line "postgres.list200_p99_ms (vs pgbench of the same statements)" "$list_p99" "$list_pg_p99"
  fi
  line "$store.rss_after_mib (target < 128)" "$(rss_mib $pid)" 128
  bench_rendered "$store" "$base" "$rkey"
  bench_events "$store" "$base" "$key" "$pid" "$post_rps"
}

# MCP: tools/call create_pin (JSON-RPC over POST /mcp, the headers a Streamable HTTP client
# sends, bench/lua/mcp.lua) against REST POST /v1/pins measured just before on the same
# server, same pin, same key. One call first checks that the tool answers with the pin (the
# REST read of its id); during the run any tool error fails the figure (see wrk_run).
bench_mcp() {
  local store=$1 base=$2 key=$3 post_rps=$4 post_p99=$5 id mcp_rps mcp_p99
  id=$(curl -sf -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2025-06-18' \
    -d @"$WORK/mcp_create_pin.json" "$base/mcp" \
    | python3 -c 'import json, sys; r = json.load(sys.stdin)["result"]; assert not r["isError"], r; print(r["structuredContent"]["pin_id"])') \
    || { echo "$store: tools/call create_pin failed" >&2; exit 1; }
  curl -sf -H "Authorization: Bearer $key" "$base/v1/pins/$id" >/dev/null \
    || { echo "$store: the pin tools/call create_pin made is not readable over REST" >&2; exit 1; }
  read -r mcp_rps mcp_p99 <<<"$(KEY=$key wrk_run "$base/mcp" bench/lua/mcp.lua "$WORK/mcp_create_pin.json")"
  line "$store.mcp_create_pin_rps (vs REST POST /v1/pins, target >= 0.7x)" "$mcp_rps" "$post_rps"
  echo "$store.mcp_create_pin_p99_ms: ours=$mcp_p99 rest_post_pin_p99_ms=$post_p99"
}

# Webhook fan-out (bench/webhook_fanout.rs): N events (pins created in batches while 10
# webhooks are disabled) delivered to 10 webhooks once they are enabled, counted by a
# receiver on 127.0.0.1, against as many plain POSTs of a delivered body by reqwest (10
# senders at once, each in order, as each webhook delivers; in a process of their own, as
# the server is) to the same receiver, in 5 rounds alternating the two (the round of the
# median ratio is the figure), and beside the same POSTs sent from the receiver's process.
bench_webhooks() {
  local store=$1 base=$2 key=$3 events=3000 rounds=5 out final ours baseline
  [ $SMOKE = 1 ] && events=50 rounds=1
  out=$(timeout 600 "target/$PROFILE/examples/webhook_fanout" "$base" "$key" "$events" 10 "$rounds") \
    || { echo "$store: webhook fan-out failed: $out" >&2; exit 1; }
  sed -n "s/^round \([0-9]*\): /$store.webhook_round_\1: /p" <<<"$out"
  final=$(grep '^delivered_per_s=' <<<"$out")
  ours=$(sed -n 's/.*delivered_per_s=\([0-9.]*\).*/\1/p' <<<"$final")
  baseline=$(sed -n 's/.*baseline_per_s=\([0-9.]*\).*/\1/p' <<<"$final")
  line "$store.webhook_deliveries_per_s ($events events x 10 webhooks, median of $rounds rounds, vs plain reqwest POSTs from a process of their own, target >= 0.8)" "$ours" "$baseline"
  line "$store.webhook_deliveries_per_s (vs the same POSTs sent from the receiver's own process)" "$ours" \
    "$(sed -n 's/^same_process_posts_per_s=\([0-9.]*\).*/\1/p' <<<"$out")"
}

# Inbound hooks: POST /in/{token} of a small JSON to a `replace` hook (no signature, no
# credential) against PATCH /v1/datasets/{id} with the same JSON as `data`, same run, same
# server. One call of each first checks that it writes what it says.
bench_hooks() {
  local store=$1 base=$2 key=$3 auth ds url patch_rps patch_p99 hook_rps hook_p99
  auth=(-H "Authorization: Bearer $key" -H 'Content-Type: application/json')
  ds=$(curl -sf "${auth[@]}" -d @"$WORK/hook_dataset.json" "$base/v1/datasets" \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["data"]["id"])') \
    || { echo "$store: creating the PATCHed dataset failed" >&2; exit 1; }
  url=$(curl -sf "${auth[@]}" -d @"$WORK/hook.json" "$base/v1/hooks" \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["data"]["url"])') \
    || { echo "$store: creating the hook failed" >&2; exit 1; }
  curl -sf -X PATCH "${auth[@]}" -d @"$WORK/hook_patch.json" "$base/v1/datasets/$ds" >/dev/null \
    || { echo "$store: PATCH /v1/datasets/{id} failed" >&2; exit 1; }
  curl -sf -H 'Content-Type: application/json' -d @"$WORK/hook_push.json" "$url" \
    | python3 -c 'import json, sys; assert json.load(sys.stdin)["data"]["version"] == 1' \
    || { echo "$store: POST /in/{token} did not create its dataset" >&2; exit 1; }
  read -r patch_rps patch_p99 <<<"$(METHOD=PATCH KEY=$key wrk_run "$base/v1/datasets/$ds" bench/lua/post.lua "$WORK/hook_patch.json")"
  read -r hook_rps hook_p99 <<<"$(KEY= wrk_run "$url" bench/lua/post.lua "$WORK/hook_push.json")"
  line "$store.hook_ingest_rps (vs PATCH /v1/datasets/{id} of the same JSON, target >= 0.8x)" "$hook_rps" "$patch_rps"
  echo "$store.hook_ingest_p99_ms: ours=$hook_p99 patch_dataset_p99_ms=$patch_p99"
}

# Automation writes (CONTRACT.md 14), each beside its baseline on the same server and key,
# the baseline measured just before:
# - upsert_unchanged_rps: PUT /v1/pins/by-key/{key} of the body the pin already has (each call
#   answers changed:false and writes nothing: the pin is still at version 1 afterwards),
#   against GET /v1/pins/{id} of the same pin;
# - upsert_changed_rps: PUT by key to 200 keyed stat-cards pins, each request to one picked at
#   random, with a card value no other request sends (lua/spread.lua), against PATCH
#   /v1/pins/{id} making the same change to the same 200 pins;
# - append_rps: POST /v1/pins/{id}/append of one point (max_points 100) to 200 line charts
#   holding 100 points, against PATCH of the same pins with the whole configuration moved on
#   by one point (the same size stored).
# After each run of the last two the pins must have gained at least one version per answer
# wrk counted: every call wrote.
bench_writes() {
  local store=$1 base=$2 key=$3 id before after
  local get_rps get_p99 same_rps same_p99 patch_rps patch_p99 put_rps put_p99
  local chart_rps chart_p99 append_rps append_p99 patched_size appended_size
  python3 - "$WORK" "$base" "$key" <<'PY' || { echo "$store: creating the writes' pins failed" >&2; exit 1; }
import http.client, json, sys, urllib.parse
work, base, key = sys.argv[1:4]
url = urllib.parse.urlparse(base)
conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}

def call(method, path, body):
    conn.request(method, path, json.dumps(body), headers)
    res = conn.getresponse()
    answer = res.read()
    assert res.status in (200, 201), (method, path, res.status, answer[:500])
    return json.loads(answer)["data"]

pin = json.load(open(f"{work}/pin.json"))
first = call("PUT", "/v1/pins/by-key/writes-same", pin)
again = call("PUT", "/v1/pins/by-key/writes-same", pin)
assert first["created"] and not again["created"] and not again["changed"], (first, again)
assert again["version"] == 1, again
open(f"{work}/writes_same.id", "w").write(first["pin_id"])
card = json.loads(open(f"{work}/writes_put.json").read().replace("@U@", "first"))
chart = json.load(open(f"{work}/writes_chart.json"))
for name, body in (("card", card), ("line", chart)):
    ids = []
    for start in (0, 100):
        pins = [dict(body, key=f"writes-{name}-{i}") for i in range(start, start + 100)]
        done = call("POST", "/v1/pins/batch/upsert", {"pins": pins})
        assert all(d["created"] for d in done), done
        ids += [d["id"] for d in done]
    with open(f"{work}/writes_{name}.keys", "w") as f:
        f.writelines(f"/v1/pins/by-key/writes-{name}-{i}\n" for i in range(200))
    with open(f"{work}/writes_{name}.ids", "w") as f:
        f.writelines(f"/v1/pins/{i}\n" for i in ids)
    with open(f"{work}/writes_{name}.appends", "w") as f:
        f.writelines(f"/v1/pins/{i}/append\n" for i in ids)
PY
  id=$(cat "$WORK/writes_same.id")
  read -r get_rps get_p99 <<<"$(KEY=$key wrk_run "$base/v1/pins/$id" bench/lua/get.lua)"
  read -r same_rps same_p99 <<<"$(METHOD=PUT KEY=$key wrk_run "$base/v1/pins/by-key/writes-same" bench/lua/post.lua "$WORK/pin.json")"
  curl -sf -H "Authorization: Bearer $key" "$base/v1/pins/$id" \
    | python3 -c 'import json, sys; v = json.load(sys.stdin)["data"]["version"]; assert v == 1, v' \
    || { echo "$store: an unchanged upsert wrote a version" >&2; exit 1; }
  line "$store.upsert_unchanged_rps (vs GET /v1/pins/{id} of the same pin, target >= 0.8x)" "$same_rps" "$get_rps"
  echo "$store.upsert_unchanged_p99_ms: ours=$same_p99 get_pin_p99_ms=$get_p99"

  read -r before _ <<<"$(writes_state "$base" "$key" card)"
  read -r patch_rps patch_p99 <<<"$(PATHS_FILE=$WORK/writes_card.ids METHOD=PATCH KEY=$key wrk_run "$base" bench/lua/spread.lua "$WORK/writes_patch.json")"
  read -r after _ <<<"$(writes_state "$base" "$key" card)"
  writes_wrote "$store" "PATCH of stat cards" "$before" "$after"
  read -r put_rps put_p99 <<<"$(PATHS_FILE=$WORK/writes_card.keys METHOD=PUT KEY=$key wrk_run "$base" bench/lua/spread.lua "$WORK/writes_put.json")"
  read -r before _ <<<"$(writes_state "$base" "$key" card)"
  writes_wrote "$store" "PUT by key of stat cards" "$after" "$before"
  line "$store.upsert_changed_rps (vs PATCH /v1/pins/{id} of the same 200 pins, target >= 0.8x)" "$put_rps" "$patch_rps"
  echo "$store.upsert_changed_p99_ms: ours=$put_p99 patch_pin_p99_ms=$patch_p99"

  read -r before _ <<<"$(writes_state "$base" "$key" line)"
  read -r chart_rps chart_p99 <<<"$(PATHS_FILE=$WORK/writes_line.ids METHOD=PATCH KEY=$key wrk_run "$base" bench/lua/spread.lua "$WORK/writes_chart_patch.json")"
  read -r after patched_size <<<"$(writes_state "$base" "$key" line)"
  writes_wrote "$store" "PATCH of line charts" "$before" "$after"
  read -r append_rps append_p99 <<<"$(PATHS_FILE=$WORK/writes_line.appends KEY=$key wrk_run "$base" bench/lua/spread.lua "$WORK/writes_append.json")"
  read -r before appended_size <<<"$(writes_state "$base" "$key" line)"
  writes_wrote "$store" "appends to line charts" "$after" "$before"
  line "$store.append_rps (vs PATCH /v1/pins/{id} of the same 200 line charts, whole config, target >= 0.8x)" "$append_rps" "$chart_rps"
  echo "$store.append_p99_ms: ours=$append_p99 patch_pin_p99_ms=$chart_p99 config_bytes: appended=$appended_size patched=$patched_size"
}

# Updates (issue 35): 32 clients PATCH /v1/pins/{id} with a stat card whose value each request
# changes (lua/spread.lua, the body of bench_writes' PATCH), each request to one of 200
# stat-cards pins of a workspace of their own picked at random, against POST /v1/pins measured
# just before on the same server; then the same 200 pins' load over 8 workspaces (25 pins of
# each, with its workspace's key) against the one-workspace figure: the issue's "workspaces
# never take turns", pins for pins; then 8 workspaces of 200 pins each (every request to a pin
# picked at random among the 1,600), against the one-workspace figure and against one
# workspace holding as many pins (1,600, a ninth workspace): more pins mean more pages written
# a commit, which that last pair tells apart from taking turns; on PostgreSQL also against pgbench of sql/update.sql (one update's
# statements, each update committed alone) on the first workspace's 200 pins. After each PATCH
# run the pins must have gained at least one version per answer wrk counted: every call wrote.
# Uses bench_store's `env` (the store's settings) to make the workspaces' keys with the CLI.
bench_updates() {
  local store=$1 base=$2 key=$3 w post_rps post_p99 one_rps one_p99 shared_rps shared_p99 eight_rps eight_p99 same_rps same_p99 before after
  : >"$WORK/updates.keys"
  for w in $(seq 0 7) all; do
    env "${env[@]}" "$BIN" keys create --name updates --scopes '*' --tier team --workspace "updates-$w" >>"$WORK/updates.keys"
  done
  python3 - "$WORK" "$base" <<'PY' || { echo "$store: creating the updates' pins failed" >&2; exit 1; }
import http.client, json, sys, urllib.parse
work, base = sys.argv[1:3]
url = urllib.parse.urlparse(base)
conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
keys = open(f"{work}/updates.keys").read().split()
assert len(keys) == 9, keys
pin = json.load(open(f"{work}/pin.json"))
one, all_, same, shared = [], [], [], []
for w, key in enumerate(keys):
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    for _ in range(16 if w == 8 else 2):
        conn.request("POST", "/v1/pins/batch", json.dumps({"pins": [pin] * 100}), headers)
        res = conn.getresponse()
        answer = res.read()
        assert res.status == 200, (res.status, answer[:500])
        lines = [f"/v1/pins/{item['pin_id']} {key}\n" for item in json.loads(answer)["data"]]
        if w == 8:
            same += lines
            continue
        all_ += lines
        if w == 0:
            one += lines
        if len(lines) == 100 and len(shared) < 25 * (w + 1):
            shared += lines[:25]
open(f"{work}/updates_1.paths", "w").writelines(one)
open(f"{work}/updates_8.paths", "w").writelines(all_)
open(f"{work}/updates_same.paths", "w").writelines(same)
open(f"{work}/updates_shared.paths", "w").writelines(shared)
PY
  fsync_probe "$DUR"
  read -r post_rps post_p99 <<<"$(KEY=$key wrk_run "$base/v1/pins" bench/lua/post.lua "$WORK/pin.json")"
  before=$(updates_versions "$base" 0 1)
  read -r one_rps one_p99 <<<"$(PATHS_FILE=$WORK/updates_1.paths METHOD=PATCH KEY= wrk_run "$base" bench/lua/spread.lua "$WORK/writes_patch.json")"
  after=$(updates_versions "$base" 0 1)
  writes_wrote "$store" "PATCH in one workspace" "$before" "$after"
  before=$(updates_versions "$base" 0 8)
  read -r shared_rps shared_p99 <<<"$(PATHS_FILE=$WORK/updates_shared.paths METHOD=PATCH KEY= wrk_run "$base" bench/lua/spread.lua "$WORK/writes_patch.json")"
  after=$(updates_versions "$base" 0 8)
  writes_wrote "$store" "PATCH of 200 pins in 8 workspaces" "$before" "$after"
  before=$after
  read -r eight_rps eight_p99 <<<"$(PATHS_FILE=$WORK/updates_8.paths METHOD=PATCH KEY= wrk_run "$base" bench/lua/spread.lua "$WORK/writes_patch.json")"
  after=$(updates_versions "$base" 0 8)
  writes_wrote "$store" "PATCH in 8 workspaces" "$before" "$after"
  before=$(updates_versions "$base" 8 9)
  read -r same_rps same_p99 <<<"$(PATHS_FILE=$WORK/updates_same.paths METHOD=PATCH KEY= wrk_run "$base" bench/lua/spread.lua "$WORK/writes_patch.json")"
  after=$(updates_versions "$base" 8 9)
  writes_wrote "$store" "PATCH in one workspace of 1,600 pins" "$before" "$after"
  line "$store.patch_pin_rps (vs POST /v1/pins, target >= 0.8x)" "$one_rps" "$post_rps"
  line "$store.patch_pin_p99_ms (target < 20)" "$one_p99" 20
  line "$store.patch_pin_rps_8_workspaces_200_pins (the same 200 pins' load over 8 workspaces, 25 each, vs one workspace: workspaces never take turns, target >= 1x)" "$shared_rps" "$one_rps"
  line "$store.patch_pin_p99_ms_8_workspaces_200_pins (target < 20)" "$shared_p99" 20
  line "$store.patch_pin_rps_8_workspaces (200 pins each, 1,600 in all, vs one workspace of 200)" "$eight_rps" "$one_rps"
  line "$store.patch_pin_p99_ms_8_workspaces (200 pins each, target < 20)" "$eight_p99" 20
  line "$store.patch_pin_rps_8_workspaces (vs one workspace of as many pins, 1,600: workspaces never take turns, target >= 1x)" "$eight_rps" "$same_rps"
  echo "$store.patch_pin_p99_ms_1600_pins_one_workspace: ours=$same_p99"
  echo "$store.post_pin_p99_ms: ours=$post_p99 (beside the updates)"
  if [ "$store" = postgres ]; then
    local url="$PG_ADMIN/corkboard_bench_$$" first key_id ws id data config update_tps floor_tps floor_p99
    # The floor of any durable write's p99 here: pgbench of the smallest one (sql/commit_floor.sql)
    # at the same 32 clients, in a database of its own, just after our PATCH runs.
    psql -q "$PG_ADMIN/postgres" -c "CREATE DATABASE corkboard_floor_$$" >/dev/null
    DBS+=("corkboard_floor_$$")
    psql -q "$PG_ADMIN/corkboard_floor_$$" -c "CREATE TABLE commit_floor (id int PRIMARY KEY, n int8 NOT NULL DEFAULT 0); INSERT INTO commit_floor (id) SELECT generate_series(1, 200)" >/dev/null
    read -r floor_tps floor_p99 <<<"$(pg_list bench/sql/commit_floor.sql "$PG_ADMIN/corkboard_floor_$$")"
    echo "postgres.commit_floor: tps=$floor_tps p99_ms=$floor_p99 (pgbench of sql/commit_floor.sql, 32 clients: the p99 any durable write can show on this disk)"
    line "postgres.patch_pin_p99_ms (vs the smallest durable commit's p99, pgbench of sql/commit_floor.sql)" "$one_p99" "$floor_p99"
    first=$(head -n 1 "$WORK/updates.keys")
    read -r key_id ws <<<"$(psql -tA -F ' ' "$url" -c "SELECT id, workspace_id FROM api_keys WHERE lookup = '${first:4:12}'")"
    id=$(head -n 1 "$WORK/updates_1.paths" | cut -d' ' -f1)
    # The event's data: a pin record as GET returns it; the new configuration: the PATCH's.
    data=$(curl -sf -H "Authorization: Bearer $first" "$base$id" | python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)["data"], separators=(",", ":")))')
    config=$(python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))["pin_config"], separators=(",", ":")).replace("@U@", "00000.0.000000"))' "$WORK/writes_patch.json")
    before=$(updates_versions "$base" 0 1)
    update_tps=$(PGOPTIONS="-c enable_seqscan=off -c plan_cache_mode=force_generic_plan" pg_tps bench/sql/update.sql "$url" -D key="$key_id" -D ws="$ws" \
      -D now="$(date +%s%3N)" -D config="$config" -D data="$data")
    after=$(updates_versions "$base" 0 1)
    # pgbench's updates that found their pin moved on (two clients on one pin) wrote nothing.
    line "postgres.pgbench_update_versions_written (vs its transactions)" "$((after - before))" \
      "$(python3 -c "print(round($update_tps * $DUR))")"
    line "postgres.patch_pin_rps (vs pgbench of the same statements, target >= 0.8x)" "$one_rps" "$update_tps"
    line "postgres.patch_pin_rps_8_workspaces (vs pgbench of one workspace's)" "$eight_rps" "$update_tps"
  fi
}

# updates_versions BASE FROM TO: the sum of the versions of the pins of bench_updates'
# workspaces FROM to TO - 1 (fails unless each holds exactly its pins: 200, 1,600 the ninth).
updates_versions() {
  python3 - "$WORK" "$@" <<'PY'
import http.client, json, sys, urllib.parse
work, base, first, last = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
url = urllib.parse.urlparse(base)
conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
versions = 0
for w, key in enumerate(open(f"{work}/updates.keys").read().split()[first:last], first):
    pins, cursor = 0, ""
    while True:
        conn.request("GET", f"/v1/pins?limit=200{cursor}", headers={"Authorization": f"Bearer {key}"})
        res = conn.getresponse()
        answer = json.loads(res.read())
        assert res.status == 200, res.status
        pins += len(answer["data"])
        versions += sum(pin["version"] for pin in answer["data"])
        if not answer["pagination"]["has_more"]:
            break
        cursor = "&cursor=" + urllib.parse.quote(answer["pagination"]["next_cursor"])
    assert pins == (1600 if w == 8 else 200), (w, pins)
print(versions)
PY
}

# writes_state BASE KEY NAME -> "versions bytes": the sum of the versions of the pins keyed
# writes-NAME-0..199 and the largest of their configurations in bytes of compact JSON; fails
# unless each of them is there and each line chart holds 100 points.
writes_state() {
  python3 - "$@" <<'PY'
import http.client, json, sys, urllib.parse
base, key, name = sys.argv[1:4]
url = urllib.parse.urlparse(base)
conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
versions, size = 0, 0
for start in (0, 100):
    keys = "&".join(f"key=writes-{name}-{i}" for i in range(start, start + 100))
    conn.request("GET", f"/v1/pins?limit=100&{keys}", headers={"Authorization": f"Bearer {key}"})
    res = conn.getresponse()
    pins = json.loads(res.read())["data"]
    assert res.status == 200 and len(pins) == 100, (res.status, len(pins))
    for pin in pins:
        versions += pin["version"]
        assert pin["pin_type"] != "line-chart" or len(pin["pin_config"]["labels"]) == 100, pin
        size = max(size, len(json.dumps(pin["pin_config"], separators=(",", ":"))))
print(versions, size)
PY
}

# writes_wrote STORE WHAT BEFORE AFTER: fails unless the versions gained (AFTER - BEFORE)
# are at least the answers of the last wrk run (its warm-up wrote more).
writes_wrote() {
  local answers
  answers=$(cat "$WORK/requests")
  is_number "$3" && is_number "$4" || { echo "$1: $2: the pins' versions could not be read" >&2; exit 1; }
  [ $(($4 - $3)) -ge "$answers" ] \
    || { echo "$1: $2: $answers answers but the pins gained $(($4 - $3)) versions" >&2; exit 1; }
}

# fill_store STORE BASE KEY: the list figure's $LIST_PINS pins (tagged bench).
fill_store() {
  python3 bench/fill.py "$2" "$3" "$LIST_PINS"
  if [ "$1" = postgres ]; then
    # Statistics as autovacuum has them within a minute of a bulk load: with the empty
    # table's, the planner sorts all of the workspace's pins for every page.
    psql -q "$PG_ADMIN/corkboard_bench_$$" -c "ANALYZE pins"
  fi
}

# Templates: a dataset `sales` and 200 stat-cards pins tagged `rendered`, each naming two of
# its variables, stored beside the list figure's pins; their list (?tag=rendered&limit=200)
# with ?render=true against the same list unrendered, p99 and pages/s. KEY is of a workspace
# holding only these pins: in the list figure's workspace a tagged page of 200 scans every
# other pin of the workspace for a 201st (has_more), hundreds of thousands after the batch
# figure, and that scan, not rendering, would be what both sides measure.
bench_rendered() {
  local store=$1 base=$2 key=$3 list="$2/v1/pins?limit=200&tag=rendered" auth
  local rend_rps rend_p99 plain_rps plain_p99
  auth=(-H "Authorization: Bearer $key" -H 'Content-Type: application/json')
  # Retried: on PostgreSQL a connection left idle in a transaction after the list figure's
  # load has been seen to stall a key's requests for up to idle_in_transaction_session_timeout
  # (see the closing notes; under investigation), and this step must not fail on that.
  curl -sf --retry 5 --retry-delay 2 --retry-all-errors "${auth[@]}" -d @"$WORK/dataset.json" \
    "$base/v1/datasets" >/dev/null \
    || { echo "$store: creating the dataset failed" >&2; exit 1; }
  for _ in 1 2; do
    curl -sf "${auth[@]}" -d @"$WORK/rendered_batch.json" "$base/v1/pins/batch" >/dev/null \
      || { echo "$store: creating the rendered pins failed" >&2; exit 1; }
  done
  # The page is what the figure claims: 200 pins, their variables filled in only when rendered.
  curl -sf "${auth[@]}" "$list&render=true" >"$WORK/rendered.json"
  curl -sf "${auth[@]}" "$list" >"$WORK/unrendered.json"
  python3 - "$WORK/rendered.json" "$WORK/unrendered.json" <<'PY' || { echo "$store: the rendered list is not as expected" >&2; exit 1; }
import json, sys
rendered, plain = (json.load(open(f))["data"] for f in sys.argv[1:])
assert len(rendered) == len(plain) == 200, (len(rendered), len(plain))
assert all(p["pin_config"]["cards"][0]["title"] == "Revenue EU" and p["pin_config"]["cards"][0]["value"] == "1250" for p in rendered)
assert all(p["pin_config"]["cards"][0]["title"] == "Revenue {{sales.region}}" for p in plain)
PY
  read -r plain_rps plain_p99 <<<"$(KEY=$key wrk_run "$list" bench/lua/get.lua)"
  read -r rend_rps rend_p99 <<<"$(KEY=$key wrk_run "$list&render=true" bench/lua/get.lua)"
  # No request answered within the run (wrk leaves its p99 at 0): no figure.
  [ "$plain_p99" = 0.000 ] && plain_p99=""
  [ "$rend_p99" = 0.000 ] && rend_p99=""
  line "$store.list200_rendered_p99_ms (vs the same list unrendered, target < 2x)" "$rend_p99" "$plain_p99"
  line "$store.list200_rendered_rps (vs the same list unrendered)" "$rend_rps" "$plain_rps"
}

# fsync_probe SECS [GAP_MS]: the disk alone, 8 KiB written and fdatasync'd in the bench's
# directory (SQLite's) for SECS, back to back or GAP_MS apart (an idle disk between syncs
# stalls more often here than a busy one). Every durable write waits for such a sync, so a
# stall here stalls every writer at once, whatever the server; one stall among the push
# figure's 50 updates is a p99 of 1,000 viewers.
fsync_probe() {
  python3 - "$WORK/fsync_probe" "$1" "${2:-0}" <<'PY'
import os, sys, time
path, secs, gap = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]) / 1000
fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
times, end = [], time.monotonic() + secs
while time.monotonic() < end:
    start = time.perf_counter()
    os.pwrite(fd, b"x" * 8192, (len(times) % 128) * 8192)
    os.fdatasync(fd)
    times.append((time.perf_counter() - start) * 1000)
    time.sleep(gap)
os.close(fd)
os.unlink(path)
times.sort()
print(f"disk.fsync_8k_ms: p50={times[len(times) // 2]:.2f} p99={times[int(len(times) * 0.99)]:.2f} "
      f"max={times[-1]:.2f} over_20ms={sum(t > 20 for t in times)} of {len(times)} "
      f"({f'{gap * 1000:g} ms apart' if gap else 'back to back'})")
PY
}

# Live events: the peer's probe (K viewers on /v1/events, M json pins posted one every
# 100 ms, each carrying bench_seq) at 100 and 1,000 viewers; POST/s while 1,000 viewers
# drain the stream, against POST/s with none (measured above); RSS with 1,000 viewers.
bench_events() {
  local store=$1 base=$2 key=$3 pid=$4 post_rps=$5 probe=$PEER/sse_probe.js out drain
  local viewers=(100 1000) updates=50
  [ $SMOKE = 1 ] && viewers=(5 20) updates=3
  # The disk over as long as the 50 updates take, syncs 10 ms apart: a commit that waits out a
  # stall delays its event for every viewer.
  [ $SMOKE = 1 ] || fsync_probe 5 10
  for k in "${viewers[@]}"; do
    push_probe "${base##*:}" /v1/pins "$PUSH_BODY" "$k" "$updates" "Authorization: Bearer $key" >"$WORK/probe.json"
    read -r p50 p99 got expected silent <<<"$(python3 -c 'import json, sys
o = json.load(open(sys.argv[1]))
print(o["push_p50_ms"], o["push_p99_ms"], o["deliveries"], o["deliveries_expected"], o["viewers_got_nothing"])' "$WORK/probe.json")"
    echo "$store.push_${k}v: p50_ms=$p50 p99_ms=$p99 delivered=$got/$expected silent_viewers=$silent"
    line "$store.push_${k}v_delivered (every event to every viewer)" "$got" "$expected"
    [ "$silent" = 0 ] || { echo "$store: $silent viewers got nothing" >&2; exit 1; }
    [ $k = 1000 ] && line "$store.push_p99_ms_1000v (target <= 15)" "$p99" 15
    local peer_p99=$DASHING_PUSH_100
    [ $k = 1000 ] && peer_p99=$DASHING_PUSH_1000
    [ -n "$peer_p99" ] && line "$store.push_p99_ms_${k}v (vs dashing-js, target <= 0.4 at 1000)" "$p99" "$peer_p99"
    local floor_p99=$FLOOR_PUSH_100
    [ $k = "${viewers[-1]}" ] && floor_p99=$FLOOR_PUSH_1000
    line "$store.push_p99_ms_${k}v (vs the push floor: probe and kernel alone)" "$p99" "$floor_p99"
  done
  k=${viewers[-1]}
  timeout $((DUR + 60)) node $probe --mode drain --url "$base" --events /v1/events \
    --viewer-header "Authorization: Bearer $key" --viewers "$k" --duration-s $((DUR + 30)) \
    >"$WORK/drain.json" 2>/dev/null &
  drain=$!
  PIDS+=($drain)
  for _ in $(seq 1 100); do
    [ "$(ss -Htn state established "( sport = :${base##*:} )" | wc -l)" -ge "$k" ] && break
    sleep 0.1
  done
  read -r loaded_rps _ <<<"$(KEY=$key wrk_run "$base/v1/pins" bench/lua/post.lua "$WORK/pin.json")"
  line "$store.post_pin_rps_${k}_viewers (vs none, target >= 0.8)" "$loaded_rps" "$post_rps"
  [ -n "$DASHING_LOADED" ] && line "$store.post_pin_rps_${k}_viewers (vs dashing-js with ${k} viewers)" "$loaded_rps" "$DASHING_LOADED"
  line "$store.rss_${k}_viewers_mib (target < 128)" "$(rss_mib $pid)" 128
  # Viewers the server ended for falling a buffer behind (the drain does not resume).
  local open
  open=$(ss -Htn state established "( sport = :${base##*:} )" | wc -l)
  kill -TERM $drain 2>/dev/null || true
  wait $drain 2>/dev/null || true
  echo "$store.drain_${k}_viewers: still_open=$open of $k, bytes_read=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["bytes_read"])' "$WORK/drain.json" 2>/dev/null || echo n/a)"
}

echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(nproc) cores; ${DUR}s per figure, $CONNS connections"
for store in ${BENCH_STORES:-sqlite postgres}; do bench_store "$store"; done
if [ -z "$ONLY" ]; then for store in ${BENCH_STORES:-sqlite postgres}; do bench_signals "$store"; done; fi
# Share pages in Chromium: page bytes of a 20-pin board, commit-to-DOM latency (bench/browser.py).
if [ -z "$ONLY" ]; then tests/browser/ensure.sh && python3 bench/browser.py "$BIN" $([ $SMOKE = 1 ] && echo --smoke); fi
