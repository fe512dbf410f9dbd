#!/usr/bin/env bash
# make test's check of the docker path: builds the image of one Hadoop line (HADOOP, default
# 3.4.3, the line most clusters run), brings the docker cluster up, runs cluster-run with a
# work-preserving RM restart while the jobs run and its checks (every job SUCCEEDED with one AM
# attempt, dominant shares over every resource, GPUs dominant for the GPU queue), and takes the
# cluster down again; once more on a fresh cluster if that fails. Debian's docker engine is
# installed and started where it is missing.
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

# One attempt: a fresh cluster, the run with its restart and checks; on failure the daemon logs are
# kept and the cluster goes down.
attempt() {
  make -s -C "$repo" cluster-up HADOOP="$hadoop" && "$repo/docker/cluster-run.sh" --restart-rm --check && return 0
  dest=$repo/target/docker-cluster-logs-$1
  CLUSTER_BACKEND=docker "$repo/it-tests/cluster/cluster.sh" logs "$dest" || true
  make -s -C "$repo" cluster-down >/dev/null 2>&1 || true
  echo "docker cluster test (Hadoop $hadoop), attempt $1, FAILED; daemon logs in $dest"
  return 1
}

# A second attempt on a fresh cluster after a failure, as the conformance suite reruns its one
# flaky test: an RM that did not answer within 180 s of its restart was seen once, on a loaded host
# whose daemon logs were lost, and not in repeated runs since. The first failure stays in the output
# with its evidence (the container's state, the RM's last lines, memory and disk); two fail the test.
t0=$SECONDS
if attempt 1; then
  echo "docker cluster test (Hadoop $hadoop) passed in $((SECONDS - t0)) s"
elif attempt 2; then
  echo "docker cluster test (Hadoop $hadoop) passed in $((SECONDS - t0)) s on its second attempt; the first FAILED (see above)"
else
  echo "docker cluster test (Hadoop $hadoop) FAILED twice"
  exit 1
fi
