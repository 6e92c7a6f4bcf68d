#!/usr/bin/env bash
# The production image, tested with podman (CI's "image" stage; docs/deploy.md):
#   build (base from scripts/image-base.sh, no registry) → size and its breakdown →
#   run read-only with a volume for /data (and /tmp) → healthy (time from run) →
#   a record through the API → podman stop (Postgres shuts down cleanly, exit 0) →
#   start again (time to healthy) → the record is there → a second container on the same
#   volume refuses to start → a container without a writable /data says so and exits non-zero →
#   scale-out: two replicas with a Postgres, a Redis and an S3 as containers on a podman network
#   (scripts/image-scaleout.sh).
# Prints "image-test: …" lines with every figure; exits non-zero on the first failure.
#   scripts/image-test.sh            # IMAGE=localhost/plinth:test KEEP=1 keeps the image
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v podman >/dev/null 2>&1; then
  echo "image-test: podman is not installed; skipping (apt-get install podman runc to run it)"
  exit 0
fi
T0=$SECONDS
CACHE_DIR="${CACHE_DIR:-/var/tmp/plinth-image-cache}"
mkdir -p "$CACHE_DIR"
# podman on these machines: runc (crun refuses the hybrid cgroups), ulimits within the hard
# limits (nproc above 32768 is refused here even under `ulimit -Hu`), no systemd (cgroupfs,
# events to a file, healthchecks run by hand).
if [ -z "${CONTAINERS_CONF:-}" ]; then
  export CONTAINERS_CONF="$CACHE_DIR/containers.conf"
  NOFILE=$(ulimit -Hn); NPROC=$(ulimit -Hu)
  [ "$NOFILE" = unlimited ] || [ "$NOFILE" -gt 65536 ] && NOFILE=65536
  [ "$NPROC" = unlimited ] || [ "$NPROC" -gt 32768 ] && NPROC=32768
  cat >"$CONTAINERS_CONF" <<CONF
[containers]
default_ulimits = ["nofile=$NOFILE:$NOFILE", "nproc=$NPROC:$NPROC"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
CONF
fi

BASE="${BASE:-localhost/plinth-base:bookworm}"
IMAGE="${IMAGE:-localhost/plinth:test}"
RUN_ID="plinth-it-$$"
VOL="$RUN_ID-data"
PORT="${PORT:-17130}"
ADMIN_KEY="ik_$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')"
say() { echo "image-test: $*"; }
fail() {
  echo "image-test: FAILED: $*" >&2
  for c in "$RUN_ID-a" "$RUN_ID-b"; do
    podman logs --tail 40 "$c" 2>/dev/null | sed "s/^/  [$c] /" >&2 || true
  done
  exit 1
}
cleanup() {
  podman rm -f -v -t 0 "$RUN_ID-a" "$RUN_ID-b" "$RUN_ID-c" >/dev/null 2>&1 || true
  podman volume rm -f "$VOL" >/dev/null 2>&1 || true
  [ "${KEEP:-0}" = 1 ] || podman rmi -f "$IMAGE" >/dev/null 2>&1 || true
}
trap cleanup EXIT

scripts/image-base.sh
say "base ready in $((SECONDS - T0)) s"

# ---- build ----
T=$SECONDS
CA_ARGS=()
for ca in /etc/ssl/certs/ca-certificates.crt /etc/pki/tls/certs/ca-bundle.crt; do
  if [ -s "$ca" ]; then CA_ARGS=(--secret "id=ca,src=$ca"); break; fi
done
podman build --format docker --build-arg "BASE=$BASE" "${CA_ARGS[@]}" -t "$IMAGE" -f Containerfile . \
  >"$CACHE_DIR/build.log" 2>&1 || { tail -n 40 "$CACHE_DIR/build.log"; fail "podman build"; }
say "built $IMAGE in $((SECONDS - T)) s"

# ---- size and its breakdown ----
size_mb() { podman image inspect --format '{{.Size}}' "$1" | awk '{printf "%d", $1 / 1000000}'; }
say "image size: $(size_mb "$IMAGE") MB (base $BASE: $(size_mb "$BASE") MB)"
podman run --rm --entrypoint /bin/sh "$IMAGE" -c '
  cd /app && printf "image-test:   node %s MB\n" $(du -sm /usr/local/bin/node | cut -f1)
  printf "image-test:   dist %s MB\n" $(du -sm dist | cut -f1)
  printf "image-test:   node_modules %s MB, of which:\n" $(du -sm node_modules | cut -f1)
  du -sm node_modules/* node_modules/@*/* 2>/dev/null | sort -rn | head -8 | while read -r mb p; do
    printf "image-test:     %s MB %s\n" "$mb" "${p#node_modules/}"
  done'

# ---- run read-only, with a volume for /data ----
health() { podman healthcheck run "$1" >/dev/null 2>&1; }
wait_healthy() { # name, seconds
  local deadline=$((SECONDS + $2))
  while [ $SECONDS -lt $deadline ]; do
    health "$1" && return 0
    [ "$(podman inspect --format '{{.State.Running}}' "$1")" = true ] || fail "$1 exited before it was healthy"
    sleep 0.25
  done
  fail "$1 not healthy within $2 s"
}
podman volume create "$VOL" >/dev/null
T=$SECONDS
START_NS=$(date +%s%N)
podman run -d --name "$RUN_ID-a" --read-only -v "$VOL:/data" -p "127.0.0.1:$PORT:7130" \
  -e ADMIN_API_KEY="$ADMIN_KEY" "$IMAGE" >/dev/null
wait_healthy "$RUN_ID-a" 180
say "first start (cluster created) healthy after $(( ($(date +%s%N) - START_NS) / 1000000 )) ms, read-only root, /data a volume"
[ "$(podman exec "$RUN_ID-a" id -u)" != 0 ] || fail "runs as root"
say "runs as uid $(podman exec "$RUN_ID-a" id -u), PID 1 is $(podman exec "$RUN_ID-a" cat /proc/1/comm)"

api() { # method, path, [body]
  curl -fsS -X "$1" "http://127.0.0.1:$PORT$2" -H "x-api-key: $ADMIN_KEY" -H 'content-type: application/json' ${3:+-d "$3"}
}
api GET '/api/health?checks=true' | grep -q '"status":"ok"' || fail "health with checks is not ok"
api POST /api/database/tables '{"tableName":"image_notes","columns":[{"name":"body","type":"string","nullable":false}]}' >/dev/null ||
  fail "create table"
api POST /api/database/records/image_notes '[{"body":"written before the stop"}]' >/dev/null || fail "insert record"

# ---- a second container on the same volume refuses to start ----
podman run -d --name "$RUN_ID-b" -v "$VOL:/data" "$IMAGE" >/dev/null
SECOND_RC=$(podman wait "$RUN_ID-b")
SECOND_OUT=$(podman logs "$RUN_ID-b" 2>&1)
[ "$SECOND_RC" != 0 ] || fail "a second container on the same volume started"
echo "$SECOND_OUT" | grep -q 'is in use by another Plinth' || fail "second container said: $SECOND_OUT"
say "second container on the volume: exit $SECOND_RC, \"$(echo "$SECOND_OUT" | head -c 120)…\""
api GET /api/health >/dev/null || fail "the first container stopped answering"

# ---- podman stop: drains, Postgres shuts down cleanly ----
T=$SECONDS
podman stop -t 30 "$RUN_ID-a" >/dev/null
EXIT_CODE=$(podman inspect --format '{{.State.ExitCode}}' "$RUN_ID-a")
say "podman stop took $((SECONDS - T)) s, exit code $EXIT_CODE"
[ "$EXIT_CODE" = 0 ] || fail "exit code $EXIT_CODE after podman stop"
podman logs "$RUN_ID-a" 2>&1 | grep -q 'postgres stopped: database system is shut down' || fail "no clean Postgres shutdown in the log"
say "the log says: $(podman logs "$RUN_ID-a" 2>&1 | grep -o 'database: postgres stopped: database system is shut down' | tail -1)"

# ---- start again: the record is there ----
START_NS=$(date +%s%N)
podman start "$RUN_ID-a" >/dev/null
wait_healthy "$RUN_ID-a" 120
say "restart (existing cluster) healthy after $(( ($(date +%s%N) - START_NS) / 1000000 )) ms"
api GET '/api/database/records/image_notes?select=body' | grep -q 'written before the stop' || fail "the record is gone"
say "the record survived the stop and start"
podman stats --no-stream --format '{{.MemUsage}}' "$RUN_ID-a" 2>/dev/null | sed 's/^/image-test: memory in use (idle): /' || true
podman exec "$RUN_ID-a" du -sm /data | awk '{print "image-test: /data holds " $1 " MB"}'
podman stop -t 30 "$RUN_ID-a" >/dev/null

# ---- no writable /data: one line, non-zero exit ----
podman run -d --name "$RUN_ID-c" --read-only --image-volume ignore "$IMAGE" >/dev/null
RO_RC=$(podman wait "$RUN_ID-c")
RO_OUT=$(podman logs "$RUN_ID-c" 2>&1)
[ "$RO_RC" != 0 ] || fail "started without a writable /data"
[ "$(echo "$RO_OUT" | wc -l)" = 1 ] || fail "not one line: $RO_OUT"
echo "$RO_OUT" | grep -q 'DATA_DIR /data is not writable' || fail "said: $RO_OUT"
say "no writable /data: exit $RO_RC, \"$RO_OUT\""

# ---- scale-out from the same image: two replicas, Postgres, Redis and S3 on a podman network ----
IMAGE="$IMAGE" scripts/image-scaleout.sh || fail "scale-out (scripts/image-scaleout.sh)"

say "passed in $((SECONDS - T0)) s"
