#!/usr/bin/env bash
# Simulation against reality: the spec SPEC (default rust/sim/experiments/sim-vs-real.toml)
# under each policy of POLICIES, replayed on the namespace cluster with tidal-replay and
# simulated by tidal-sim on the spec's model of that cluster; prints per-class JCTs side by side
# (also OUT/sim-vs-real.csv) and what the real runs measured of the model's latencies.
#
#   sim-vs-real.sh [OUT]     (default target/sim-vs-real)
#
# Root only (the namespace cluster); prints why and exits 0 otherwise. Built by `make sim-vs-real`.
# CLUSTER_LOCK names a lock file to hold (flock) while the cluster runs, on a machine where others
# use the namespace cluster too. SKIP_REAL=1 keeps the real runs already in OUT/real and only
# simulates again (after a change to the model).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${1:-$repo/target/sim-vs-real}
spec=${SPEC:-$repo/rust/sim/experiments/sim-vs-real.toml}
policies=(${POLICIES:-bopf drf strict-priority})
sim=$repo/target/release/tidal-sim
if [[ -z ${SKIP_REAL:-} ]] && ((EUID != 0)); then
  echo "sim-vs-real: skipped: the namespace cluster needs root (network namespaces)"
  exit 0
fi
mkdir -p "$out/workloads"
workloads=()
for p in "${policies[@]}"; do
  "$sim" workload "$spec" --policy "$p" --out "$out/workloads/$p.json"
  workloads+=("$out/workloads/$p.json")
done
# The NodeManagers the spec models: 3 of its machine's size.
lock=()
[[ -n ${CLUSTER_LOCK:-} ]] && lock=(flock "$CLUSTER_LOCK")
if [[ -z ${SKIP_REAL:-} ]]; then
  NM_MEMORY_MB=$(jq .cluster.machine.memory_mb "${workloads[0]}") \
    NM_VCORES=$(jq .cluster.machine.vcores "${workloads[0]}") \
    "${lock[@]}" "$here/replay.sh" "$out/real" "${workloads[@]}"
fi
for p in "${policies[@]}"; do
  "$sim" --quiet run "$spec" --policy "$p" --out "$out/sim/$p" >/dev/null
  "$sim" calibrate "$out/real/$p"
done
"$sim" sim-vs-real "$out"
