#!/usr/bin/env bash
# Packs what bench/scaling.sh needs into one folder to copy to a bigger machine that
# has no build: rpmp-server, rpmp-bench, rpmp-kv-bench, rpmpctl, the peers (redis-server,
# redis-benchmark, redis-cli, fi_pingpong, fi_info, iperf3), the shared libraries they
# load (their ldd closure, less the C library itself, which the target provides),
# libfabric's provider plugins, and the scripts; binaries and libraries stripped.
# OUT/run.sh runs a command with PATH and LD_LIBRARY_PATH pointing into the folder:
#   bench/pack-binaries.sh [BIN_DIR] OUT        (BIN_DIR defaults to build/bin)
#   rsync -a OUT/ bighost:rpmp-bench/ && ssh bighost rpmp-bench/run.sh scaling.sh
# The target needs a glibc at least as new as this host's (Debian 12: 2.36) and python3.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -eq 2 ]; then bin=$1 out=$2; else bin=$here/../build/bin out=${1:?usage: pack-binaries.sh [BIN_DIR] OUT}; fi
mkdir -p "$out/bin" "$out/lib"
progs=("$bin/rpmp-server" "$bin/rpmp-bench" "$bin/rpmp-kv-bench" "$bin/rpmpctl")
for p in redis-server redis-benchmark redis-cli fi_pingpong fi_info iperf3; do
  progs+=("$(command -v "$p" || { echo "pack-binaries: $p is missing" >&2; exit 1; })")
done
cp -L "${progs[@]}" "$out/bin/"
# The C library, loader and the libraries that must match them stay the target's own.
skip='^(linux-vdso|ld-linux|libc\.so|libm\.so|libpthread|libdl\.so|librt\.so|libresolv)'
fabric_plugins=$(dirname "$(ldconfig -p | awk '/libfabric\.so\.1 / {print $NF; exit}')")/libfabric
objs=("${progs[@]}")
[ -d "$fabric_plugins" ] && { mkdir -p "$out/lib/libfabric"; cp -L "$fabric_plugins"/*.so "$out/lib/libfabric/" 2>/dev/null || true; objs+=("$fabric_plugins"/*.so); }
for o in "${objs[@]}"; do
  [ -e "$o" ] || continue
  ldd "$o" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | while read -r name path; do
    [[ $name =~ $skip ]] || cp -Ln "$path" "$out/lib/$name"
  done
done
# Debug symbols stay here: stripped, the pack is about 40 MiB instead of 136.
find "$out/bin" "$out/lib" -type f -exec strip --strip-unneeded {} + 2>/dev/null || true
cp "$here/scaling.sh" "$here/lib.sh" "$out/bin/"
cat >"$out/run.sh" <<'EOF'
#!/usr/bin/env bash
# Runs COMMAND with the packed binaries and libraries first (bench/pack-binaries.sh).
d=$(cd "$(dirname "$0")" && pwd)
export PATH="$d/bin:$PATH" LD_LIBRARY_PATH="$d/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
[ -d "$d/lib/libfabric" ] && export FI_PROVIDER_PATH="$d/lib/libfabric"
[ "${1:-}" = scaling.sh ] && { shift; exec "$d/bin/scaling.sh" "$@" "$d/bin"; }
exec "$@"
EOF
chmod +x "$out/run.sh"
echo "packed $(ls "$out/bin" | wc -l) programs and $(find "$out/lib" -name '*.so*' | wc -l) libraries into $out ($(du -sh "$out" | cut -f1))"
