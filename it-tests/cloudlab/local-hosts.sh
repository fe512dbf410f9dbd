#!/usr/bin/env bash
# Stand-ins for CloudLab nodes on this machine: N network namespaces cl-node0..cl-nodeN-1 on a
# bridge (in a namespace of its own, cl-net), addresses 10.232.0.10+i, each with its own host
# name and /etc/hosts (UTS and mount namespaces; ../cluster/netns.sh, shared with the namespace
# cluster) and an sshd that takes one generated key. deploy.yml then reaches them over ssh like
# CloudLab nodes.
# This machine joins the bridge as 10.232.0.1 (cl-h). Root only.
#
#   local-hosts.sh up N DIR    DIR gets the keys, sshd configs, logs and the hosts file;
#                              prints one "NAME=ADDRESS" per host for inventory.py --host
#   local-hosts.sh down        stop every process in the namespaces and delete them
set -euo pipefail

SUBNET=10.232.0
NET=cl-net
die() { echo "local-hosts.sh: $*" >&2; exit 1; }
# shellcheck source-path=SCRIPTDIR source=../cluster/netns.sh
. "$(dirname "${BASH_SOURCE[0]}")/../cluster/netns.sh"

address() { echo "$SUBNET.$((10 + $1))"; }

# The hosts up now, from the namespaces' names (down needs no count).
hosts_up() { ip netns list | awk '$1 ~ /^cl-node[0-9]+$/ {print $1}'; }

up() {
  local n=$1 dir=$2 i host
  [[ $n =~ ^[0-9]+$ ]] && ((n >= 1 && n <= 100)) || die "N must be 1 to 100, not '$n'"
  ip netns list | grep -q "^$NET\b" && die "hosts are already up (namespace $NET); run: local-hosts.sh down DIR"
  local sshd=/usr/sbin/sshd
  [[ -x $sshd ]] || die "no $sshd (Debian's openssh-server)"
  mkdir -p "$dir/ssh" /run/sshd
  dir=$(cd "$dir" && pwd)
  rm -f "$dir/ssh/"*
  ssh-keygen -q -t ed25519 -N '' -C cloudlab-local -f "$dir/ssh/id_ed25519"
  ssh-keygen -q -t ed25519 -N '' -C cloudlab-local-host -f "$dir/ssh/host_ed25519"

  {
    echo "127.0.0.1 localhost"
    echo "$SUBNET.1 cl-controller"
    for ((i = 0; i < n; i++)); do echo "$(address $i) cl-node$i"; done
  } >"$dir/hosts"

  netns_bridge_up "$NET" cl-h "$SUBNET.1"
  for ((i = 0; i < n; i++)); do
    host=cl-node$i
    netns_host_up "$NET" "$host" "$(address $i)"
    cat >"$dir/ssh/sshd_config.$host" <<EOF
ListenAddress $(address $i)
HostKey $dir/ssh/host_ed25519
AuthorizedKeysFile $dir/ssh/id_ed25519.pub
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile none
Subsystem sftp internal-sftp
EOF
    # sshd and every session it starts see the host's name and hosts file.
    netns_spawn "$host" "$dir/hosts" "$sshd" -D -e -f "$dir/ssh/sshd_config.$host" \
      </dev/null >"$dir/sshd.$host.log" 2>&1
  done
  # Each sshd answers before this returns.
  local deadline=$((SECONDS + 20))
  for ((i = 0; i < n; i++)); do
    until ssh-keyscan -T 1 "$(address $i)" >/dev/null 2>&1; do
      ((SECONDS < deadline)) || die "sshd of cl-node$i did not answer; see $dir/sshd.cl-node$i.log"
      sleep 0.2
    done
    echo "cl-node$i=$(address $i)"
  done
}

down() {
  local host hosts
  mapfile -t hosts < <(hosts_up)
  for host in "${hosts[@]}" "$NET"; do netns_kill "$host"; done
  netns_down cl-h "${hosts[@]}" "$NET"
}

((EUID == 0)) || die "needs root (network namespaces, mounts)"
case ${1:-} in
  up) up "${2:?up needs N}" "${3:?up needs DIR}" ;;
  down) down ;;
  *) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
esac
