"""deploy.yml and stop.yml as Ansible reads them, and deploy.yml's check of its workload settings,
which stops a run before anything is installed."""

import os
import pathlib
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).parent
PLAYBOOK = pathlib.Path(sys.executable).with_name("ansible-playbook")


def playbook(*args, tmp_path):
    env = dict(os.environ, ANSIBLE_CONFIG=str(HERE / "ansible.cfg"),
               ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"))
    return subprocess.run([str(PLAYBOOK), *args], capture_output=True, text=True, env=env,
                          cwd=HERE, timeout=120)


@pytest.mark.parametrize("name", ["deploy.yml", "stop.yml"])
def test_syntax(name, tmp_path):
    p = playbook("-i", "localhost,", "--syntax-check", name, tmp_path=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr


def test_tidal_replay_needs_a_workload_spec(tmp_path):
    # On this machine over a local connection: the check runs before any node is touched.
    p = playbook("-i", "localhost,", "-c", "local", "deploy.yml",
                 "-e", f"tidal_dir={tmp_path / 'tidal'}",
                 "-e", f"ansible_python_interpreter={sys.executable}", tmp_path=tmp_path)
    assert p.returncode != 0
    assert "workload_spec is not set: pass -e workload_spec=FILE" in p.stdout
    assert not (tmp_path / "tidal").exists()
