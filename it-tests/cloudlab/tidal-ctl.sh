#!/bin/sh
# Starts and stops one node's Hadoop daemons in the background and runs clients, from the
# Hadoop+Tidal bundle (bundle.sh) unpacked in $TIDAL_DIR/hadoop. Every command runs through
# hadoop-node.sh (it-tests/cluster), with this node's directories:
#   $TIDAL_DIR/node     configuration, logs (logs/<role>.log), pid files, HDFS and YARN data
#   $TIDAL_DIR/cluster  the RM state store (on the ResourceManager's node)
#
#   tidal-ctl.sh start ROLE...    ROLE: resourcemanager, nodemanager, namenode or datanode
#   tidal-ctl.sh stop ROLE...     (stopped together)
#   tidal-ctl.sh run [-DPROP=V...] CLASS [ARGS...]     a client (a job, an HDFS command)
#
# Environment: TIDAL_DIR; NM_MEMORY_MB and NM_VCORES as hadoop-node.sh takes them.
set -eu

: "${TIDAL_DIR:?TIDAL_DIR must name this node's install directory}"
export HADOOP_HOME="$TIDAL_DIR/hadoop" CLUSTER_DIR="$TIDAL_DIR/cluster" NODE_DIR="$TIDAL_DIR/node"
node=$HADOOP_HOME/bin/hadoop-node.sh
mkdir -p "$NODE_DIR/logs"

daemon_args() {
  case $1 in
    resourcemanager | nodemanager) echo "$1" ;;
    namenode) echo "run org.apache.hadoop.hdfs.server.namenode.NameNode" ;;
    datanode) echo "run org.apache.hadoop.hdfs.server.datanode.DataNode" ;;
    *) echo "tidal-ctl.sh: no role '$1' (resourcemanager, nodemanager, namenode, datanode)" >&2; exit 2 ;;
  esac
}

running() { [ -f "$NODE_DIR/$1.pid" ] && kill -0 "$(cat "$NODE_DIR/$1.pid")" 2>/dev/null; }

start() {
  args=$(daemon_args "$1")
  if running "$1"; then
    echo "$1 already running (pid $(cat "$NODE_DIR/$1.pid"))"
    return 0
  fi
  "$node" conf
  # A new NameNode formats its name directory once.
  if [ "$1" = namenode ] && [ ! -f "$NODE_DIR/nn/current/VERSION" ]; then
    "$node" run org.apache.hadoop.hdfs.server.namenode.NameNode -format -nonInteractive \
      >>"$NODE_DIR/logs/namenode-format.log" 2>&1
  fi
  # Its own session: the daemon outlives the ssh connection that started it.
  # shellcheck disable=SC2086 # args is a command and its words
  setsid "$node" $args </dev/null >>"$NODE_DIR/logs/$1.log" 2>&1 &
  echo $! >"$NODE_DIR/$1.pid"
  sleep 1
  running "$1" || { echo "$1 exited at once; end of its log:" >&2; tail -n 20 "$NODE_DIR/logs/$1.log" >&2; exit 1; }
  echo "$1 started (pid $(cat "$NODE_DIR/$1.pid"))"
}

# Stops the roles given together: TERM to each, then up to 30 s for all of them to exit.
stop() {
  pids=
  for role in "$@"; do
    daemon_args "$role" >/dev/null
    if running "$role"; then
      pids="$pids $(cat "$NODE_DIR/$role.pid")"
      kill -TERM "$(cat "$NODE_DIR/$role.pid")"
      echo "$role stopped"
    else
      echo "$role not running"
    fi
    rm -f "$NODE_DIR/$role.pid"
  done
  i=0
  for pid in $pids; do
    while kill -0 "$pid" 2>/dev/null && [ $i -lt 150 ]; do sleep 0.2; i=$((i + 1)); done
    kill -KILL "$pid" 2>/dev/null || true
  done
}

case ${1:-} in
  start)
    shift
    [ $# -ge 1 ] || { echo "tidal-ctl.sh start: name the roles" >&2; exit 2; }
    for role in "$@"; do start "$role"; done
    ;;
  stop) shift; [ $# -ge 1 ] || { echo "tidal-ctl.sh stop: name the roles" >&2; exit 2; }; stop "$@" ;;
  run) shift; exec "$node" run "$@" ;;
  *) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
esac
