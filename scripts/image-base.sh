#!/usr/bin/env bash
# Builds the image's base from Debian's packages with debootstrap (minbase: no registry needed,
# only a Debian mirror) and imports it into podman as $BASE (default localhost/plinth-base:bookworm).
# The root filesystem's tarball is cached under $CACHE_DIR, so a machine whose podman storage was
# wiped imports it again in seconds; a base already in podman is kept as it is.
#
#   scripts/image-base.sh                 # build (or reuse) and import
#   FORCE=1 scripts/image-base.sh         # rebuild from the mirror
#
# Needs root (debootstrap), debootstrap and podman (apt-get install debootstrap podman).
set -euo pipefail

BASE="${BASE:-localhost/plinth-base:bookworm}"
SUITE="${SUITE:-bookworm}"
MIRROR="${MIRROR:-http://deb.debian.org/debian}"
CACHE_DIR="${CACHE_DIR:-/var/tmp/plinth-image-cache}"
# tini: the image's init; ca-certificates: TLS to S3, SMTP, AI providers and OAuth issuers.
INCLUDE="${INCLUDE:-ca-certificates,tini}"
TARBALL="$CACHE_DIR/base-$SUITE-$(echo "$INCLUDE" | tr ',' '-').tar"

if [ "${FORCE:-0}" != 1 ] && podman image exists "$BASE"; then
  echo "image-base: $BASE is already in podman"
  exit 0
fi
mkdir -p "$CACHE_DIR"
if [ "${FORCE:-0}" = 1 ] || [ ! -s "$TARBALL" ]; then
  ROOTFS="$(mktemp -d /var/tmp/plinth-base-XXXXXX)"
  trap 'rm -rf "$ROOTFS"' EXIT
  echo "image-base: debootstrap --variant=minbase $SUITE from $MIRROR (with $INCLUDE)"
  debootstrap --variant=minbase --include="$INCLUDE" "$SUITE" "$ROOTFS" "$MIRROR" >"$CACHE_DIR/debootstrap.log" 2>&1 ||
    { tail -n 30 "$CACHE_DIR/debootstrap.log"; exit 1; }
  # What a container never needs: package caches and lists (apt-get update fetches them again),
  # documentation, manual pages and translations; the apt sources stay so the image can install.
  rm -rf "$ROOTFS"/var/cache/apt/* "$ROOTFS"/var/lib/apt/lists/* "$ROOTFS"/var/log/* \
    "$ROOTFS"/usr/share/doc/* "$ROOTFS"/usr/share/man/* "$ROOTFS"/usr/share/info/* \
    "$ROOTFS"/usr/share/locale/* "$ROOTFS"/usr/share/lintian "$ROOTFS"/tmp/*
  # The minimal apt settings debian:*-slim images carry: no docs or recommends on later installs.
  printf 'path-exclude /usr/share/doc/*\npath-include /usr/share/doc/*/copyright\npath-exclude /usr/share/man/*\npath-exclude /usr/share/locale/*\n' \
    >"$ROOTFS/etc/dpkg/dpkg.cfg.d/docker-minimal"
  printf 'APT::Install-Recommends "false";\nAPT::Install-Suggests "false";\n' >"$ROOTFS/etc/apt/apt.conf.d/docker-minimal"
  printf 'deb %s %s main\ndeb %s %s-updates main\ndeb http://deb.debian.org/debian-security %s-security main\n' \
    "$MIRROR" "$SUITE" "$MIRROR" "$SUITE" "$SUITE" >"$ROOTFS/etc/apt/sources.list"
  tar --numeric-owner -C "$ROOTFS" -cf "$TARBALL.tmp" .
  mv "$TARBALL.tmp" "$TARBALL"
fi
podman import --change 'CMD ["/bin/bash"]' "$TARBALL" "$BASE" >/dev/null
echo "image-base: imported $BASE ($(du -m "$TARBALL" | cut -f1) MB uncompressed)"
