#!/usr/bin/env bash
# make test's check of the docker path: builds the image of one Hadoop line (HADOOP, default
# 3.4.3, the line most clusters run), brings the docker cluster up, runs cluster-run with a
# work-preserving RM restart while the jobs run and its checks (every job SUCCEEDED with one AM
# attempt, dominant shares over every resource, GPUs dominant for the GPU queue), and takes the
# cluster down again. Debian's docker engine is installed and started where it is missing.
# Needs root; skips with the reason where docker cannot run.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
hadoop=${HADOOP:-3.4.3}
skip() { echo "SKIPPED docker cluster test (Hadoop $hadoop): $*"; exit 0; }

[[ $(id -u) == 0 ]] || skip "needs root to install and start the docker engine"
missing=()
command -v dockerd >/dev/null || missing+=(docker.io)
docker compose version >/dev/null 2>&1 || command -v docker-compose >/dev/null || missing+=(docker-compose)
command -v debootstrap >/dev/null || missing+=(debootstrap)
command -v jq >/dev/null || missing+=(jq)
if ((${#missing[@]})); then
  echo "installing ${missing[*]} from Debian's packages"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null ||
    skip "could not install ${missing[*]}"
fi

started_dockerd=
if ! docker info >/dev/null 2>&1; then
  log=$repo/target/dockerd.log
  mkdir -p "$(dirname "$log")"
  dockerd >"$log" 2>&1 &
  started_dockerd=$!
  for _ in $(seq 60); do
    docker info >/dev/null 2>&1 && break
    kill -0 "$started_dockerd" 2>/dev/null || skip "dockerd exited: $(tail -3 "$log" | tr '\n' ' ')"
    sleep 0.5
  done
  docker info >/dev/null 2>&1 || skip "dockerd did not answer within 30 s: $(tail -3 "$log" | tr '\n' ' ')"
fi

cleanup() {
  make -s -C "$repo" cluster-down >/dev/null 2>&1 || true
  if [[ -n $started_dockerd ]]; then
    kill "$started_dockerd" 2>/dev/null || true
    wait "$started_dockerd" 2>/dev/null || true
  fi
}
trap cleanup EXIT

t0=$SECONDS
make -s -C "$repo" cluster-up HADOOP="$hadoop"
if ! "$repo/docker/cluster-run.sh" --restart-rm --check; then
  dest=$repo/target/docker-cluster-logs
  CLUSTER_BACKEND=docker "$repo/it-tests/cluster/cluster.sh" logs "$dest" || true
  echo "docker cluster test (Hadoop $hadoop) FAILED; daemon logs in $dest"
  exit 1
fi
echo "docker cluster test (Hadoop $hadoop) passed in $((SECONDS - t0)) s"
