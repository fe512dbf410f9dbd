#!/usr/bin/env bash
# Submits one MapReduce sleep job to each of two queues of the docker cluster and a Tez DAG (three
# sleeping producers broadcasting to one consumer) to the second, at the same moment, from the
# cluster's client host with the cluster's own configuration, and prints how long each took, how
# the RM finished it and what Tidal reported for the queues while they ran.
#
#   cluster-run.sh [--restart-rm] [--check] [QUEUE_A QUEUE_B]
#       (queues default to interactive batch, from hadoop-conf/tidal-queues.xml)
#
# On a Hadoop 3 cluster the first queue's maps ask for one GPU each (yarn.io/gpu), so the two
# queues' dominant shares are over different resources. --restart-rm restarts the RM (work-
# preserving) once two of the jobs are running. A job's outcome is the RM's final status of its
# application: a client that lost the RM while its job ran on is not a failed job. --check also
# fails the run unless every job ran with one AM attempt, Tidal's shares match its usage over
# every resource, and (Hadoop 3) the GPU queue's dominant resource was GPUs.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
restart_rm= check=
while [[ ${1:-} == --* ]]; do
  case $1 in
    --restart-rm) restart_rm=1 ;;
    --check) check=1 ;;
    *) echo "cluster-run.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
queues=("${1:-interactive}" "${2:-batch}")
rm_web=http://127.0.0.1:8088
rest=http://127.0.0.1:8089/ws/v1/tidal/queues

image=$(docker inspect -f '{{.Config.Image}}' tidal-rm 2>/dev/null) ||
  { echo "cluster-run.sh: the docker cluster is not up (make cluster-up)" >&2; exit 1; }
case $image in
  tidal-hadoop:2.7.7) line=2 tez_job=org.tidal.it.TezSleepDag gpu_opts=() ;;
  tidal-hadoop:3.*) line=3 tez_job=org.tidal.it3.TezSleepDag gpu_opts=(-Dmapreduce.map.resource.yarn.io/gpu=1) ;;
  *) echo "cluster-run.sh: the cluster runs $image, not a tidal-hadoop image" >&2; exit 1 ;;
esac
echo "cluster runs $image"

out=$(mktemp -d)
failures=()
fail() { failures+=("$*"); echo "CHECK FAILED: $*"; }
started_ms=$(($(date +%s) * 1000 - 5000))

# The RM's record of the application this run started under NAME (its name, or a tag: SleepJob
# names its jobs itself), once it has ended (JSON), or nothing.
rm_app() {
  curl -sf --max-time 10 "$rm_web/ws/v1/cluster/apps?startedTimeBegin=$started_ms" |
    jq -c --arg n "$1" '[.apps.app[]? | select(.name == $n or (.applicationTags | split(",") | index($n)))]
      | max_by(.startedTime) // empty | select(.state == "FINISHED" or .state == "FAILED" or .state == "KILLED")'
}

# run_job WHAT NAME ARGS...: runs a client on the client host, then reports the RM's outcome.
run_job() {
  local what=$1 name=$2 log=$out/$2.log t0=$SECONDS client=0 app final attempts
  shift 2
  docker exec tidal-client /opt/hadoop/bin/hadoop-node.sh run "$@" >"$log" 2>&1 || client=$?
  # The RM may be restarting, or the AM still unregistering: ask for up to a minute.
  for _ in $(seq 60); do
    app=$(rm_app "$name") && [[ -n $app ]] && break
    sleep 1
  done
  final=$(jq -r '.finalStatus // "UNKNOWN"' <<<"${app:-{\}}")
  attempts=$(curl -sf --max-time 10 "$rm_web/ws/v1/cluster/apps/$(jq -r .id <<<"${app:-{\}}")/appattempts" |
    jq '.appAttempts.appAttempt | length' 2>/dev/null || echo "?")
  if [[ $final == SUCCEEDED ]]; then
    echo -n "$what: succeeded in $((SECONDS - t0)) s ($(jq -r .id <<<"$app"), $attempts AM attempt(s))"
    ((client == 0)) && echo || echo "; its client exited $client after losing touch: $log"
  else
    echo "$what: FAILED after $((SECONDS - t0)) s (the RM reports ${final}; client exit $client); its output: $log"
  fi
  echo "$name $final $attempts" >>"$out/outcomes"
}

pids=()
for q in "${queues[@]}"; do
  extra=()
  [[ $q == "${queues[0]}" ]] && extra=("${gpu_opts[@]}")
  run_job "MapReduce job in queue $q" "cluster-run-mr-$q" org.apache.hadoop.mapreduce.SleepJob \
    -Dmapreduce.job.queuename="$q" -Dmapreduce.job.tags="cluster-run-mr-$q" "${extra[@]}" \
    -m 8 -r 1 -mt 4000 -rt 1000 &
  pids+=($!)
done
# Its staging directory is on the volume every node shares (the default file system).
run_job "Tez DAG in queue ${queues[1]}" "sleep-dag-${queues[1]}" \
  -Dit.work.dir=/var/lib/tidal-cluster/tez "$tez_job" "${queues[1]}" 3 4000 1000 &
pids+=($!)

# Each queue's running containers, its use of every resource and its dominant share, every 5 s
# while the jobs run; the samples are kept for --check.
report='[.queues[] | select(.name == $a or .name == $b)
  | "\(.name): \(.running_containers) containers, "
    + (.used | to_entries | map("\(.value) \(.key)") | join(" "))
    + ", share \(.dominant_share * 100 | floor)%"] | join("   ")'
# Whether any job's client is still running (kill -0 on several pids fails once one has ended).
any_running() {
  local p
  for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && return 0; done
  return 1
}
restarted=
while any_running; do
  if sample=$(curl -sf --max-time 5 "$rest"); then
    echo "$sample" >>"$out/samples.jsonl"
    jq -r --arg a "root.${queues[0]}" --arg b "root.${queues[1]}" "$report" <<<"$sample" || true
    # The restart waits until two jobs run: the queues' shares keep the third's AM waiting at
    # times.
    if [[ -n $restart_rm && -z $restarted ]] &&
      (($(curl -sf --max-time 5 "$rm_web/ws/v1/cluster/apps?states=RUNNING&startedTimeBegin=$started_ms" |
        jq '.apps.app // [] | length' 2>/dev/null || echo 0) >= 2)); then
      restarted=1
      echo "== restarting the ResourceManager while the jobs run"
      t0=$SECONDS
      CLUSTER_BACKEND=docker "$here/../it-tests/cluster/cluster.sh" restart-rm
      echo "== ResourceManager back, every NodeManager RUNNING, in $((SECONDS - t0)) s"
    fi
  fi
  sleep 5
done
for p in "${pids[@]}"; do wait "$p" || true; done

while read -r name final attempts; do
  [[ $final == SUCCEEDED ]] || fail "$name finished $final by the RM"
  [[ -z $check || $attempts == 1 ]] || fail "$name ran $attempts AM attempts, not 1"
done <"$out/outcomes"
if [[ -n $check ]]; then
  [[ -z $restart_rm || -n $restarted ]] || fail "the RM was not restarted while the jobs ran"
  [[ -s $out/samples.jsonl ]] || fail "Tidal's REST answered no sample while the jobs ran"
  # Every sample: each queue's dominant share is its largest share of the cluster over every
  # resource the cluster has.
  bad=$(jq -c -s '[.[] | .cluster as $c | .queues[] | select(.leaf)
      | select(([.used | to_entries[] | select($c[.key] > 0) | .value / $c[.key]] | max // 0)
               - .dominant_share | fabs > 1e-6) | {name, used, dominant_share}] | .[:3][]' \
    "$out/samples.jsonl")
  [[ -z $bad ]] || fail "dominant shares that are not the largest share over the resources: $bad"
  if ((line == 3)); then
    # GPUs decided the first queue's share at some point: its GPU share was its dominant one.
    gpu_dominant=$(jq -c -s --arg a "root.${queues[0]}" 'first(.[] | .cluster as $c | .queues[]
        | select(.name == $a and (.used.gpus // 0) > 0 and $c.gpus > 0)
        | select((.used.gpus / $c.gpus) >= (.used.vcores / $c.vcores)
                 and (.used.gpus / $c.gpus) > (.used.memory_mb / $c.memory_mb))
        | {name, used, dominant_share}) // empty' "$out/samples.jsonl")
    [[ -n $gpu_dominant ]] || fail "no sample shows root.${queues[0]}'s GPUs as its dominant resource"
    echo "GPU queue sample: $gpu_dominant"
  fi
fi
if ((${#failures[@]})); then
  echo "cluster-run: ${#failures[@]} failure(s); job output in $out"
  exit 1
fi
echo "cluster-run: every job SUCCEEDED${check:+, checks passed}"
