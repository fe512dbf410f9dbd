#!/usr/bin/env bash
# Replays workloads (`tidal-sim workload`) with tidal-replay on the namespace cluster of
# cluster.sh, one fresh cluster per workload, each under the allocation file its workload carries
# (the policy tidal-sim resolved it for). Root only; prints why and exits 0 otherwise.
#
#   replay.sh OUT WORKLOAD.json [WORKLOAD.json ...] [-- tidal-replay options]
#
# Each workload's outputs go to OUT/<workload file name without .json>/. Needs target/release
# (libtidal_jni.so), the tidal-yarn-hadoop2 jar installed and it-tests' cluster class path
# (it-tests/target/cluster.classpath), and java/replay/target/tidal-replay.jar: `make replay-jar`.
# NM_MEMORY_MB and NM_VCORES as cluster.sh takes them (default 4096 and 4). Callers sharing the
# machine wrap it in flock on the cluster's lock file.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
(($# >= 2)) || { echo "usage: replay.sh OUT WORKLOAD.json [...] [-- tidal-replay options]" >&2; exit 2; }
if ((EUID != 0)); then
  echo "replay.sh: skipped: the namespace cluster needs root (network namespaces)"
  exit 0
fi
out=$1
shift
workloads=()
while (($#)) && [[ $1 != -- ]]; do workloads+=("$1"); shift; done
[[ ${1:-} == -- ]] && shift
classpath=$repo/it-tests/target/cluster.classpath
jar=$repo/java/replay/target/tidal-replay.jar
for f in "$classpath" "$jar" "$repo/target/release/libtidal_jni.so" "${workloads[@]}"; do
  [[ -f $f ]] || { echo "replay.sh: $f is missing (make replay-jar builds what it needs)" >&2; exit 1; }
done

export CLUSTER_DIR=${CLUSTER_DIR:-$repo/it-tests/target/replay-cluster}
export CLUSTER_CLASSPATH=$classpath CLUSTER_NATIVE_LIB=$repo/target/release/libtidal_jni.so
export NM_MEMORY_MB=${NM_MEMORY_MB:-4096} NM_VCORES=${NM_VCORES:-4}
trap '"$here/cluster.sh" stop >/dev/null 2>&1 || true' EXIT
status=0
for w in "${workloads[@]}"; do
  name=$(basename "$w" .json)
  mkdir -p "$out/$name"
  jq -r .allocations_xml "$w" >"$out/$name/allocations.xml"
  CLUSTER_QUEUES=$out/$name/allocations.xml "$here/cluster.sh" start
  # This host is tidal-client: cluster names resolve from the hosts file cluster.sh wrote.
  java -Xmx512m -XX:+UseSerialGC -Djdk.net.hosts.file="$CLUSTER_DIR/hosts" \
    -cp "$jar:$(cat "$classpath")" org.tidal.replay.Main \
    -D yarn.resourcemanager.hostname=tidal-rm -D fs.defaultFS=file:/// \
    -D tez.staging-dir="$CLUSTER_DIR/tez-staging" \
    "$w" --out "$out/$name" --ship-classpath "$@" || status=$?
  "$here/cluster.sh" logs "$out/$name/logs" >/dev/null 2>&1 || true
  "$here/cluster.sh" stop
done
exit $status
