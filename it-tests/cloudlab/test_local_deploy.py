"""deploy.yml end to end against stand-in hosts on this machine (local-test.sh): every
NodeManager and DataNode came up, the workload (a MapReduce sleep job across the NodeManagers)
succeeded, and its results and every host's logs were fetched back. Root only: the hosts are
network namespaces. CLOUDLAB_VERBOSE=1 passes -v to ansible-playbook."""

import json
import os
import pathlib
import subprocess

import pytest

HERE = pathlib.Path(__file__).parent
TIDAL_SIM = HERE.parent.parent / "target" / "release" / "tidal-sim"
HOSTS = ["cl-node0", "cl-node1", "cl-node2"]
WORKERS = HOSTS[1:]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    if os.geteuid() != 0:
        pytest.skip("the deployment test needs root (network namespaces for its hosts); "
                    "run make cloudlab-local as root")
    results = tmp_path_factory.mktemp("cloudlab-results")
    extra = ["-v"] if os.environ.get("CLOUDLAB_VERBOSE") else []
    try:
        p = subprocess.run([str(HERE / "local-test.sh"), str(results), *extra],
                           env=dict(os.environ, CLOUDLAB_NODES=str(len(HOSTS))), timeout=900)
    except subprocess.TimeoutExpired:
        # Killed outright, the script could not take its hosts down.
        subprocess.run([str(HERE / "local-hosts.sh"), "down"], check=False)
        raise
    return p.returncode, results / "local"


def test_deploy_and_stop_succeed(run):
    rc, _ = run
    assert rc == 0, "local-test.sh failed (its output is above)"


def test_rm_saw_every_nodemanager(run):
    _, out = run
    nodes = json.loads((out / "nodes.json").read_text())["nodes"]["node"]
    # Each NodeManager registered from its own host, under that host's name.
    assert sorted((n["state"], n["nodeHostName"]) for n in nodes) == [
        ("RUNNING", "cl-node1"), ("RUNNING", "cl-node2")]


def test_workload_succeeded_across_the_nodemanagers(run):
    _, out = run
    (app,) = json.loads((out / "apps.json").read_text())["apps"]["app"]
    assert (app["name"], app["state"], app["finalStatus"]) == ("Sleep job", "FINISHED", "SUCCEEDED")
    log = (out / "workload.log").read_text()
    assert f"Job {app['id'].replace('application', 'job')} completed successfully" in log
    # Its containers ran on the NodeManagers' hosts (their logs came back from there), the
    # ApplicationMaster on HDFS, the file system all hosts share.
    ran_on = [h for h in WORKERS if (out / "logs" / h / "containers" / app["id"]).is_dir()]
    assert ran_on, "no container logs of the job came back from " + ", ".join(WORKERS)
    am_logs = [p.read_text() for h in ran_on
               for p in (out / "logs" / h / "containers" / app["id"]).glob("*_000001/syslog")]
    assert len(am_logs) == 1
    assert "Default file system [hdfs://10.232.0.10:8020]" in am_logs[0]


def test_every_hosts_logs_were_fetched(run):
    _, out = run
    logs = out / "logs"
    assert "ResourceManager" in (logs / "cl-node0" / "resourcemanager.log").read_text()
    assert "NameNode" in (logs / "cl-node0" / "namenode.log").read_text()
    for host in WORKERS:
        # Each host's daemons saw their own host name (the hosts share this file system).
        assert f"host = {host}/" in (logs / host / "nodemanager.log").read_text()
        assert (logs / host / "datanode.log").stat().st_size > 0


def test_tidal_sim_report_draws_the_run(run):
    _, out = run
    status = json.loads((out / "status.json").read_text())
    assert "root.default" in [q["name"] for q in status["queues"]]
    history = json.loads((out / "history.json").read_text())
    assert history["samples"], "Tidal recorded no samples during the run"
    if not TIDAL_SIM.is_file():
        pytest.skip(f"no {TIDAL_SIM} to draw the report (cargo build --release -p tidal-sim)")
    subprocess.run([str(TIDAL_SIM), "report", str(out)], check=True, timeout=60)
    page = (out / "report.html").read_text()
    assert "window.TIDAL_DATA" in page and "root.default" in page
