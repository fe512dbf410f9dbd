#!/usr/bin/env bash
# Submits one MapReduce sleep job to each of two queues of the docker cluster and a Tez DAG (three
# sleeping producers broadcasting to one consumer) to the second, at the same moment (from the
# RM's container, with the cluster's own configuration), and prints how long each took and what
# Tidal reported for the queues while they ran.
#   cluster-run.sh [QUEUE_A QUEUE_B]   (default: interactive batch, from hadoop-conf/tidal-queues.xml)
set -euo pipefail
queues=("${1:-interactive}" "${2:-batch}")
rest=http://127.0.0.1:8089/ws/v1/tidal/queues

# run_job WHAT LOG ARGS...: runs a client in the RM's container and reports how it went.
run_job() {
  local what=$1 log=$out/$2 t0=$SECONDS
  shift 2
  if docker exec tidal-rm /opt/hadoop/bin/hadoop-node.sh run "$@" >"$log" 2>&1; then
    echo "$what: succeeded in $((SECONDS - t0)) s"
  else
    echo "$what: FAILED after $((SECONDS - t0)) s; its output: $log"
    return 1
  fi
}

out=$(mktemp -d)
pids=()
for q in "${queues[@]}"; do
  run_job "MapReduce job in queue $q" "mr-$q.log" org.apache.hadoop.mapreduce.SleepJob \
    -Dmapreduce.job.queuename="$q" -m 8 -r 1 -mt 4000 -rt 1000 &
  pids+=($!)
done
# Its staging directory is on the volume every node shares (the default file system).
run_job "Tez DAG in queue ${queues[1]}" "tez-${queues[1]}.log" \
  -Dit.work.dir=/var/lib/tidal-cluster/tez org.tidal.it.TezSleepDagJob "${queues[1]}" 3 4000 1000 &
pids+=($!)
# Each queue's running containers and dominant share, every 5 s while the jobs run.
while kill -0 "${pids[@]}" 2>/dev/null; do
  curl -sf --max-time 5 "$rest" |
    jq -r --arg a "root.${queues[0]}" --arg b "root.${queues[1]}" \
      '[.queues[] | select(.name == $a or .name == $b)
        | "\(.name): \(.running_containers) containers, share \(.dominant_share * 100 | floor)%"]
       | join("   ")' || true
  sleep 5
done
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done
exit $status
