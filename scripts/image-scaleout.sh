#!/usr/bin/env bash
# Scale-out from the same image (docs/deploy.md), all on one podman network: a server Postgres
# and a Redis (containers built from Debian's packages on the image's base, scripts/image-services.sh),
# an S3 (s3rver, the tests' S3, in a container of the image) and two Plinth containers A and B,
# each with its own /data:
#   started before their Postgres exists, the replicas say why on /api/health and serve once it
#   appears; a write through one is read through the other; a realtime change made through A
#   reaches a subscriber on B; an object uploaded through A downloads through B; a 1-second
#   schedule runs once per tick, not once per replica; the rate limit counts across both (one
#   Redis counter); killing one (SIGKILL) loses no write it acknowledged.
# Run by scripts/image-test.sh after its own checks (IMAGE must exist), or alone:
#   IMAGE=localhost/plinth:test scripts/image-scaleout.sh
set -euo pipefail
cd "$(dirname "$0")/.."
IMAGE="${IMAGE:-localhost/plinth:test}"
PG_IMAGE="${PG_IMAGE:-localhost/plinth-postgres:15}"
REDIS_IMAGE="${REDIS_IMAGE:-localhost/plinth-redis:7}"
T0=$SECONDS
say() { echo "image-scaleout: $*"; }
if ! command -v node >/dev/null 2>&1 || [ ! -d node_modules/socket.io-client ] || [ ! -d node_modules/s3rver ]; then
  say "FAILED: needs the host's node and the repository's node_modules (npm ci)" >&2
  exit 1
fi
ID="plinth-so-$$"
NET="$ID-net"
PA="${PORT_A:-17141}"
PB="${PORT_B:-17142}"
ADMIN_KEY="ik_$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')"
ANON_KEY="anon_$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')"
JWT="$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
TMP="$(mktemp -d /tmp/plinth-so-XXXXXX)"
fail() {
  echo "image-scaleout: FAILED: $*" >&2
  for c in "$ID-a" "$ID-b" "$ID-pg"; do podman logs --tail 20 "$c" 2>&1 | cut -c1-400 | sed "s/^/  [$c] /" >&2 || true; done
  exit 1
}
cleanup() {
  podman rm -f -v -t 0 "$ID-a" "$ID-b" "$ID-pg" "$ID-redis" "$ID-s3" >/dev/null 2>&1 || true
  podman network rm -f "$NET" >/dev/null 2>&1 || true
  rm -rf "$TMP"
}
trap cleanup EXIT
scripts/image-services.sh
podman network create "$NET" >/dev/null

start() { # name, port
  # /data: the image's volume, anonymous, one per replica (caches and uploads in progress only).
  podman run -d --name "$1" --network "$NET" -p "127.0.0.1:$2:7130" --read-only \
    -e DATABASE_URL="postgres://postgres@$ID-pg:5432/postgres" -e REDIS_URL="redis://$ID-redis:6379" \
    -e S3_BUCKET=plinth -e S3_ENDPOINT="http://$ID-s3:4569" -e S3_FORCE_PATH_STYLE=true \
    -e S3_ACCESS_KEY_ID=S3RVER -e S3_SECRET_ACCESS_KEY=S3RVER \
    -e ADMIN_API_KEY="$ADMIN_KEY" -e ANON_KEY="$ANON_KEY" -e JWT_SECRET="$JWT" -e LOG_LEVEL=warn "$IMAGE" >/dev/null
}
wait_healthy() { # name, port
  local deadline=$((SECONDS + 120))
  until curl -fsS "http://127.0.0.1:$2/api/health?checks=true" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || fail "$1 not healthy"
    [ "$(podman inspect --format '{{.State.Running}}' "$1")" = true ] || fail "$1 exited"
    sleep 0.5
  done
}
T=$SECONDS
# Both at the same moment, before their Postgres exists, then on an EMPTY database: the job
# library's install runs one instance at a time (src/jobs/index.ts); before that, one of the
# two starts failed ("deadlock detected").
start "$ID-a" "$PA"
start "$ID-b" "$PB"
deadline=$((SECONDS + 90))
until HEALTH=$(curl -sS "http://127.0.0.1:$PA/api/health" 2>/dev/null) && echo "$HEALTH" | grep -q 'cannot be resolved'; do
  [ $SECONDS -lt $deadline ] || fail "A's health does not say why it waits: $HEALTH"
  sleep 0.5
done
say "A, started before its Postgres, answers /api/health with: $(echo "$HEALTH" | grep -o '"message":"[^"]*"' | head -1 | cut -d'"' -f4)"
podman run -d --name "$ID-pg" --network "$NET" "$PG_IMAGE" >/dev/null
podman run -d --name "$ID-redis" --network "$NET" "$REDIS_IMAGE" >/dev/null
# s3rver from the repository's node_modules, run by the image's node (pure JavaScript); path-style
# only (it would take the host name $ID-s3 for a bucket's).
podman run -d --name "$ID-s3" --network "$NET" --no-healthcheck --read-only --tmpfs /tmp -v "$PWD/node_modules:/app/node_modules:ro" \
  --entrypoint node "$IMAGE" -e "new (require('s3rver'))({address: '0.0.0.0', port: 4569, silent: true, vhostBuckets: false,
  directory: '/tmp/s3', configureBuckets: [{name: 'plinth'}]}).run()" >/dev/null
wait_healthy "$ID-a" "$PA"
wait_healthy "$ID-b" "$PB"
say "replicas A and B, started together, healthy $((SECONDS - T)) s after their start (Postgres, Redis and S3 started meanwhile)"
q() { podman exec "$ID-pg" psql -qtA -U postgres -d postgres -c "$1"; }

api() { # port, method, path, [body]
  curl -fsS -X "$2" "http://127.0.0.1:$1$3" -H "x-api-key: $ADMIN_KEY" -H 'content-type: application/json' ${4:+-d "$4"}
}
api "$PA" POST /api/database/tables '{"tableName":"so_notes","rlsEnabled":false,"columns":[{"name":"body","type":"string","nullable":false}]}' >/dev/null ||
  fail "create table through A"
api "$PB" POST /api/database/records/so_notes '[{"body":"through B"}]' >/dev/null || fail "insert through B"
api "$PA" GET '/api/database/records/so_notes?select=body' | grep -q 'through B' || fail "A does not see B's write"
say "a write through B is read through A"

# ---- realtime: a change made through A reaches a subscriber on B (Redis carries it) ----
api "$PA" POST /api/database/tables/so_notes/realtime '{}' >/dev/null || fail "turn on realtime for so_notes"
node scripts/image-scaleout-realtime.mjs "http://127.0.0.1:$PA" "http://127.0.0.1:$PB" "$ADMIN_KEY" so_notes ||
  fail "realtime across replicas"

# ---- storage: an object uploaded through A downloads through B (both on the one S3) ----
head -c 262144 /dev/urandom >"$TMP/object"
api "$PA" POST /api/storage/buckets '{"bucketName":"so-files","isPublic":false}' >/dev/null || fail "create bucket through A"
curl -fsS -X PUT "http://127.0.0.1:$PA/api/storage/buckets/so-files/objects/blob.bin" -H "x-api-key: $ADMIN_KEY" \
  -H 'content-type: application/octet-stream' --data-binary "@$TMP/object" >/dev/null || fail "upload through A"
curl -fsS "http://127.0.0.1:$PB/api/storage/buckets/so-files/objects/blob.bin" -H "x-api-key: $ADMIN_KEY" \
  -o "$TMP/downloaded" || fail "download through B"
cmp -s "$TMP/object" "$TMP/downloaded" || fail "B's download differs from what A stored"
say "an object of 256 KiB uploaded through A downloads through B, byte for byte (one S3: s3rver in a container)"

# ---- a 1-second schedule runs once per tick, though both replicas run the clock ----
api "$PA" POST /api/database/tables '{"tableName":"so_ticks","rlsEnabled":false,"columns":[{"name":"body","type":"string","nullable":false}]}' >/dev/null ||
  fail "create table so_ticks"
SCHEDULE=$(api "$PB" POST /api/schedules '{"name":"so-tick","cronSchedule":"1 seconds","sql":"insert into so_ticks (body) values (\u0027tick\u0027)"}' |
  node -pe 'JSON.parse(require("fs").readFileSync(0, "utf8")).id') || fail "create schedule through B"
sleep "${TICK_SECONDS:-8}"
api "$PA" PATCH "/api/schedules/$SCHEDULE" '{"enabled":false}' >/dev/null || fail "disable the schedule"
sleep 2 # the run in flight finishes
RUNS=$(q "select count(*) from schedules.runs where schedule_id = '$SCHEDULE' and trigger = 'schedule'")
TICKS=$(q "select count(distinct due_at) from schedules.runs where schedule_id = '$SCHEDULE' and trigger = 'schedule'")
SPAN=$(q "select extract(epoch from max(due_at) - min(due_at))::int from schedules.runs where schedule_id = '$SCHEDULE'")
NOT_OK=$(q "select count(*) from schedules.runs where schedule_id = '$SCHEDULE' and status <> 'succeeded'")
ROWS=$(q "select count(*) from so_ticks")
[ "$TICKS" -ge 5 ] || fail "only $TICKS ticks in ${TICK_SECONDS:-8} s"
[ "$RUNS" = "$TICKS" ] && [ "$SPAN" = $((TICKS - 1)) ] || fail "$RUNS runs for $TICKS due times over $SPAN s"
[ "$NOT_OK" = 0 ] || fail "$NOT_OK runs did not succeed: $(q "select status, error from schedules.runs where status <> 'succeeded'")"
[ "$ROWS" = "$TICKS" ] || fail "$ROWS rows written for $TICKS ticks (a tick ran twice, or one was lost)"
say "a 1-second schedule on both replicas: $TICKS ticks one second apart, $RUNS runs, $ROWS rows (one per tick)"

remaining() { # port
  curl -fsS -o /dev/null -D - "http://127.0.0.1:$1/api/database/records/so_notes" -H "apikey: $ANON_KEY" |
    tr -d '\r' | awk -F': ' 'tolower($1) == "x-ratelimit-remaining" {print $2}'
}
R1=$(remaining "$PA"); R2=$(remaining "$PB"); R3=$(remaining "$PA")
[ -n "$R1" ] && [ "$R2" = $((R1 - 1)) ] && [ "$R3" = $((R1 - 2)) ] ||
  fail "rate limit not shared: remaining $R1 (A), $R2 (B), $R3 (A)"
say "the rate limit counts across both: remaining $R1 → $R2 (B) → $R3 (A)"

# Writes alternate between the two; A is killed (SIGKILL) half-way: every 2xx is in the table.
ACKED=0
for i in $(seq 1 40); do
  port=$PA; [ $((i % 2)) = 0 ] && port=$PB
  [ "$i" = 20 ] && podman kill -s KILL "$ID-a" >/dev/null
  if api "$port" POST /api/database/records/so_notes "[{\"body\":\"w$i\"}]" >/dev/null 2>&1; then ACKED=$((ACKED + 1)); fi
done
STORED=$(q "select count(*) from so_notes where body like 'w%'")
[ "$STORED" -ge "$ACKED" ] || fail "$ACKED writes acknowledged, $STORED stored"
say "A killed half-way through 40 writes: $ACKED acknowledged, $STORED stored, none lost"
api "$PB" GET /api/health >/dev/null || fail "B stopped answering"
say "passed in $((SECONDS - T0)) s"
