#!/usr/bin/env bash
# Assembles a Hadoop HADOOP_HOME (2.7.7 or 3.x, whichever line the class path holds) in the
# release tarball's layout from Maven Central jars and installs Tidal into it exactly as
# README.md's install section says: the adapter jar for that line in share/hadoop/yarn/lib,
# libtidal_jni.so in lib/native, hadoop-conf/yarn-site.xml's properties in the RM's yarn-site.xml
# (included by conf/yarn-site.xml) and a queue file next to it. Hadoop 3 nodes also get
# conf-hadoop3/: GPUs declared as a resource type and advertised by configuration.
#
#   layout.sh CLASSPATH_FILE LIBTIDAL_SO QUEUE_FILE DEST [link|copy]
#
# CLASSPATH_FILE is an integration-test module's class path as `mvn dependency:build-classpath`
# writes it: it-tests' (Hadoop 2.7.7 with httpclient/httpcore pinned to 4.2.5, and the
# tidal-yarn-hadoop2 jar) or it-tests/hadoop3's (Hadoop 3 and tidal-yarn-hadoop3). Jars are
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
    */org/tidal/tidal-yarn-hadoop[23]/*) tidal_jar=$jar; continue ;;
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
[[ -n $tidal_jar ]] || { echo "layout.sh: no tidal-yarn-hadoop2 or -hadoop3 jar in $classpath_file" >&2; exit 1; }

# The install section of README.md.
cp "$tidal_jar" "$share/yarn/lib/"
cp "$so" "$dest/lib/native/"
cp "$repo/hadoop-conf/yarn-site.xml" "$dest/etc/hadoop/tidal-yarn-site.xml"
cp "$queues" "$dest/etc/hadoop/tidal-queues.xml"
cp "$here"/conf/* "$dest/etc/hadoop/"
case $tidal_jar in */tidal-yarn-hadoop3/*) cp "$here"/conf-hadoop3/* "$dest/etc/hadoop/" ;; esac
cp "$here/hadoop-node.sh" "$dest/bin/"
