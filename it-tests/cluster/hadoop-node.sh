#!/bin/sh
# One host of a Tidal cluster: Hadoop daemons and clients (2.7.7 or 3.x) run from a HADOOP_HOME
# in the release tarball's layout (see layout.sh). The namespace cluster and the docker image both run
# their daemons through this script.
#
#   hadoop-node.sh conf                          render the configuration for this host
#   hadoop-node.sh resourcemanager|nodemanager   render it and run the daemon in the foreground
#   hadoop-node.sh run [-DPROP=V...] CLASS [ARGS...]   run a client class (e.g. a job) against the cluster
#   hadoop-node.sh client                        render it and stay up, a host for clients to run on
#
# Environment: CLUSTER_DIR (a directory all hosts see at the same path), NODE_DIR (this host's
# own), NM_MEMORY_MB, NM_VCORES and NM_GPUS (what a NodeManager offers; GPUs on Hadoop 3 only), HADOOP_HOME (default: this
# script's parent), JAVA_HOME (default: the java on PATH), NODEMANAGER_CLASS and
# NODEMANAGER_CLASSPATH (a NodeManager class to run instead of Hadoop's, and where it is).
set -eu

HADOOP_HOME=${HADOOP_HOME:-$(cd "$(dirname "$0")/.." && pwd)}
: "${CLUSTER_DIR:?CLUSTER_DIR must name the directory every host shares}"
: "${NODE_DIR:?NODE_DIR must name this host's own directory}"
NM_MEMORY_MB=${NM_MEMORY_MB:-4096}
NM_VCORES=${NM_VCORES:-4}
NM_GPUS=${NM_GPUS:-0}
if [ -z "${JAVA_HOME:-}" ]; then
  java=$(command -v java) || { echo "hadoop-node.sh: no java on PATH and no JAVA_HOME" >&2; exit 1; }
  JAVA_HOME=$(dirname "$(dirname "$(readlink -f "$java")")")
fi
HADOOP_CONF_DIR=$NODE_DIR/conf
# Containers find Hadoop through these (yarn.application.classpath, mapreduce.application.classpath).
export HADOOP_HOME JAVA_HOME HADOOP_CONF_DIR
export HADOOP_COMMON_HOME=$HADOOP_HOME HADOOP_HDFS_HOME=$HADOOP_HOME
export HADOOP_YARN_HOME=$HADOOP_HOME HADOOP_MAPRED_HOME=$HADOOP_HOME

# Each file is written aside and renamed into place: a daemon this node started a moment before
# (its DataNode, when the NodeManager starts next) may still be reading them, and must see a whole
# file, never one being rewritten.
render_conf() {
  mkdir -p "$HADOOP_CONF_DIR" "$NODE_DIR/logs" "$CLUSTER_DIR"
  for f in "$HADOOP_HOME"/etc/hadoop/*; do
    out=$HADOOP_CONF_DIR/$(basename "$f")
    sed -e "s|@CLUSTER_DIR@|$CLUSTER_DIR|g" -e "s|@NODE_DIR@|$NODE_DIR|g" -e "s|@CONF_DIR@|$HADOOP_CONF_DIR|g" \
      -e "s|@NM_MEMORY_MB@|$NM_MEMORY_MB|g" -e "s|@NM_VCORES@|$NM_VCORES|g" -e "s|@NM_GPUS@|$NM_GPUS|g" \
      "$f" >"$out.$$.tmp"
    mv -f "$out.$$.tmp" "$out"
  done
}

classpath() {
  cp=$HADOOP_CONF_DIR
  for d in common hdfs yarn mapreduce; do
    cp=$cp:$HADOOP_HOME/share/hadoop/$d/*:$HADOOP_HOME/share/hadoop/$d/lib/*
  done
  # Clients (run) also get the workloads an image may carry in share/tez (docker/): Tez and the
  # test DAG. Daemons never do.
  if [ -n "${CLIENT:-}" ] && [ -d "$HADOOP_HOME/share/tez" ]; then
    cp=$cp:$HADOOP_HOME/share/tez/*
  fi
  if [ -n "${EXTRA_CLASSPATH:-}" ]; then
    cp=$cp:$EXTRA_CLASSPATH
  fi
  echo "$cp"
}

# Hadoop 2.7 was built for Java 8; on 17 its daemons and their libraries reflect into these JDK
# packages (java.lang alone is what Guice's cglib needs for the web apps to start at all).
JDK_OPENS="--add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.util=ALL-UNNAMED
 --add-opens=java.base/java.net=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED
 --add-opens=java.base/java.lang.reflect=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED"

# Each host its own temporary directory: the hosts of the namespace cluster share one file system,
# and Jetty unpacks a web app into a directory named after its address and port, which every
# NodeManager has alike (0.0.0.0:8042), so three starting at once overwrote each other's.
run_java() {
  heap=$1
  shift
  mkdir -p "$NODE_DIR/tmp"
  # shellcheck disable=SC2086 # JDK_OPENS and the *_OPTS variables are lists of flags
  exec "$JAVA_HOME/bin/java" $JDK_OPENS $heap -XX:+UseSerialGC \
    -Djava.library.path="$HADOOP_HOME/lib/native" \
    -Dhadoop.home.dir="$HADOOP_HOME" -Dhadoop.log.dir="$NODE_DIR/logs" \
    -Dyarn.log.dir="$NODE_DIR/logs" -Dlog4j.configuration=log4j.properties \
    -Djava.io.tmpdir="$NODE_DIR/tmp" \
    -cp "$(classpath)" "$@"
}

case "${1:-}" in
  conf)
    render_conf
    ;;
  resourcemanager)
    render_conf
    # shellcheck disable=SC2086
    run_java "-Xmx512m ${YARN_RESOURCEMANAGER_OPTS:-}" \
      org.apache.hadoop.yarn.server.resourcemanager.ResourceManager
    ;;
  nodemanager)
    render_conf
    # A NodeManager class other than Hadoop's own, with the jar it comes in (the tests' clusters
    # run one with a fix for a 2.7.7 resync race; see ResyncSafeNodeManager).
    if [ -n "${NODEMANAGER_CLASSPATH:-}" ]; then EXTRA_CLASSPATH=$NODEMANAGER_CLASSPATH; fi
    # shellcheck disable=SC2086
    run_java "-Xmx256m ${YARN_NODEMANAGER_OPTS:-}" \
      "${NODEMANAGER_CLASS:-org.apache.hadoop.yarn.server.nodemanager.NodeManager}"
    ;;
  run)
    shift
    [ $# -ge 1 ] || { echo "hadoop-node.sh run: name the class to run" >&2; exit 2; }
    [ -f "$HADOOP_CONF_DIR/yarn-site.xml" ] || render_conf
    CLIENT=1
    run_java "-Xmx256m" "$@"
    ;;
  client)
    # A host whose fate is not tied to a daemon's: clients run here survive an RM restart.
    render_conf
    # As a container's first process, a shell ignores SIGTERM unless it traps it.
    trap 'exit 0' TERM INT
    while :; do
      sleep 1 &
      wait $!
    done
    ;;
  *)
    echo "usage: hadoop-node.sh conf | resourcemanager | nodemanager | run CLASS [ARGS...] | client" >&2
    exit 2
    ;;
esac
