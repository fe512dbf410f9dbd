#!/usr/bin/env bash
# tidal-replay on the namespace cluster: each spec of rust/sim/experiments named on the command
# line, resolved by tidal-sim under BoPF and DRF and replayed at TIME_SCALE; prints each run's JCTs.
# A spec whose trace file is absent is skipped with a message. Root only.
#
#   replay-benchmarks.sh OUT TIME_SCALE SPEC [SPEC ...]     (SPEC: a name, e.g. replay-tpch)
#
# Specs drawn from the Spark TPC-H trace (thousands of tasks of tens of milliseconds) replay with
# Tez's container reuse, as Spark's executors run them. CLUSTER_LOCK as in sim-vs-real.sh.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
(($# >= 3)) || { echo "usage: replay-benchmarks.sh OUT TIME_SCALE SPEC [SPEC ...]" >&2; exit 2; }
out=$1 scale=$2
shift 2
sim=$repo/target/release/tidal-sim
if ((EUID != 0)); then
  echo "replay-benchmarks: skipped: the namespace cluster needs root (network namespaces)"
  exit 0
fi
lock=()
[[ -n ${CLUSTER_LOCK:-} ]] && lock=(flock "$CLUSTER_LOCK")
status=0
for name in "$@"; do
  spec=$repo/rust/sim/experiments/$name.toml
  mkdir -p "$out/$name/workloads"
  options=(--time-scale "$scale")
  if grep -q 'type = "tpch-spark"' "$spec"; then
    options+=(--container-reuse)
  fi
  workloads=()
  for p in bopf drf; do
    if ! msg=$("$sim" workload "$spec" --policy "$p" --out "$out/$name/workloads/$p.json" 2>&1); then
      if [[ $msg == *"cannot read"* || $msg == *"No such file"* ]]; then
        echo "replay-benchmarks: $name skipped: its trace is absent ($msg)"
        continue 2
      fi
      echo "$msg" >&2
      exit 1
    fi
    workloads+=("$out/$name/workloads/$p.json")
  done
  start=$SECONDS
  "${lock[@]}" "$here/replay.sh" "$out/$name" "${workloads[@]}" -- "${options[@]}" || status=$?
  echo "== $name: replayed under BoPF and DRF in $((SECONDS - start)) s (time scale $scale)"
  for p in bopf drf; do
    [[ -f $out/$name/$p/summary.json ]] &&
      jq -r --arg p "$p" '"   \($p): \(.jobs) jobs, avg JCT \(.jct.avg_s | floor) s, p95 \(.jct.p95_s | floor) s, makespan \(.makespan_s | floor) s (workload seconds), wall \(.replay.wall_s | floor) s"' \
        "$out/$name/$p/summary.json"
  done
done
exit $status
