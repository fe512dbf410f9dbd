"""deploy.yml end to end against stand-in hosts on this machine (local-test.sh): every
NodeManager and DataNode came up, the workload (tidal-replay on the it-tests' two-job workload,
its Tez AMs and tasks loading Tez and tidal-replay from HDFS) succeeded in the workload's queues,
and its results and every host's logs were fetched back. Root only: the hosts are
network namespaces. CLOUDLAB_VERBOSE=1 passes -v to ansible-playbook."""

import csv
import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import threading

import pytest

HERE = pathlib.Path(__file__).parent
TIDAL_SIM = HERE.parent.parent / "target" / "release" / "tidal-sim"
WORKLOAD = json.loads((HERE.parent / "src" / "test" / "resources" / "replay-workload.json").read_text())
HOSTS = ["cl-node0", "cl-node1", "cl-node2"]
WORKERS = HOSTS[1:]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    if os.geteuid() != 0:
        pytest.skip("the deployment test needs root (network namespaces for its hosts); "
                    "run make cloudlab-local as root")
    results = tmp_path_factory.mktemp("cloudlab-results")
    extra = ["-v"] if os.environ.get("CLOUDLAB_VERBOSE") else []
    # The output is passed on as it comes (make cloudlab-local shows a long run live) and kept
    # for the failure message.
    output = []
    with subprocess.Popen([str(HERE / "local-test.sh"), str(results), *extra],
                          env=dict(os.environ, CLOUDLAB_NODES=str(len(HOSTS))),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as p:
        deadline = threading.Timer(900, p.kill)
        deadline.start()
        for line in p.stdout:
            sys.stdout.write(line)
            output.append(line)
        deadline.cancel()
    if p.returncode == -signal.SIGKILL:
        # Killed outright, the script could not take its hosts down.
        subprocess.run([str(HERE / "local-hosts.sh"), "down"], check=False)
        pytest.fail("local-test.sh took more than 900 s and was killed")
    return p.returncode, results / "local", "".join(output)


def why_it_failed(output, out, lines=12):
    """What a failed run said: ansible's failed tasks and their messages, then each fetched
    daemon log's last errors (the nodes' logs are fetched whatever failed), bounded so the
    test's own failure message shows the cause."""
    said = [line for line in output.splitlines()
            if re.search(r"fatal:|FAILED!|failed:|local-test.sh:|local-hosts.sh:", line)]
    found = ["ansible: " + line[:600] for line in said[-lines:]]
    for log in sorted((out / "logs").glob("*/*.log")):
        errors = [line for line in log.read_text(errors="replace").splitlines()
                  if re.search(r" (ERROR|FATAL) |^[\w.$]+(Exception|Error)(: |$)", line)]
        found += [f"{log.parent.name}/{log.name}: {line[:300]}" for line in errors[-4:]]
    return "\n".join(found) or "(nothing: see the script's output above)"


def deployed(run):
    """The run's results, once the deployment test has failed on a failed run, skips instead:
    the missing files would only repeat that failure and bury its message."""
    rc, out, _ = run
    if rc != 0:
        pytest.skip("the deployment failed: see test_deploy_and_stop_succeed")
    return out


def test_deploy_and_stop_succeed(run):
    rc, out, output = run
    assert rc == 0, f"local-test.sh exited with {rc}:\n{why_it_failed(output, out)}"


def test_rm_saw_every_nodemanager(run):
    out = deployed(run)
    nodes = json.loads((out / "nodes.json").read_text())["nodes"]["node"]
    # Each NodeManager registered from its own host, under that host's name.
    assert sorted((n["state"], n["nodeHostName"]) for n in nodes) == [
        ("RUNNING", "cl-node1"), ("RUNNING", "cl-node2")]


def test_every_job_of_the_workload_ran_in_its_queue(run):
    out = deployed(run)
    with open(out / "jobs.csv", newline="") as f:
        jobs = {row["job"]: row for row in csv.DictReader(f)}
    assert sorted(jobs) == sorted(j["name"] for j in WORKLOAD["jobs"])
    for job in WORKLOAD["jobs"]:
        row = jobs[job["name"]]
        assert row["queue"] == job["queue"], row
        arrival, start, finish = (float(row[k]) for k in ("arrival_s", "start_s", "finish_s"))
        assert job["arrival_ms"] / 1000 <= arrival <= start <= finish, row
        assert int(row["tasks"]) == sum(len(s["task_durations_ms"]) for s in job["stages"]), row
    summary = json.loads((out / "summary.json").read_text())
    assert summary, "summary.json is empty"
    # The RM ran one Tez application per job, each in the job's queue, all of them to success.
    apps = json.loads((out / "apps.json").read_text())["apps"]["app"]
    assert sorted(a["queue"].removeprefix("root.") for a in apps) == sorted(
        j["queue"] for j in WORKLOAD["jobs"])
    assert {(a["state"], a["finalStatus"]) for a in apps} == {("FINISHED", "SUCCEEDED")}


def test_the_tez_ams_ran_on_the_workers_with_tez_and_tidal_replay_from_hdfs(run):
    out = deployed(run)
    for app in json.loads((out / "apps.json").read_text())["apps"]["app"]:
        # The AM is the container that logged the app's one DAG, on one of the workers.
        dag = "dag_" + app["id"].removeprefix("application_") + "_1"
        dag_logs = [p for h in WORKERS
                    for p in (out / "logs" / h / "containers" / app["id"]).glob("*/syslog_" + dag)]
        assert len(dag_logs) == 1, f"{app['id']}: DAG logs {dag_logs}"
        # Its DAG's local resources came from the HDFS directory the playbook filled: the nodes
        # share no other file system.
        log = dag_logs[0].read_text()
        for jar in ("tez-dag-0.9.2.jar", "tidal-replay.jar"):
            assert (f'name={jar}, value=resource {{ scheme: "hdfs" host: "10.232.0.10" port: 8020 '
                    f'file: "/apps/tidal/tez/{jar}" }}') in log, f"{app['id']}: {jar}"


def test_every_hosts_logs_were_fetched(run):
    _, out, _ = run
    logs = out / "logs"
    assert "ResourceManager" in (logs / "cl-node0" / "resourcemanager.log").read_text()
    assert "NameNode" in (logs / "cl-node0" / "namenode.log").read_text()
    for host in WORKERS:
        # Each host's daemons saw their own host name (the hosts share this file system).
        assert f"host = {host}/" in (logs / host / "nodemanager.log").read_text()
        assert (logs / host / "datanode.log").stat().st_size > 0


def test_tidal_sim_report_draws_the_run(run):
    out = deployed(run)
    status = json.loads((out / "status.json").read_text())
    assert {"root." + j["queue"] for j in WORKLOAD["jobs"]} <= {q["name"] for q in status["queues"]}
    history = json.loads((out / "history.json").read_text())
    assert history["samples"], "Tidal recorded no samples during the run"
    if not TIDAL_SIM.is_file():
        pytest.skip(f"no {TIDAL_SIM} to draw the report (cargo build --release -p tidal-sim)")
    subprocess.run([str(TIDAL_SIM), "report", str(out)], check=True, timeout=60)
    page = (out / "report.html").read_text()
    assert "window.TIDAL_DATA" in page and "root.lq" in page
