#!/usr/bin/env bash
# Makes sure the base image of the Tidal node image exists and prints its name.
#   base-image.sh [IMAGE]   (default debian:bookworm-slim)
# A local image is used as is; otherwise it is pulled. Where no registry is reachable, a minimal
# Debian bookworm with a JRE is built from Debian's packages (debootstrap) and imported as
# tidal-base:bookworm, which is then the base.
set -euo pipefail
image=${1:-debian:bookworm-slim}
local_base=tidal-base:bookworm

if docker image inspect "$image" >/dev/null 2>&1; then echo "$image"; exit 0; fi
if timeout 60 docker pull -q "$image" >/dev/null 2>&1; then echo "$image"; exit 0; fi
if docker image inspect "$local_base" >/dev/null 2>&1; then echo "$local_base"; exit 0; fi

echo "base-image.sh: $image cannot be pulled; building $local_base with debootstrap" >&2
command -v debootstrap >/dev/null || {
  echo "base-image.sh: debootstrap is missing (apt-get install debootstrap)" >&2
  exit 1
}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
debootstrap --variant=minbase --include=openjdk-17-jre-headless,procps bookworm "$root" "$mirror" >&2
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
tar -C "$root" -c . | docker import -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' - "$local_base" >&2
echo "$local_base"
