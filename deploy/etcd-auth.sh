#!/usr/bin/env bash
# Turns on etcd's authentication for an RPMP cluster (docs/security.md, "etcd access by
# role"). Idempotent: run it after etcd first starts, and again at any time.
#
#   etcd-auth.sh ENDPOINTS TLS_DIR [--cluster NAME]
#
# ENDPOINTS   etcd's client URLs, comma-separated (https://10.0.0.1:2379,...)
# TLS_DIR     made by make-certs.sh with --etcd-hosts: etcd-ca.crt and etcd-root.crt/.key
#             (CN=root, etcd's root user: only this script and operators use it)
# --cluster   the proxies' --cluster (default "default"): their keys are /rpmp/NAME/
#
# etcd maps a client certificate's CN to a user. This makes:
#   user root (no password; etcd requires it before authentication is enabled), and
#   user rpmp-proxy (CN of the proxies' certificates) with role rpmp-proxy, which may
#   read and write /rpmp/NAME/ and nothing else.
# No other user exists. Certificates of the cluster CA (applications, CN=rpmp-client;
# operators, CN=rpmp-admin; nodes) do not even pass etcd's TLS handshake when etcd trusts
# only etcd-ca.crt (local-cluster.sh, docs/deploy.md); these users and roles are the second
# wall, and keep the proxies out of every other key.
set -euo pipefail

die() { echo "etcd-auth: $*" >&2; exit 1; }
usage="usage: $0 ENDPOINTS TLS_DIR [--cluster NAME]"
[ $# -ge 2 ] || die "$usage"
endpoints=$1 tls=$2 cluster=default
shift 2
while [ $# -gt 0 ]; do
  case $1 in
    --cluster) [ $# -ge 2 ] || die "$usage"; cluster=$2; shift 2 ;;
    *) die "unknown argument $1 ($usage)" ;;
  esac
done
[[ -n $cluster && $cluster != */* ]] || die "--cluster '$cluster' must be non-empty without '/'"
command -v etcdctl >/dev/null || die "etcdctl not found (Debian package etcd-client)"
for f in etcd-ca.crt etcd-root.crt etcd-root.key; do
  [ -s "$tls/$f" ] || die "$tls/$f missing (make-certs.sh $tls --etcd-hosts ...)"
done

ctl() {
  ETCDCTL_API=3 etcdctl --endpoints "$endpoints" --cacert "$tls/etcd-ca.crt" \
    --cert "$tls/etcd-root.crt" --key "$tls/etcd-root.key" --dial-timeout 5s --command-timeout 10s "$@"
}
# once WHAT COMMAND...: runs an etcdctl command; "already exists/granted" is success.
once() {
  local what=$1 out; shift
  if ! out=$(ctl "$@" 2>&1); then
    grep -qi "already" <<<"$out" || die "$what failed: $out"
  fi
}

once "adding user root" user add root --no-password
once "granting role root to root" user grant-role root root
once "adding role rpmp-proxy" role add rpmp-proxy
once "granting rpmp-proxy /rpmp/$cluster/" role grant-permission rpmp-proxy readwrite "/rpmp/$cluster/" --prefix=true
once "adding user rpmp-proxy" user add rpmp-proxy --no-password
once "granting role rpmp-proxy to rpmp-proxy" user grant-role rpmp-proxy rpmp-proxy
once "enabling authentication" auth enable
