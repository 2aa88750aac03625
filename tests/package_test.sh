#!/usr/bin/env bash
# The Debian packages (deploy/package/): builds them (`cmake --build BUILD --target
# package`), unpacks them into a scratch root with dpkg -x, runs every binary from there
# (--help; rpmpctl from the root finds its fast-start libraries under usr/lib/rpmp),
# checks the config files, headers, library and postinst, and has `systemd-analyze
# verify` accept both units (their paths pointed into the scratch root).
#
#   tests/package_test.sh BUILD_DIR
set -euo pipefail
BUILD="$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)"
fail() { echo "FAIL: $*" >&2; exit 1; }
for tool in dpkg systemd-analyze dpkg-shlibdeps; do
  command -v "$tool" >/dev/null || fail "$tool not installed (deploy/install-deps.sh)"
done
cmake --build "$BUILD" --target package >"$BUILD/package.log" 2>&1 || { tail -20 "$BUILD/package.log"; fail "cpack failed"; }
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
for p in rpmp-server rpmp-proxy librpmp rpmpctl; do
  deb=$(ls "$BUILD"/${p}_*.deb 2>/dev/null | head -1)
  [ -n "$deb" ] || fail "no package $p in $BUILD"
  dpkg -x "$deb" "$root"
  dpkg -e "$deb" "$root/DEBIAN-$p"
done
for f in usr/bin/rpmp-server usr/bin/rpmp-proxy usr/bin/rpmpctl etc/rpmp/rpmp-server.yaml \
         etc/rpmp/rpmp-proxy.flags usr/include/rpmp/client.h usr/lib/librpmp.so.1 \
         usr/lib/rpmp/libpsm2.so.2 usr/lib/systemd/system/rpmp-server.service \
         usr/lib/systemd/system/rpmp-proxy.service; do
  [ -e "$root/$f" ] || fail "$f missing from the packages"
done
for p in rpmp-server rpmp-proxy; do
  grep -q "adduser --system" "$root/DEBIAN-$p/postinst" || fail "$p: postinst does not create the rpmp user"
done
# Outputs are captured before grep: with pipefail, `cmd | grep -q` fails whenever grep
# exits at its match before cmd has written everything (cmd then dies of SIGPIPE).
out=$("$root/usr/bin/rpmp-server" --help 2>&1 || true)
grep -q "usage: rpmp-server" <<<"$out" || fail "rpmp-server --help"
out=$("$root/usr/bin/rpmp-proxy" -h 2>&1 || true)
grep -q -- "-metrics-listen" <<<"$out" || fail "rpmp-proxy -h"
out=$("$root/usr/bin/rpmpctl" --help 2>&1 || true)
grep -q "usage: rpmpctl" <<<"$out" || fail "rpmpctl --help"
out=$(ldd "$root/usr/bin/rpmpctl")
grep -q "$root/usr/bin/../lib/rpmp/libpsm2.so.2" <<<"$out" ||
  fail "rpmpctl does not load its stand-in libpsm2 from the package"
units=$(mktemp -d -p "$root")
for u in rpmp-server rpmp-proxy; do
  sed "s|/usr/bin/|$root/usr/bin/|g; s|/etc/rpmp/|$root/etc/rpmp/|g" \
    "$root/usr/lib/systemd/system/$u.service" >"$units/$u.service"
  systemd-analyze verify "$units/$u.service" || fail "systemd-analyze verify $u.service"
done
echo "ok: 4 packages install into a scratch root, binaries run, units verify"
