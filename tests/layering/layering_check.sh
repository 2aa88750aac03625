#!/usr/bin/env bash
# Checks the one direction of dependencies (docs/architecture.md, "Layers and
# dependencies") by what each layer includes and links:
#   common <- transport <- link <- server, client-cpp (siblings)
# server/ and link/ include nothing from client-cpp/ but its vocabulary headers
# (rpmp/status.h, write_kind.h, buffer.h) and link no rpmp_client; client-cpp/ and link/
# include nothing from server/; common/ and transport/ include neither.
# Usage: layering_check.sh [ROOT] (default: the source tree). Exit 0 when it holds,
# 1 with one line per breach. Run by ctest (layering_holds) and, on a planted breach,
# by layering_check_catches_breach.
set -uo pipefail
ROOT=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$ROOT" || exit 1
bad=0
# breach DIR REGEX WHAT: every #include in DIR's sources matching REGEX is a breach.
breach() {
  local dir=$1 re=$2 what=$3
  [ -d "$dir" ] || return 0
  local hits
  hits=$(grep -rnE --include='*.h' --include='*.cc' --include='*.cpp' "^[[:space:]]*#[[:space:]]*include[[:space:]]*[\"<]($re)" "$dir")
  if [ -n "$hits" ]; then
    while IFS= read -r h; do echo "layering: $dir includes $what: $h"; done <<<"$hits"
    bad=1
  fi
}
breach server 'client-cpp/|rpmp/client\.h|rpmp/cluster\.h' 'client-cpp'
breach link 'client-cpp/|rpmp/client\.h|rpmp/cluster\.h' 'client-cpp'
breach link 'server/' 'server'
breach client-cpp 'server/' 'server'
for d in common transport; do
  breach "$d" 'client-cpp/src|link/|server/' 'a layer above it'
done
# Links: no CMake file under server/ or link/ names the client library.
for d in server link; do
  [ -d "$d" ] || continue
  hits=$(grep -rn --include=CMakeLists.txt -w 'rpmp_client' "$d" | grep -v '^[^:]*:[0-9]*:[[:space:]]*#')
  if [ -n "$hits" ]; then
    while IFS= read -r h; do echo "layering: $d links client-cpp (rpmp_client): $h"; done <<<"$hits"
    bad=1
  fi
done
[ "$bad" = 0 ] && echo "layering holds"
exit "$bad"
