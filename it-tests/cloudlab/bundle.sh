#!/usr/bin/env bash
# Builds the one tarball deploy.yml pushes to every node: a Hadoop 2.7.7 HADOOP_HOME with Tidal
# installed (it-tests/cluster/layout.sh, jars copied), the node control script, and for clients
# only (share/tez, on hadoop-node.sh's client class path) Tez, the it-tests' workloads,
# tidal-replay with its libraries when java/replay/target has them (make jar) and any extra jars.
# deploy.yml puts share/tez on HDFS too: the nodes' Tez AMs and tasks load it from there.
#
#   bundle.sh CLASSPATH_FILE LIBTIDAL_SO QUEUE_FILE OUT.tar [EXTRA_JAR...]
#
# The per-node configuration (RM and NameNode address, the node's LAN address) is rendered by
# deploy.yml: core-site.xml and hdfs-site.xml are its own, and its yarn-site.xml includes the
# clusters' one, kept here as cluster-yarn-site.xml.
set -euo pipefail

if [[ $# -lt 4 ]]; then
  echo "usage: bundle.sh CLASSPATH_FILE LIBTIDAL_SO QUEUE_FILE OUT.tar [EXTRA_JAR...]" >&2
  exit 2
fi
classpath_file=$1 so=$2 queues=$3 out=$4
shift 4
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
for jar in "$@"; do [[ -f $jar ]] || { echo "bundle.sh: no jar $jar" >&2; exit 1; }; done
test_classes=$repo/it-tests/target/test-classes
[[ -d $test_classes/org/tidal/it ]] || { echo "bundle.sh: no $test_classes (mvn -f it-tests/pom.xml test-compile)" >&2; exit 1; }

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
hadoop=$stage/hadoop
"$repo/it-tests/cluster/layout.sh" "$classpath_file" "$so" "$queues" "$hadoop" copy
rm "$hadoop/etc/hadoop/core-site.xml"
mv "$hadoop/etc/hadoop/yarn-site.xml" "$hadoop/etc/hadoop/cluster-yarn-site.xml"
cp "$here/tidal-ctl.sh" "$hadoop/bin/"
mkdir -p "$hadoop/share/tez"
tr ':' '\n' <"$classpath_file" | grep '/org/apache/tez/' | xargs -r cp -t "$hadoop/share/tez"
jar cf "$hadoop/share/tez/tidal-it-workloads.jar" -C "$test_classes" org/tidal/it
replay=$repo/java/replay/target
if [[ -f $replay/tidal-replay.jar ]]; then
  cp -t "$hadoop/share/tez" "$replay/tidal-replay.jar" "$replay"/lib/*.jar
fi
[[ $# -eq 0 ]] || cp -t "$hadoop/share/tez" "$@"
mkdir -p "$(dirname "$out")"
tar cf "$out.tmp" -C "$stage" hadoop
mv "$out.tmp" "$out"
echo "bundle: $out ($(du -h "$out" | cut -f1))"
