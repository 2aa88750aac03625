#!/usr/bin/env bash
# The Debian packages (deploy/package/): packs them from a built BUILD (cpack), unpacks
# them into a scratch root with dpkg -x, and checks:
# - every binary runs from there (--help; rpmpctl finds its fast-start libraries under
#   usr/lib/rpmp), the docs the units' Documentation= names are installed, the configs
#   are conffiles, LICENSE/NOTICE, make-certs.sh, the udev rule and the jars are there;
# - a C++ program (tests/package/installed_client.cc) compiles against the installed
#   headers alone, links the installed librpmp.so and puts/gets a record on the
#   installed rpmp-server;
# - `systemd-analyze verify` accepts both units (their paths pointed into the root) and
#   the proxy unit does not require a local etcd;
# - an upgrade (dpkg --root into a second root, the packages rebuilt at a higher
#   version) keeps an edited /etc/rpmp/rpmp-server.yaml, also when the new version
#   ships a changed file (--force-confold: the new one lands in .dpkg-dist).
#
#   tests/package_test.sh BUILD_DIR
set -euo pipefail
BUILD="$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)"
here="$(cd "$(dirname "$0")" && pwd)"
fail() { echo "FAIL: $*" >&2; exit 1; }
for tool in dpkg dpkg-deb systemd-analyze dpkg-shlibdeps c++ python3; do
  command -v "$tool" >/dev/null || fail "$tool not installed (deploy/install-deps.sh)"
done
# cpack packs what BUILD holds (build it first: deploy/build.sh, as deploy/test.sh does);
# the `package` target would build everything again, the Maven jars included (1-3 min).
[ -x "$BUILD/bin/rpmp-server" ] || fail "$BUILD is not built (deploy/build.sh)"
(cd "$BUILD" && cpack --config CPackConfig.cmake) >"$BUILD/package.log" 2>&1 || { tail -20 "$BUILD/package.log"; fail "cpack failed"; }
root=$(mktemp -d)
server_pid=""
cleanup() {
  disown -a 2>/dev/null || true
  [ -n "$server_pid" ] && kill -9 "$server_pid" 2>/dev/null
  rm -rf "$root" "/dev/shm/rpmp-package-test-$$.pool"
}
trap cleanup EXIT
packages="rpmp-common rpmp-server rpmp-proxy librpmp rpmpctl rpmp-bench"
grep -q '^RPMP_JAVA:BOOL=ON' "$BUILD/CMakeCache.txt" && packages+=" rpmp-spark-jars"
for p in $packages; do
  deb=$(ls "$BUILD"/${p}_*.deb 2>/dev/null | head -1)
  [ -n "$deb" ] || fail "no package $p in $BUILD"
  dpkg -x "$deb" "$root"
  dpkg -e "$deb" "$root/DEBIAN-$p"
done
for f in usr/bin/rpmp-server usr/bin/rpmp-proxy usr/bin/rpmpctl usr/bin/rpmp-bench \
         etc/rpmp/rpmp-server.yaml etc/rpmp/rpmp-proxy.flags usr/include/rpmp/client.h \
         usr/include/rpmp/status.h usr/lib/librpmp.so.1 usr/lib/rpmp/libpsm2.so.2 \
         usr/lib/systemd/system/rpmp-server.service usr/lib/systemd/system/rpmp-proxy.service \
         usr/lib/udev/rules.d/60-rpmp-dax.rules usr/share/rpmp/make-certs.sh usr/share/rpmp/etcd-auth.sh \
         usr/share/doc/rpmp/deploy.md usr/share/doc/rpmp/LICENSE usr/share/doc/rpmp/NOTICE; do
  [ -e "$root/$f" ] || fail "$f missing from the packages"
done
case " $packages " in *" rpmp-spark-jars "*)
  [ -s "$root/usr/share/rpmp/jars/rpmp-spark.jar" ] || fail "rpmp-spark-jars lacks rpmp-spark.jar" ;;
esac
grep -q "Apache License" "$root/usr/share/doc/rpmp/LICENSE" || fail "LICENSE is not the Apache License"
for p in rpmp-server rpmp-proxy; do
  grep -q "adduser --system" "$root/DEBIAN-$p/postinst" || fail "$p: postinst does not create the rpmp user"
done
grep -qx /etc/rpmp/rpmp-server.yaml "$root/DEBIAN-rpmp-server/conffiles" || fail "rpmp-server.yaml is not a conffile"
grep -qx /etc/rpmp/rpmp-proxy.flags "$root/DEBIAN-rpmp-proxy/conffiles" || fail "rpmp-proxy.flags is not a conffile"
# Outputs are captured before grep: with pipefail, `cmd | grep -q` fails whenever grep
# exits at its match before cmd has written everything (cmd then dies of SIGPIPE).
out=$("$root/usr/bin/rpmp-server" --help 2>&1 || true)
grep -q "usage: rpmp-server" <<<"$out" || fail "rpmp-server --help"
out=$("$root/usr/bin/rpmp-proxy" -h 2>&1 || true)
grep -q -- "-metrics-listen" <<<"$out" || fail "rpmp-proxy -h"
out=$("$root/usr/bin/rpmpctl" --help 2>&1 || true)
grep -q "usage: rpmpctl" <<<"$out" || fail "rpmpctl --help"
out=$("$root/usr/bin/rpmp-bench" --help 2>&1 || true)
grep -qi "usage" <<<"$out" || fail "rpmp-bench --help"
out=$("$root/usr/share/rpmp/make-certs.sh" "$root/tls" --hosts 127.0.0.1 --nodes n1 2>&1) || fail "make-certs.sh: $out"
[ -s "$root/tls/n1.crt" ] || fail "installed make-certs.sh made no certificate"
out=$(ldd "$root/usr/bin/rpmpctl")
grep -q "$root/usr/bin/../lib/rpmp/libpsm2.so.2" <<<"$out" ||
  fail "rpmpctl does not load its stand-in libpsm2 from the package"

# The installed headers and library, as an application uses them (nothing from the
# source tree on the include path).
c++ -std=c++17 -I"$root/usr/include" -o "$root/installed_client" "$here/package/installed_client.cc" \
  -L"$root/usr/lib" -lrpmp -Wl,-rpath,"$root/usr/lib" 2>"$root/cc.log" ||
  { cat "$root/cc.log" >&2; fail "a program cannot compile/link against the installed librpmp headers"; }
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$root/usr/bin/rpmp-server" --listen "127.0.0.1:$port" --pool "/dev/shm/rpmp-package-test-$$.pool:256m" \
  >"$root/server.log" 2>&1 &
server_pid=$!
deadline=$((SECONDS + 30))
until grep -q "rpmp-server ready" "$root/server.log" 2>/dev/null; do
  kill -0 "$server_pid" 2>/dev/null || { cat "$root/server.log" >&2; fail "installed rpmp-server exited"; }
  [ $SECONDS -lt $deadline ] || fail "installed rpmp-server not ready in 30 s"
  sleep 0.1
done
listen=$(sed -n 's/.*rpmp-server ready listen=\([^ ]*\).*/\1/p' "$root/server.log" | head -1)
out=$("$root/installed_client" "$listen" 2>&1) || fail "installed client against $listen: $out"
grep -q "installed client ok" <<<"$out" || fail "installed client: $out"

units=$(mktemp -d -p "$root")
for u in rpmp-server rpmp-proxy; do
  unit="$root/usr/lib/systemd/system/$u.service"
  for doc in $(sed -n 's/^Documentation=//p' "$unit"); do
    [ -e "$root${doc#file://}" ] || fail "$u.service: Documentation= $doc is not installed"
  done
  sed "s|/usr/bin/|$root/usr/bin/|g; s|/etc/rpmp/|$root/etc/rpmp/|g" "$unit" >"$units/$u.service"
  systemd-analyze verify "$units/$u.service" || fail "systemd-analyze verify $u.service"
done
if grep -q '^Requires=.*etcd' "$root/usr/lib/systemd/system/rpmp-proxy.service"; then
  fail "rpmp-proxy.service requires a local etcd"
fi

# Upgrade keeps the operator's config. dpkg --root with chrootless maintainer scripts
# (postinst does nothing outside DPKG_ROOT).
"$here/package/upgrade_check.sh" "$BUILD" "$root/upgrade"
echo "ok: $(wc -w <<<"$packages") packages install into a scratch root, binaries run, a program builds and runs against the installed librpmp, units verify, an upgrade keeps the edited config"
