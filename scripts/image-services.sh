#!/usr/bin/env bash
# The scale-out test's services as containers built from Debian's packages on the image's own
# base (scripts/image-base.sh; no registry): Postgres 15 and Redis 7. Each image is built once
# and kept (a build takes a minute or two; then `podman image exists` skips it).
#   scripts/image-services.sh        # builds localhost/plinth-postgres:15, localhost/plinth-redis:7
set -euo pipefail
BASE="${BASE:-localhost/plinth-base:bookworm}"
PG_IMAGE="${PG_IMAGE:-localhost/plinth-postgres:15}"
REDIS_IMAGE="${REDIS_IMAGE:-localhost/plinth-redis:7}"
CACHE_DIR="${CACHE_DIR:-/var/tmp/plinth-image-cache}"
say() { echo "image-services: $*"; }

build() { # image; the Containerfile on stdin
  if podman image exists "$1"; then return 0; fi
  local t=$SECONDS
  mkdir -p "$CACHE_DIR/empty"
  podman build --format docker --build-arg "BASE=$BASE" -t "$1" -f - "$CACHE_DIR/empty" >"$CACHE_DIR/services-build.log" 2>&1 ||
    { tail -n 30 "$CACHE_DIR/services-build.log"; say "FAILED: building $1"; exit 1; }
  say "built $1 in $((SECONDS - t)) s ($(podman image inspect --format '{{.Size}}' "$1" | awk '{printf "%d", $1 / 1000000}') MB)"
}

# Postgres: a cluster made at first start in /var/lib/postgresql/data (trust for the test
# network only: the test's own throwaway server, never a deployment), listening on all addresses.
build "$PG_IMAGE" <<'CONTAINERFILE'
ARG BASE
FROM ${BASE}
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql-15 >/dev/null \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /var/lib/postgresql/data /run/postgresql \
 && chown postgres:postgres /var/lib/postgresql/data /run/postgresql
USER postgres
ENV PATH=/usr/lib/postgresql/15/bin:$PATH PGDATA=/var/lib/postgresql/data
EXPOSE 5432
STOPSIGNAL SIGINT
CMD ["sh", "-c", "if [ ! -s \"$PGDATA/PG_VERSION\" ]; then initdb -A trust -U postgres >/dev/null && echo 'host all all all trust' >>\"$PGDATA/pg_hba.conf\"; fi && exec postgres -c listen_addresses='*' -c max_connections=200"]
CONTAINERFILE

# Redis: no persistence (the test's rate limits and realtime fan-out are transient).
build "$REDIS_IMAGE" <<'CONTAINERFILE'
ARG BASE
FROM ${BASE}
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server >/dev/null \
 && rm -rf /var/lib/apt/lists/*
USER redis
EXPOSE 6379
CMD ["redis-server", "--bind", "0.0.0.0", "--protected-mode", "no", "--save", "", "--appendonly", "no"]
CONTAINERFILE
