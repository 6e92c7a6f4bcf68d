#!/usr/bin/env bash
# What each mode needs, measured (docs/deploy.md, "What each mode needs"): CPU and memory of
# one container, idle and under a short load, in each mode:
#   embedded   one container with its own Postgres (a volume for /data);
#   scale-out  one replica on the machine's Postgres and Redis (--network host).
# CPU is the container's cgroup time (cpuacct.usage, cgroup v1; cpu.stat on v2) over the window,
# as a share of one core; memory is what `podman stats` shows (the cgroup's usage without the
# page cache), sampled every second, the highest sample kept. The load: LOAD_CONNECTIONS
# clients (node's fetch, on the host) reading and writing records for LOAD_SECONDS; under it
# also the container's CPU time per request (on a busy machine the share of a core is what the
# machine gave, the time per request what a request costs).
# Not part of CI; run it after `KEEP=1 scripts/image-test.sh` (which builds the image):
#   IMAGE=localhost/plinth:test scripts/image-measure.sh
set -euo pipefail
cd "$(dirname "$0")/.."
IMAGE="${IMAGE:-localhost/plinth:test}"
export CONTAINERS_CONF="${CONTAINERS_CONF:-/var/tmp/plinth-image-cache/containers.conf}"
PG_URL="${SCALEOUT_PG_URL:-postgres://postgres@127.0.0.1:5432}"
REDIS_URL="${SCALEOUT_REDIS_URL:-redis://127.0.0.1:6379/9}"
IDLE_SECONDS="${IDLE_SECONDS:-20}"
LOAD_SECONDS="${LOAD_SECONDS:-20}"
LOAD_CONNECTIONS="${LOAD_CONNECTIONS:-16}"
ID="plinth-measure-$$"
TMP="$(mktemp -d /tmp/plinth-measure-XXXXXX)"
DB="plinth_measure_$$"
PORT=17161
ADMIN_KEY="ik_$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')"
JWT="$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
say() { echo "image-measure: $*"; }
fail() {
  echo "image-measure: FAILED: $*" >&2
  exit 1
}
cleanup() {
  podman rm -f -v -t 0 "$ID" >/dev/null 2>&1 || true
  podman volume rm -f "$ID-data" >/dev/null 2>&1 || true
  psql -q "$PG_URL/postgres" -c "drop database if exists $DB with (force)" >/dev/null 2>&1 || true
  rm -rf "$TMP"
}
trap cleanup EXIT

cpu_ns() { # the container's CPU time so far, in ns
  local pid cg
  pid=$(podman inspect --format '{{.State.Pid}}' "$ID")
  if cg=$(awk -F: '$2 ~ /cpuacct/ {print $3}' "/proc/$pid/cgroup") && [ -n "$cg" ]; then
    cat "/sys/fs/cgroup/cpuacct$cg/cpuacct.usage"
  else
    cg=$(awk -F: '$1 == 0 {print $3}' "/proc/$pid/cgroup")
    awk '$1 == "usage_usec" {print $2 * 1000}' "/sys/fs/cgroup$cg/cpu.stat"
  fi
}
mem_mb() { podman stats --no-stream --format '{{.MemUsage}}' "$ID" | awk '{print $1}'; }
# CPU over $1 seconds (or while `$2...` runs, if given) and the highest memory sample; under
# load also the CPU time per request, with and without the idle rate measured before.
window() {
  local secs=$1 c0 c1 t0 t1 sampler
  shift
  : >"$TMP/mem"
  (while :; do mem_mb >>"$TMP/mem"; sleep 1; done) &
  sampler=$!
  c0=$(cpu_ns); t0=$(date +%s%N)
  if [ $# = 0 ]; then sleep "$secs"; else "$@"; fi
  c1=$(cpu_ns); t1=$(date +%s%N)
  kill "$sampler"; wait "$sampler" 2>/dev/null || true
  [ $# != 0 ] || awk -v c=$((c1 - c0)) -v t=$((t1 - t0)) 'BEGIN {print c / t}' >"$TMP/idle"
  awk -v c=$((c1 - c0)) -v t=$((t1 - t0)) -v p="$(sort -h "$TMP/mem" | tail -1)" -v n="$(cat "$TMP/requests" 2>/dev/null)" \
    -v idle="$(cat "$TMP/idle")" 'BEGIN {
    printf "CPU %.1f%% of a core, memory up to %s", 100 * c / t, p
    if (n > 0) printf "; %d requests, %.2f ms of CPU each (%.2f ms above idle)", n, c / n / 1e6, (c - idle * t) / n / 1e6 }'
  rm -f "$TMP/requests"
}
load() { # LOAD_CONNECTIONS clients, each a write then a read of the newest ten, for LOAD_SECONDS
  node -e '
    const [url, key, conns, secs] = process.argv.slice(1);
    const h = { "x-api-key": key, "content-type": "application/json" };
    const end = Date.now() + secs * 1000;
    let n = 0, errors = 0;
    async function client(i) {
      while (Date.now() < end) {
        const w = await fetch(url + "/api/database/records/measure", { method: "POST", headers: h, body: JSON.stringify([{ body: "c" + i }]) });
        const r = await fetch(url + "/api/database/records/measure?order=created_at.desc&limit=10", { headers: h });
        await w.arrayBuffer(); await r.arrayBuffer();
        n += 2; if (!w.ok || !r.ok) errors++;
      }
    }
    Promise.all(Array.from({ length: Number(conns) }, (_, i) => client(i))).then(() => {
      console.error("image-measure:   load: " + n + " requests in " + secs + " s (" + Math.round(n / secs) + "/s), " + errors + " errors");
      require("fs").writeFileSync(process.argv[5], String(n));
    });
  ' "http://127.0.0.1:$PORT" "$ADMIN_KEY" "$LOAD_CONNECTIONS" "$LOAD_SECONDS" "$TMP/requests"
}
wait_healthy() {
  local deadline=$((SECONDS + 180))
  until curl -fsS "http://127.0.0.1:$PORT/api/health" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || fail "not healthy"
    sleep 0.5
  done
}
measure() { # mode
  wait_healthy
  curl -fsS -X POST "http://127.0.0.1:$PORT/api/database/tables" -H "x-api-key: $ADMIN_KEY" -H 'content-type: application/json' \
    -d '{"tableName":"measure","columns":[{"name":"body","type":"string","nullable":false}]}' >/dev/null || fail "create table"
  sleep 10 # past the start's own work (migrations, the first checkpoint)
  say "$1, idle ${IDLE_SECONDS} s: $(window "$IDLE_SECONDS")"
  say "$1, under load ${LOAD_SECONDS} s ($LOAD_CONNECTIONS clients): $(window "$LOAD_SECONDS" load)"
  podman rm -f -v -t 0 "$ID" >/dev/null
}

say "$(date -u '+%F %H:%M') UTC, $(nproc) cores, $(awk '/MemTotal/ {printf "%.1f GB", $2 / 1048576}' /proc/meminfo), load average $(cut -d' ' -f1-3 /proc/loadavg)"
podman volume create "$ID-data" >/dev/null
podman run -d --name "$ID" --read-only -v "$ID-data:/data" -p "127.0.0.1:$PORT:7130" \
  -e ADMIN_API_KEY="$ADMIN_KEY" -e LOG_LEVEL=warn "$IMAGE" >/dev/null
measure "embedded (Node and its Postgres)"

psql -q "$PG_URL/postgres" -c "create database $DB" >/dev/null
podman run -d --name "$ID" --network host --read-only -e PORT="$PORT" -e DATABASE_URL="$PG_URL/$DB" \
  -e REDIS_URL="$REDIS_URL" -e ADMIN_API_KEY="$ADMIN_KEY" -e JWT_SECRET="$JWT" -e LOG_LEVEL=warn "$IMAGE" >/dev/null
measure "scale-out replica (Node; Postgres and Redis outside)"
say "load average now $(cut -d' ' -f1-3 /proc/loadavg)"
