# Sourced by shell tests that start processes on fixed ports (deploy/local-cluster.sh
# and the like): a block of 60 ports reserved against the other tests running beside
# this one (tests/lib/port_block.py says how).
#   reserve_port_block   sets PORT_BLOCK to the block's first port, or fails
#   release_port_block   gives it back (call it from the test's EXIT trap)
_port_block_py="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/port_block.py"
reserve_port_block() {
  PORT_BLOCK=$("${PORT_BLOCK_PYTHON:-python3}" "$_port_block_py" reserve $$) || return 1
}
release_port_block() {
  if [ -n "${PORT_BLOCK:-}" ]; then "${PORT_BLOCK_PYTHON:-python3}" "$_port_block_py" release "$PORT_BLOCK"; fi
}
