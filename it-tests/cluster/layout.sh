#!/usr/bin/env bash
# Assembles a Hadoop 2.7.7 HADOOP_HOME in the release tarball's layout from Maven Central jars
# and installs Tidal into it exactly as README.md's install section says: the jar in
# share/hadoop/yarn/lib, libtidal_jni.so in lib/native, hadoop-conf/yarn-site.xml's properties
# in the RM's yarn-site.xml (included by conf/yarn-site.xml) and a queue file next to it.
#
#   layout.sh CLASSPATH_FILE LIBTIDAL_SO QUEUE_FILE DEST [link|copy]
#
# CLASSPATH_FILE is the it-tests' class path as `mvn dependency:build-classpath` writes it
# (Hadoop 2.7.7 with httpclient/httpcore pinned to 4.2.5, and the tidal-yarn-hadoop2 jar). Jars are
# symlinked (link, default) or copied (copy, for an image).
set -euo pipefail

if [[ $# -lt 4 ]]; then
  echo "usage: layout.sh CLASSPATH_FILE LIBTIDAL_SO QUEUE_FILE DEST [link|copy]" >&2
  exit 2
fi
classpath_file=$1 so=$2 queues=$3 dest=$4 mode=${5:-link}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
for f in "$classpath_file" "$so" "$queues"; do
  [[ -f $f ]] || { echo "layout.sh: $f does not exist" >&2; exit 1; }
done
case $mode in
  link) put() { ln -sf "$1" "$2/"; } ;;
  copy) put() { cp "$1" "$2/"; } ;;
  *) echo "layout.sh: mode must be link or copy, not $mode" >&2; exit 2 ;;
esac

rm -rf "$dest"
share=$dest/share/hadoop
mkdir -p "$dest"/{bin,lib/native,etc/hadoop} \
  "$share"/{common,hdfs,yarn,mapreduce}/lib
tidal_jar=
IFS=: read -r -a jars <"$classpath_file" || true # no final newline
for jar in "${jars[@]}"; do
  name=$(basename "$jar")
  case $jar in
    */org/tidal/tidal-yarn-hadoop2/*) tidal_jar=$jar; continue ;;
    # Test-only libraries of the it-tests, Tez and SLS (not part of a Hadoop node).
    */org/apache/tez/* | */junit/* | */org/hamcrest/* | */org/apache/hadoop/hadoop-sls/*) continue ;;
  esac
  case $name in
    hadoop-common-* | hadoop-auth-* | hadoop-annotations-* | hadoop-nfs-*) put "$jar" "$share/common" ;;
    hadoop-hdfs-*) put "$jar" "$share/hdfs" ;;
    hadoop-yarn-*) put "$jar" "$share/yarn" ;;
    hadoop-mapreduce-*) put "$jar" "$share/mapreduce" ;;
    *) put "$jar" "$share/common/lib" ;;
  esac
done
[[ -n $tidal_jar ]] || { echo "layout.sh: no tidal-yarn-hadoop2 jar in $classpath_file" >&2; exit 1; }

# The install section of README.md.
cp "$tidal_jar" "$share/yarn/lib/"
cp "$so" "$dest/lib/native/"
cp "$repo/hadoop-conf/yarn-site.xml" "$dest/etc/hadoop/tidal-yarn-site.xml"
cp "$queues" "$dest/etc/hadoop/tidal-queues.xml"
cp "$here"/conf/* "$dest/etc/hadoop/"
cp "$here/hadoop-node.sh" "$dest/bin/"
