# shellcheck shell=bash
# Stand-in hosts on this machine: network namespaces on a bridge, each host with its own name and
# hosts file. Sourced by cluster.sh (the namespace cluster) and ../cloudlab/local-hosts.sh
# (stand-ins for CloudLab nodes). Root only; addresses are in a /24.

# netns_bridge_up NET UPLINK ADDRESS: namespace NET holds bridge br0, so that the host's FORWARD
# policy (DROP once docker is installed) never sees the hosts' traffic; this machine joins the
# bridge by its veth UPLINK at ADDRESS.
netns_bridge_up() {
  local net=$1 uplink=$2 address=$3
  ip netns add "$net"
  ip -n "$net" link set lo up
  ip -n "$net" link add br0 type bridge
  ip -n "$net" link set br0 up
  ip link add "$uplink" type veth peer name uplink netns "$net"
  ip -n "$net" link set uplink master br0 up
  ip addr add "$address/24" dev "$uplink"
  ip link set "$uplink" up
}

# netns_host_up NET HOST ADDRESS: namespace HOST, its eth0 at ADDRESS on NET's bridge by the port
# v-HOST (which `ip -n NET link set v-HOST down` unplugs).
netns_host_up() {
  local net=$1 host=$2 address=$3
  ip netns add "$host"
  ip -n "$host" link set lo up
  ip -n "$net" link add "v-$host" type veth peer name eth0 netns "$host"
  ip -n "$net" link set "v-$host" master br0 up
  ip -n "$host" addr add "$address/24" dev eth0
  ip -n "$host" link set eth0 up
}

# netns_spawn HOST HOSTS_FILE COMMAND...: starts COMMAND in the background in HOST's namespace
# under the host's name (a UTS namespace) with HOSTS_FILE as /etc/hosts (bound in a mount
# namespace of its own); $! is then COMMAND's pid. The caller's redirections and environment
# pass on to it.
netns_spawn() {
  local host=$1 hosts=$2
  shift 2
  # shellcheck disable=SC2016 # the inner shell expands its own arguments
  ip netns exec "$host" unshare --uts --mount -- \
    sh -c 'hostname "$1" && mount --bind "$2" /etc/hosts && shift 2 && exec "$@"' node \
    "$host" "$hosts" "$@" &
}

# netns_kill HOST: kills whatever still runs in HOST's namespace.
netns_kill() {
  local left
  left=$(ip netns pids "$1" 2>/dev/null || true)
  # shellcheck disable=SC2086 # one pid per word
  [[ -z $left ]] || kill -KILL $left 2>/dev/null || true
}

# netns_down UPLINK NAMESPACE...: deletes the namespaces, then this machine's veth UPLINK (gone
# with its peer, but left when a set-up stopped half-way).
netns_down() {
  local uplink=$1 ns
  shift
  for ns in "$@"; do
    ip netns del "$ns" 2>/dev/null || true
  done
  ip link del "$uplink" 2>/dev/null || true
}
