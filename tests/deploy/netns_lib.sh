# Sourced by tests/deploy/netns_deploy_test.sh: simulated hosts on network namespaces.
# Every name it makes starts with rpmp20- (namespaces rpmp20-HOST, bridge rpmp20-br,
# host-side veths rpmp20-vHOST), every address is in 10.77.0.0/24. Needs root.
#
#   netns_up HOST ADDR       a namespace with lo up and eth0=ADDR/24 on the bridge
#   on HOST CMD...           runs CMD inside HOST's namespace
#   netns_cleanup            kills every process inside the namespaces, deletes them
#                            and the bridge (safe to call twice, and on a partial setup)

NETNS_BRIDGE=rpmp20-br
NETNS_HOSTS=()

netns_up() {
  local host=$1 addr=$2 ns=rpmp20-$1
  if ! ip link show "$NETNS_BRIDGE" >/dev/null 2>&1; then
    ip link add "$NETNS_BRIDGE" type bridge
    ip link set "$NETNS_BRIDGE" up
  fi
  NETNS_HOSTS+=("$host")
  ip netns add "$ns"
  ip link add "rpmp20-v$host" type veth peer name eth0 netns "$ns"
  ip link set "rpmp20-v$host" master "$NETNS_BRIDGE" up
  ip -n "$ns" link set lo up
  ip -n "$ns" addr add "$addr/24" dev eth0
  ip -n "$ns" link set eth0 up
}

on() {
  local host=$1; shift
  ip netns exec "rpmp20-$host" "$@"
}

# Leftovers of an earlier run killed before its trap ran (same fixed names).
netns_remove_stale() {
  local ns
  for ns in $(ip netns list 2>/dev/null | awk '/^rpmp20-/ {print $1}'); do
    ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true
  done
  ip link del "$NETNS_BRIDGE" 2>/dev/null || true
}

netns_cleanup() {
  local host ns pids deadline
  for host in ${NETNS_HOSTS[@]+"${NETNS_HOSTS[@]}"}; do
    ns=rpmp20-$host
    deadline=$((SECONDS + 10))
    while pids=$(ip netns pids "$ns" 2>/dev/null) && [ -n "$pids" ] && [ $SECONDS -lt $deadline ]; do
      kill -9 $pids 2>/dev/null || true
      sleep 0.1
    done
    ip netns del "$ns" 2>/dev/null || true
    ip link del "rpmp20-v$host" 2>/dev/null || true
  done
  NETNS_HOSTS=()
  ip link del "$NETNS_BRIDGE" 2>/dev/null || true
}
