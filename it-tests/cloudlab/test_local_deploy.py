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
HOSTS = ["cl-node0", "cl-node1", "cl-node2"]
WORKERS = HOSTS[1:]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    if os.geteuid() != 0:
        pytest.skip("the deployment test needs root (network namespaces for its hosts); "
                    "run make cloudlab-local as root")
    results = tmp_path_factory.mktemp("cloudlab-results")
    extra = ["-v"] if os.environ.get("CLOUDLAB_VERBOSE") else []
    p = subprocess.run([str(HERE / "local-test.sh"), str(results), *extra],
                       env=dict(os.environ, CLOUDLAB_NODES=str(len(HOSTS))), timeout=600)
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
    # The job's files were staged on HDFS, which the workload listed into its results.
    assert "/staging/" in (out / "hdfs-ls.txt").read_text()
    # Its containers ran on the NodeManagers' hosts (their logs came back from there).
    ran_on = [h for h in WORKERS if (out / "logs" / h / "containers" / app["id"]).is_dir()]
    assert ran_on, "no container logs of the job came back from " + ", ".join(WORKERS)


def test_every_hosts_logs_were_fetched(run):
    _, out = run
    logs = out / "logs"
    assert "ResourceManager" in (logs / "cl-node0" / "resourcemanager.log").read_text()
    assert "NameNode" in (logs / "cl-node0" / "namenode.log").read_text()
    for host in WORKERS:
        # Each host's daemons saw their own host name (the hosts share this file system).
        assert f"host = {host}/" in (logs / host / "nodemanager.log").read_text()
        assert (logs / host / "datanode.log").stat().st_size > 0
