#!/usr/bin/env bash
# Two builds of the service side by side on one store kind, each figure measured in turn on
# each (A B, then B A, ...), so load drifting on a shared machine falls on both.
# usage: bench/compare.sh BIN_A BIN_B sqlite|postgres [ROUNDS]   (two release binaries, e.g. built at
# two commits; prints "round side figure value" lines, side A or B; push with the Node probe)
set -euo pipefail
cd "$(dirname "$0")/.."
A=$1 B=$2 STORE=$3 ROUNDS=${4:-2}
DUR=10 WARM=3 LIST_PINS=100000 CONNS=32
PG_ADMIN=postgres://postgres@127.0.0.1:5432
PEER=../shared/bench/peer-dashing
WORK=$(mktemp -d)
PIDS=() DBS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for db in "${DBS[@]}"; do psql -q "$PG_ADMIN/postgres" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
export CORKBOARD_RATE_LIMITS__TIERS__TEAM__PER_MINUTE=2000000000
export CORKBOARD_RATE_LIMITS__TIERS__TEAM__PER_HOUR=2000000000
export CORKBOARD_RATE_LIMITS__WRITE_BUCKET__CAPACITY=2000000000
export RUST_LOG=warn CORKBOARD_MAX_CONNECTIONS=$CONNS
export CORKBOARD_EVENTS__MAX_STREAMS_PER_KEY=5000
unset DATABASE_URL

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_up() { for _ in $(seq 1 600); do curl -sf "$1/healthz" >/dev/null && return; sleep 0.1; done; echo "server did not start" >&2; tail -n 5 "$WORK"/*.err >&2; exit 1; }
wrk_run() {
  local url=$1 script=$2 body=${3:-/dev/null} out
  BODY_FILE=$body wrk -t2 -c$CONNS -d${WARM}s -s "$script" "$url" >/dev/null
  out=$(BODY_FILE=$body wrk -t2 -c$CONNS -d${DUR}s -s "$script" "$url")
  if grep -q "Non-2xx" <<<"$out"; then echo "non-2xx answers from $url: $out" >&2; exit 1; fi
  if grep -q "^tool_errors=[1-9]" <<<"$out"; then echo "tool errors from $url: $out" >&2; exit 1; fi
  echo "$(awk '/Requests\/sec/ { print $2 }' <<<"$out") $(sed -n 's/^p99_ms=//p' <<<"$out")"
}

python3 - "$WORK" <<'PY'
import json, sys
card = {"title": "Revenue", "value": "$1.2M", "change": "+4%", "trend": "up"}
pin = {"pin_type": "stat-cards", "pin_config": {"cards": [card]}}
json.dump(pin, open(f"{sys.argv[1]}/pin.json", "w"))
card = {"title": "Revenue {{sales.region}}", "value": "{{sales.total}}", "change": "+4%", "trend": "up"}
pin = {"pin_type": "stat-cards", "pin_config": {"cards": [card]}, "metadata": {"tags": ["rendered"]}}
json.dump({"pins": [pin] * 100}, open(f"{sys.argv[1]}/rendered_batch.json", "w"))
json.dump({"name": "sales", "format": "json", "data": {"total": 1250, "region": "EU"}},
          open(f"{sys.argv[1]}/dataset.json", "w"))
json.dump({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
           "params": {"name": "create_pin", "arguments": json.load(open(f"{sys.argv[1]}/pin.json"))}},
          open(f"{sys.argv[1]}/mcp_create_pin.json", "w"))
PY

declare -A BASE KEY RKEY PIN
start() {
  local side=$1 bin=$2 port env=()
  port=$(free_port)
  if [ "$STORE" = sqlite ]; then
    env=(CORKBOARD_DATA_DIR="$WORK/$side")
  else
    local db="corkboard_ab_${side,,}_$$"
    psql -q "$PG_ADMIN/postgres" -c "CREATE DATABASE $db" >/dev/null
    DBS+=("$db")
    env=(DATABASE_URL="$PG_ADMIN/$db")
  fi
  env "${env[@]}" CORKBOARD_LISTEN="127.0.0.1:$port" "$bin" serve >"$WORK/$side.out" 2>"$WORK/$side.err" &
  PIDS+=($!)
  BASE[$side]="http://127.0.0.1:$port"
  wait_up "${BASE[$side]}"
  KEY[$side]=$(env "${env[@]}" "$bin" keys create --name bench --scopes '*' --tier team)
  RKEY[$side]=$(env "${env[@]}" "$bin" keys create --name rendered --scopes '*' --tier team --workspace rendered)
  python3 bench/fill.py "${BASE[$side]}" "${KEY[$side]}" "$LIST_PINS"
  [ "$STORE" = postgres ] && psql -q "$PG_ADMIN/corkboard_ab_${side,,}_$$" -c "ANALYZE pins"
  local auth=(-H "Authorization: Bearer ${RKEY[$side]}" -H 'Content-Type: application/json')
  curl -sf "${auth[@]}" -d @"$WORK/dataset.json" "${BASE[$side]}/v1/datasets" >/dev/null
  for _ in 1 2; do curl -sf "${auth[@]}" -d @"$WORK/rendered_batch.json" "${BASE[$side]}/v1/pins/batch" >/dev/null; done
  PIN[$side]=$(curl -sf -H "Authorization: Bearer ${KEY[$side]}" -H 'Content-Type: application/json' -d @"$WORK/pin.json" "${BASE[$side]}/v1/pins" \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["data"]["pin_id"])')
}

figures() {
  local round=$1 side=$2 base=${BASE[$2]} key=${KEY[$2]} rkey=${RKEY[$2]} rps p99 out
  read -r rps p99 <<<"$(KEY=$key wrk_run "$base/v1/pins" bench/lua/post.lua "$WORK/pin.json")"
  echo "$round $side post_rps $rps"; echo "$round $side post_p99_ms $p99"
  read -r rps p99 <<<"$(KEY=$key wrk_run "$base/mcp" bench/lua/mcp.lua "$WORK/mcp_create_pin.json")"
  echo "$round $side mcp_create_rps $rps"
  read -r rps p99 <<<"$(KEY=$key wrk_run "$base/v1/pins/${PIN[$side]}" bench/lua/get.lua)"
  echo "$round $side get_rps $rps"; echo "$round $side get_p99_ms $p99"
  read -r rps p99 <<<"$(KEY=$key wrk_run "$base/v1/pins?limit=200" bench/lua/get.lua)"
  echo "$round $side list200_rps $rps"; echo "$round $side list200_p99_ms $p99"
  read -r rps p99 <<<"$(KEY=$rkey wrk_run "$base/v1/pins?limit=200&tag=rendered&render=true" bench/lua/get.lua)"
  echo "$round $side rendered200_rps $rps"; echo "$round $side rendered200_p99_ms $p99"
  out=$(timeout 150 node $PEER/sse_probe.js --url "$base" --events /v1/events --post /v1/pins \
      --header "Authorization: Bearer $key" --viewer-header "Authorization: Bearer $key" \
      --body '{"pin_type": "json", "pin_config": {"data": {}}}' --seq-into pin_config.data \
      --viewers 1000 --updates 50 --interval-ms 100)
  python3 -c 'import json, sys
o = json.loads(sys.argv[1])
assert o["deliveries"] == o["deliveries_expected"], o
print(sys.argv[2], sys.argv[3], "push_1000v_p99_ms", o["push_p99_ms"])' "$out" "$round" "$side"
}

start A "$A"
start B "$B"
echo "# $(date -u +%H:%MZ) $STORE, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for round in $(seq 1 "$ROUNDS"); do
  if [ $((round % 2)) = 1 ]; then order=(A B); else order=(B A); fi
  for side in "${order[@]}"; do figures "$round" "$side" | tee -a "$WORK/figures"; echo "# round $round $side done $(date -u +%H:%M:%S), load $(cut -d' ' -f1-3 /proc/loadavg)" >&2; done
done
# Each figure's medians and B / A, on stderr.
python3 - "$WORK/figures" >&2 <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(lambda: collections.defaultdict(list))
for line in open(sys.argv[1]):
    _, side, figure, value = line.split()
    runs[figure][side].append(float(value))
for figure, sides in runs.items():
    a, b = statistics.median(sides["A"]), statistics.median(sides["B"])
    print(f"{figure}: A={a:.1f} B={b:.1f} B/A={b / a:.3f}")
PY
