#!/usr/bin/env bash
# A Tidal cluster of separate hosts: one ResourceManager and NodeManagers, each a JVM on a host of
# its own with its own name and address. One interface, two backends:
#
#   CLUSTER_BACKEND=ns (default)  network namespaces on this machine, joined by a bridge; root only
#   CLUSTER_BACKEND=docker        the compose project in docker/ (containers of the docker image)
#
#   cluster.sh start          bring the cluster up; returns once every NodeManager is RUNNING
#   cluster.sh stop           stop the NodeManagers, then the ResourceManager; remove the hosts
#   cluster.sh health         exit 0 when the RM answers and every NodeManager is RUNNING
#   cluster.sh logs DEST      copy every host's daemon and container logs into DEST/<host>/
#   cluster.sh partition NM   cut a NodeManager off the network (ns)
#   cluster.sh heal NM        connect it again (ns)
#   cluster.sh restart-rm     stop the ResourceManager and start it again; returns once every
#                             NodeManager is RUNNING under the new one
#   cluster.sh rm-address     print the address clients reach the RM's web app and REST API at
#
# ns settings: CLUSTER_DIR (the shared directory, default it-tests/target/ns-cluster: the default
# file system, the RM state store, every host's logs), CLUSTER_CLASSPATH (the class path file
# `mvn dependency:build-classpath` wrote), CLUSTER_NATIVE_LIB (libtidal_jni.so), CLUSTER_QUEUES
# (the queue file, default hadoop-conf/tidal-queues.xml), CLUSTER_SUBNET (first three octets,
# default 10.231.0), NM_MEMORY_MB, NM_VCORES, and NODEMANAGER_CLASS/NODEMANAGER_CLASSPATH (see
# hadoop-node.sh).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
backend=${CLUSTER_BACKEND:-ns}
NMS=(tidal-nm1 tidal-nm2 tidal-nm3)
RM=tidal-rm

die() { echo "cluster.sh: $*" >&2; exit 1; }
# shellcheck source-path=SCRIPTDIR source=netns.sh
. "$here/netns.sh"

# --- shared by both backends -------------------------------------------------------------------

rm_address() {
  case $backend in
    ns) echo "${CLUSTER_SUBNET:-10.231.0}.10" ;;
    docker) echo "127.0.0.1" ;;
  esac
}

# How many NodeManagers the RM lists as RUNNING, or nothing when it does not answer.
running_nms() {
  curl -sf --max-time 5 "http://$(rm_address):8088/ws/v1/cluster/nodes" 2>/dev/null |
    jq '[.nodes.node[]? | select(.state == "RUNNING")] | length' 2>/dev/null
}

health() {
  local n
  n=$(running_nms) || true
  if [[ $n == "${#NMS[@]}" ]]; then
    echo "healthy: ResourceManager at http://$(rm_address):8088, ${#NMS[@]} NodeManagers RUNNING"
    return 0
  fi
  echo "unhealthy: ${n:-no answer from the ResourceManager}${n:+ of ${#NMS[@]} NodeManagers RUNNING}"
  return 1
}

# Waits for health; a backend may define alive() to fail at once when a daemon has died.
await_health() {
  local deadline=$((SECONDS + ${1:-120}))
  until health >/dev/null; do
    if declare -F alive >/dev/null && ! alive; then
      die "a daemon exited during start-up (see above)"
    fi
    if ((SECONDS > deadline)); then
      health || true
      if declare -F unhealthy_evidence >/dev/null; then unhealthy_evidence; fi
      die "the cluster did not become healthy within ${1:-120} s; see: cluster.sh logs DEST"
    fi
    sleep 0.5
  done
}

# --- ns: network namespaces --------------------------------------------------------------------

CLUSTER_DIR=${CLUSTER_DIR:-$repo/it-tests/target/ns-cluster}
SUBNET=${CLUSTER_SUBNET:-10.231.0}
NET=tidal-net # the namespace that holds the bridge

ns_address() {
  case $1 in
    tidal-client) echo "$SUBNET.1" ;;
    "$RM") echo "$SUBNET.10" ;;
    tidal-nm*) echo "$SUBNET.$((10 + ${1#tidal-nm}))" ;;
    *) die "no host named $1 (hosts: $RM ${NMS[*]})" ;;
  esac
}

ns_require() {
  ((EUID == 0)) || die "the namespace cluster needs root (network namespaces, bridges, mounts)"
  command -v unshare >/dev/null || die "unshare (util-linux) is missing"
  ip netns list >/dev/null 2>&1 || die "ip netns is not available"
  command -v jq >/dev/null || die "jq is missing (health check)"
}

# This machine joins the cluster's bridge as tidal-client.
ns_network_up() {
  netns_bridge_up "$NET" tidal-h "$(ns_address tidal-client)"
  local host
  for host in "$RM" "${NMS[@]}"; do
    netns_host_up "$NET" "$host" "$(ns_address "$host")"
  done
}

ns_network_down() { netns_down tidal-h "${NMS[@]}" "$RM" "$NET"; }

ns_hosts_file() {
  {
    echo "127.0.0.1 localhost $(hostname)"
    local host
    for host in tidal-client "$RM" "${NMS[@]}"; do
      echo "$(ns_address "$host") $host"
    done
  } >"$CLUSTER_DIR/hosts"
}

ns_start_daemon() {
  local host=$1 role=$2 node_dir=$CLUSTER_DIR/nodes/$1
  mkdir -p "$node_dir/logs"
  # Each host runs the same entry point as a docker node, with these settings in its environment.
  # shellcheck disable=SC2097,SC2098 # the arguments take this shell's values, the same ones
  CLUSTER_DIR=$CLUSTER_DIR NODE_DIR=$node_dir HADOOP_HOME=$CLUSTER_DIR/hadoop \
    NM_MEMORY_MB=${NM_MEMORY_MB:-4096} NM_VCORES=${NM_VCORES:-4} \
    netns_spawn "$host" "$CLUSTER_DIR/hosts" "$CLUSTER_DIR/hadoop/bin/hadoop-node.sh" "$role" \
    </dev/null >>"$node_dir/logs/$role.log" 2>&1
  echo $! >"$node_dir/$role.pid"
}

# Stops a daemon and whatever it started in its namespace (a NodeManager's containers).
ns_stop_daemon() {
  local host=$1 role=$2 pidfile=$CLUSTER_DIR/nodes/$1/$2.pid pid
  if [[ -f $pidfile ]]; then
    pid=$(<"$pidfile")
    if kill -TERM "$pid" 2>/dev/null; then
      local deadline=$((SECONDS + 30))
      while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
      kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$pidfile"
  fi
  # Whatever still runs in the host's namespace, its pid file lost or not.
  netns_kill "$host"
}

# Every daemon started is still running; otherwise the tail of the first dead one's log.
ns_alive() {
  local f
  for f in "$CLUSTER_DIR"/nodes/*/*.pid; do
    [[ -f $f ]] || continue
    if ! kill -0 "$(<"$f")" 2>/dev/null; then
      local log=${f%.pid}.log
      log=$(dirname "$log")/logs/$(basename "$log")
      echo "cluster.sh: $(basename "$(dirname "$f")") $(basename "$f" .pid) exited; end of $log:" >&2
      tail -n 20 "$log" >&2
      return 1
    fi
  done
}

now_ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }

ns_stop_nms() {
  local host pids=()
  for host in "${NMS[@]}"; do
    ns_stop_daemon "$host" nodemanager &
    pids+=($!)
  done
  # Only these: a start that failed half-way still has its daemons as background jobs.
  wait "${pids[@]}"
}

ns_start() {
  ns_require
  [[ -n ${CLUSTER_CLASSPATH:-} ]] || die "CLUSTER_CLASSPATH must name the class path file (mvn dependency:build-classpath)"
  [[ -n ${CLUSTER_NATIVE_LIB:-} ]] || die "CLUSTER_NATIVE_LIB must name libtidal_jni.so"
  if ip netns list | grep -qw "$NET"; then
    die "a namespace cluster is already up (namespace $NET); run: cluster.sh stop"
  fi
  local t0
  t0=$(now_ms)
  mkdir -p "$CLUSTER_DIR"
  rm -rf "$CLUSTER_DIR/nodes" "$CLUSTER_DIR/rmstore" "$CLUSTER_DIR/staging"
  "$here/layout.sh" "$CLUSTER_CLASSPATH" "$CLUSTER_NATIVE_LIB" \
    "${CLUSTER_QUEUES:-$repo/hadoop-conf/tidal-queues.xml}" "$CLUSTER_DIR/hadoop" link
  ns_hosts_file
  ns_network_up
  # A start that fails half-way takes down what it set up, so that the next start is not refused.
  trap 'ns_stop >&2' EXIT
  local t1
  t1=$(now_ms)
  ns_start_daemon "$RM" resourcemanager
  local host
  for host in "${NMS[@]}"; do ns_start_daemon "$host" nodemanager; done
  alive() { ns_alive; }
  await_health "${CLUSTER_START_TIMEOUT:-180}"
  trap - EXIT
  local t2
  t2=$(now_ms)
  echo "namespace cluster up: layout, hosts and network $((t1 - t0)) ms," \
    "daemons until every NodeManager RUNNING $((t2 - t1)) ms"
  echo "ResourceManager UI and REST: http://$(rm_address):8088  Tidal REST: http://$(rm_address):8089/ws/v1/tidal/queues"
}

ns_stop() {
  ns_require
  # NodeManagers first: a NodeManager whose RM is gone retries it for minutes before it exits.
  ns_stop_nms
  ns_stop_daemon "$RM" resourcemanager
  ns_network_down
  echo "namespace cluster stopped"
}

ns_link() {
  local host=$2
  [[ " ${NMS[*]} " == *" $host "* ]] || die "$1 takes a NodeManager (${NMS[*]}), not '$host'"
  ip -n "$NET" link set "v-$host" "$1"
}

ns_logs() {
  local dest=$1 host
  for host in "$RM" "${NMS[@]}"; do
    [[ -d $CLUSTER_DIR/nodes/$host/logs ]] || continue
    mkdir -p "$dest/$host"
    cp -r "$CLUSTER_DIR/nodes/$host/logs/." "$dest/$host/"
  done
  echo "logs of $RM ${NMS[*]} in $dest"
}

# --- docker: the compose project in docker/ ------------------------------------------------------

compose() {
  local c
  if docker compose version >/dev/null 2>&1; then c=(docker compose); else c=(docker-compose); fi
  "${c[@]}" -p tidal -f "$repo/docker/docker-compose.yml" "$@"
}

# Every container of the cluster runs; otherwise how the first stopped one ended (its exit code,
# whether the kernel's OOM killer ended it) and the end of its output, so a CI log shows why.
docker_alive() {
  local host state
  for host in "$RM" "${NMS[@]}"; do
    state=$(docker inspect -f '{{.State.Status}} exit={{.State.ExitCode}} oom={{.State.OOMKilled}}' "$host" 2>&1) || true
    [[ $state == running* ]] && continue
    echo "cluster.sh: container $host is not running ($state); end of its output:" >&2
    docker logs --tail 30 "$host" 2>&1 | cut -c1-400 >&2 || true
    return 1
  done
}

# What a start that timed out leaves to go on: the RM's last lines and the host's memory and disk.
docker_unhealthy_evidence() {
  echo "cluster.sh: end of $RM's output:" >&2
  docker logs --tail 40 "$RM" 2>&1 | cut -c1-400 >&2 || true
  echo "cluster.sh: the RM's REST from inside the cluster's network:" \
    "$(docker exec tidal-client bash -c 'exec 3<>/dev/tcp/tidal-rm/8088 && echo port 8088 open' 2>&1 | tail -1)" >&2
  free -m >&2 || true
  df -h "$(docker info -f '{{.DockerRootDir}}' 2>/dev/null || echo /)" >&2 || true
}

# The same files as ns_logs: each daemon's output as <role>.log, beside its container logs.
docker_logs() {
  local dest=$1 host role
  for host in "$RM" "${NMS[@]}"; do
    mkdir -p "$dest/$host"
    docker cp "$host:/var/lib/tidal-node/logs/." "$dest/$host/" || true
    role=nodemanager
    [[ $host == "$RM" ]] && role=resourcemanager
    docker logs "$host" >"$dest/$host/$role.log" 2>&1 || true
  done
  echo "logs of $RM ${NMS[*]} in $dest"
}

# --- commands ----------------------------------------------------------------------------------

cmd=${1:-}
case $backend/$cmd in
  */health) health ;;
  */rm-address) rm_address ;;
  ns/start) ns_start ;;
  ns/stop) ns_stop ;;
  ns/logs) ns_logs "${2:?logs needs a destination directory}" ;;
  ns/partition) ns_require && ns_link down "${2:?partition needs a NodeManager}" ;;
  ns/heal) ns_require && ns_link up "${2:?heal needs a NodeManager}" ;;
  ns/restart-rm)
    ns_require
    ns_stop_daemon "$RM" resourcemanager
    ns_start_daemon "$RM" resourcemanager
    alive() { ns_alive; }
    await_health "${CLUSTER_START_TIMEOUT:-180}"
    ;;
  docker/start)
    t0=$SECONDS
    compose up -d
    alive() { docker_alive; }
    unhealthy_evidence() { docker_unhealthy_evidence; }
    await_health "${CLUSTER_START_TIMEOUT:-180}"
    echo "docker cluster up in $((SECONDS - t0)) s"
    echo "ResourceManager UI and REST: http://$(rm_address):8088  Tidal REST: http://$(rm_address):8089/ws/v1/tidal/queues"
    ;;
  docker/stop)
    # NodeManagers first, as above.
    compose stop -t 30 "${NMS[@]}"
    # The shared volume (job files, RM state store) goes too: the next start is a fresh cluster.
    compose down -v -t 30
    ;;
  docker/logs) docker_logs "${2:?logs needs a destination directory}" ;;
  docker/restart-rm)
    # SIGTERM, then the same container again: its state store is on the shared volume.
    compose restart -t 30 "$RM"
    alive() { docker_alive; }
    unhealthy_evidence() { docker_unhealthy_evidence; }
    await_health "${CLUSTER_START_TIMEOUT:-180}"
    ;;
  docker/partition | docker/heal) die "$cmd runs on the namespace cluster only" ;;
  ns/* | docker/*)
    sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
    exit 2
    ;;
  *) die "CLUSTER_BACKEND must be ns or docker, not '$backend'" ;;
esac
