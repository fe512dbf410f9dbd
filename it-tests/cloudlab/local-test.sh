#!/usr/bin/env bash
# The CloudLab deployment end to end on this machine: stand-in hosts (local-hosts.sh: network
# namespaces with sshd), an inventory from inventory.py with a separate install directory per
# host (they share this file system), deploy.yml over ssh with tidal-replay on a two-job workload,
# then stop.yml. The hosts are taken down on the way out, failed or not. Root only.
#
#   local-test.sh RESULTS_DIR [ANSIBLE_OPTION...]
#
# Needs the environment of make cloudlab-venv and the bundle of make cloudlab-bundle. The run's
# results and logs land in RESULTS_DIR/local/. CLOUDLAB_NODES sets the number of hosts (default
# 3: a ResourceManager and two NodeManagers).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
results=${1:?usage: local-test.sh RESULTS_DIR [ANSIBLE_OPTION...]}
shift
venv=$repo/target/cloudlab-venv
work=$repo/target/cloudlab-local
nodes=${CLOUDLAB_NODES:-3}
die() { echo "local-test.sh: $*" >&2; exit 1; }

((EUID == 0)) || die "needs root (network namespaces)"
[[ -x $venv/bin/ansible-playbook ]] || die "no $venv (make cloudlab-venv)"
[[ -f $repo/target/cloudlab/tidal-bundle.tar ]] || die "no bundle (make cloudlab-bundle)"
mkdir -p "$results"
results=$(cd "$results" && pwd)

# One run at a time; what a run killed outright left behind goes first.
exec 9>/run/lock/tidal-cloudlab-local.lock
flock -w 900 9 || die "another run still holds /run/lock/tidal-cloudlab-local.lock"
"$here/local-hosts.sh" down
trap '"$here/local-hosts.sh" down' EXIT
trap 'exit 143' TERM INT
rm -rf "$work" "$results"/local*
mkdir -p "$work"
host_args=()
while read -r spec; do host_args+=(--host "$spec"); done < <("$here/local-hosts.sh" up "$nodes" "$work")
"$venv/bin/python" "$here/inventory.py" "${host_args[@]}" --user root \
  --key "$work/ssh/id_ed25519" --install-dir "$work/nodes/{host}" >"$work/inventory.yml"

# The workload: the deployment's default, tidal-replay, on the it-tests' two-job workload.
workload=$repo/it-tests/src/test/resources/replay-workload.json
tar tf "$repo/target/cloudlab/tidal-bundle.tar" hadoop/share/tez/tidal-replay.jar >/dev/null 2>&1 ||
  die "no tidal-replay in the bundle (make jar, then make cloudlab-bundle)"

# Extra vars as JSON: the values have spaces.
WORKLOAD=$workload RESULTS=$results WORK=$work "$venv/bin/python" -c '
import json, os
print(json.dumps({
    "ansible_ssh_common_args": "-o UserKnownHostsFile=%s/ssh/known_hosts" % os.environ["WORK"],
    "ansible_python_interpreter": "/usr/bin/python3",
    "run_id": "local", "results_dir": os.environ["RESULTS"],
    "nm_memory_mb": 2048, "nm_vcores": 2, "start_timeout_s": 300,
    "workload_spec": os.environ["WORKLOAD"]}))' >"$work/extra-vars.json"

export ANSIBLE_CONFIG=$here/ansible.cfg
status=0
for play in deploy stop; do
  "$venv/bin/ansible-playbook" -i "$work/inventory.yml" -e "@$work/extra-vars.json" "$@" \
    "$here/$play.yml" || status=$?
done
exit $status
