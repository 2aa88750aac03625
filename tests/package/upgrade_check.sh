#!/usr/bin/env bash
# Part of tests/package_test.sh: an upgrade of rpmp-common + rpmp-server keeps an edited
# /etc/rpmp/rpmp-server.yaml (a conffile). Installs the built packages with
# `dpkg --root ROOT` (a dpkg database of its own, maintainer scripts run chrootless with
# DPKG_ROOT set, so nothing outside ROOT changes), edits the config, then installs the
# same packages rebuilt at version +1 (config unchanged upstream: the edit is kept
# silently) and at +2 with a changed config (--force-confold: the edit is kept, the new
# file lands next to it as .dpkg-dist).
#
#   tests/package/upgrade_check.sh BUILD_DIR ROOT
set -euo pipefail
BUILD=${1:?usage: $0 BUILD_DIR ROOT}
root=${2:?usage: $0 BUILD_DIR ROOT}
fail() { echo "FAIL: upgrade: $*" >&2; exit 1; }
common=$(ls "$BUILD"/rpmp-common_*.deb | head -1)
server=$(ls "$BUILD"/rpmp-server_*.deb | head -1)
[ -n "$common" ] && [ -n "$server" ] || fail "no rpmp-common/rpmp-server package in $BUILD"
version=$(dpkg-deb -f "$server" Version)
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" "$root/work"
touch "$root/var/lib/dpkg/status"
conf="$root/etc/rpmp/rpmp-server.yaml"
install_debs() {  # install_debs [DPKG_OPTION...] -- DEB...
  local opts=()
  while [ "$1" != -- ]; do opts+=("$1"); shift; done
  shift
  dpkg --root="$root" --force-script-chrootless --force-depends --log=/dev/null \
    ${opts[@]+"${opts[@]}"} -i "$@" </dev/null >"$root/work/dpkg.log" 2>&1 ||
    { cat "$root/work/dpkg.log" >&2; fail "dpkg --root -i $*"; }
}
# repack DEB NEW_VERSION [LINE]: DEB rebuilt at NEW_VERSION (its rpmp-common dependency
# too); LINE, if given, is appended to the packaged rpmp-server.yaml.
repack() {
  local deb=$1 v=$2 line=${3:-} d name
  name=$(basename "$deb"); name=${name%%_*}
  d=$(mktemp -d -p "$root/work")
  dpkg-deb -R "$deb" "$d/pkg"
  sed -i "s/^Version: .*/Version: $v/; s/(= $version)/(= $v)/" "$d/pkg/DEBIAN/control"
  if [ -n "$line" ]; then
    echo "$line" >>"$d/pkg/etc/rpmp/rpmp-server.yaml"
    (cd "$d/pkg" && find . -type f ! -path './DEBIAN/*' -printf '%P\0' | xargs -0 md5sum) >"$d/pkg/DEBIAN/md5sums"
  fi
  dpkg-deb --root-owner-group -b "$d/pkg" "$d/${name}_$v.deb" >/dev/null
  echo "$d/${name}_$v.deb"
}

install_debs -- "$common" "$server"
[ -s "$conf" ] || fail "rpmp-server.yaml not installed by dpkg --root"
grep -q '^ /etc/rpmp/rpmp-server.yaml ' "$root/var/lib/dpkg/status" ||
  fail "dpkg does not record rpmp-server.yaml as a conffile"
sed -i 's/^listen: .*/listen: 10.77.0.99:7300  # edited by the operator/' "$conf"

install_debs -- "$(repack "$common" "$version.1")" "$(repack "$server" "$version.1")"
[ "$(dpkg-query --admindir="$root/var/lib/dpkg" -W -f='${Version}' rpmp-server)" = "$version.1" ] ||
  fail "rpmp-server was not upgraded to $version.1"
grep -q '^listen: 10.77.0.99:7300  # edited by the operator' "$conf" ||
  fail "upgrade to $version.1 overwrote the edited rpmp-server.yaml"

install_debs --force-confold -- "$(repack "$common" "$version.2")" \
  "$(repack "$server" "$version.2" "# changed in $version.2")"
grep -q '^listen: 10.77.0.99:7300  # edited by the operator' "$conf" ||
  fail "upgrade to $version.2 (config changed upstream) overwrote the edited rpmp-server.yaml"
grep -q "# changed in $version.2" "$conf.dpkg-dist" ||
  fail "upgrade to $version.2 did not leave the new config as rpmp-server.yaml.dpkg-dist"
echo "ok: upgrades $version -> $version.1 -> $version.2 keep the edited rpmp-server.yaml"
