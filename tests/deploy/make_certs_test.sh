#!/usr/bin/env bash
# deploy/make-certs.sh as docs/deploy.md uses it: one CA for every host (--ca), a rerun
# that changes nothing is silent and keeps the certificates, new --hosts reissue the
# proxy certificate (and say so) with the new SAN, a certificate of another CA is
# reissued, --etcd-hosts sets etcd's SAN, --owner/--etcd-owner own the keys (mode 600),
# and bad arguments fail.
#
#   tests/deploy/make_certs_test.sh
set -euo pipefail
mc="$(cd "$(dirname "$0")/../.." && pwd)/deploy/make-certs.sh"
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v openssl >/dev/null || fail "openssl not installed"
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
san() { openssl x509 -in "$1" -noout -ext subjectAltName | tail -n +2 | tr -d ' '; }
owner=$(id -un)

"$mc" "$w/h1" --ca "$w/ca" --hosts 10.77.0.10 --etcd-hosts 10.77.0.10,etcd1 --nodes "" --owner "$owner" 2>"$w/err1"
"$mc" "$w/h2" --ca "$w/ca" --hosts "" --etcd-hosts "" --nodes storage2 --owner "$owner" 2>"$w/err2"
grep -q "made a new cluster CA" "$w/err1" || fail "first run made no CA"
[ -s "$w/err2" ] && fail "second host's run was not silent: $(cat "$w/err2")"
[ -e "$w/h1/ca.key" ] || [ -e "$w/h2/ca.key" ] && fail "the CA key was copied to a host directory"
cmp -s "$w/h1/ca.crt" "$w/h2/ca.crt" || fail "two hosts got different CAs"
openssl verify -CAfile "$w/ca/ca.crt" "$w/h1/proxy.crt" "$w/h2/storage2.crt" >/dev/null || fail "not signed by the cluster CA"
[ "$(san "$w/h1/proxy.crt")" = "IPAddress:10.77.0.10" ] || fail "proxy SAN: $(san "$w/h1/proxy.crt")"
[ "$(san "$w/h1/etcd.crt")" = "IPAddress:10.77.0.10,DNS:etcd1" ] || fail "etcd SAN: $(san "$w/h1/etcd.crt")"
[ ! -e "$w/h2/proxy.crt" ] && [ ! -e "$w/h2/etcd.crt" ] || fail "--hosts \"\" still made a proxy/etcd certificate"
# etcd's own CA: etcd, its root user and the proxies' etcd client certificate chain to it,
# no cluster-CA certificate does (etcd trusts only etcd-ca.crt: applications cannot connect).
[ -e "$w/h1/etcd-ca.crt" ] && [ ! -e "$w/h1/etcd-ca.key" ] || fail "etcd-ca.crt not copied, or its key copied"
openssl verify -CAfile "$w/ca/etcd-ca.crt" "$w/h1/etcd.crt" "$w/h1/etcd-root.crt" "$w/h1/proxy-etcd.crt" >/dev/null \
  || fail "etcd certificates not signed by the etcd CA"
for c in h1/client/client.crt h1/admin/client.crt h2/storage2.crt h1/proxy.crt; do
  openssl verify -CAfile "$w/ca/etcd-ca.crt" "$w/$c" >/dev/null 2>&1 && fail "$c chains to the etcd CA"
done
openssl x509 -in "$w/h1/etcd-root.crt" -noout -subject | grep -q "CN *= *root" || fail "etcd-root.crt is not CN=root"
openssl x509 -in "$w/h1/proxy-etcd.crt" -noout -subject | grep -q "CN *= *rpmp-proxy" || fail "proxy-etcd.crt is not CN=rpmp-proxy"
[ ! -e "$w/h2/etcd-root.crt" ] && [ ! -e "$w/h2/proxy-etcd.crt" ] || fail "--hosts \"\" --etcd-hosts \"\" made etcd client certificates"
[ "$(stat -c '%a %U' "$w/h2/storage2.key")" = "600 $owner" ] || fail "node key: $(stat -c '%a %U' "$w/h2/storage2.key")"

before=$(openssl x509 -in "$w/h1/proxy.crt" -noout -serial)
"$mc" "$w/h1" --ca "$w/ca" --hosts 10.77.0.10 --etcd-hosts 10.77.0.10,etcd1 --nodes "" 2>"$w/err3"
[ -s "$w/err3" ] && fail "an unchanged rerun said: $(cat "$w/err3")"
[ "$(openssl x509 -in "$w/h1/proxy.crt" -noout -serial)" = "$before" ] || fail "an unchanged rerun reissued"
"$mc" "$w/h1" --ca "$w/ca" --hosts 10.77.0.10,10.77.0.12 --etcd-hosts 10.77.0.10,etcd1 --nodes "" 2>"$w/err4"
grep -q "proxy.crt: SAN changed" "$w/err4" || fail "a SAN change was not reported: $(cat "$w/err4")"
[ "$(san "$w/h1/proxy.crt")" = "IPAddress:10.77.0.10,IPAddress:10.77.0.12" ] || fail "reissued SAN: $(san "$w/h1/proxy.crt")"

"$mc" "$w/other" --hosts 127.0.0.1 --nodes n 2>/dev/null   # a CA of its own
"$mc" "$w/other" --ca "$w/ca" --hosts 127.0.0.1 --nodes n 2>"$w/err5"
grep -q "n.crt: not signed by the cluster CA" "$w/err5" || fail "another CA's certificate kept: $(cat "$w/err5")"
openssl verify -CAfile "$w/ca/ca.crt" "$w/other/n.crt" >/dev/null || fail "not reissued by the cluster CA"

"$mc" "$w/x" --bogus 2>/dev/null && fail "an unknown argument was accepted"
"$mc" "$w/x" --hosts 2>/dev/null && fail "--hosts without a value was accepted"
"$mc" "$w/x" --owner no-such-user-rpmp20 2>/dev/null && fail "an unknown --owner was accepted"
echo "ok: one CA for all hosts, silent reruns, SAN changes reissued and reported, owners and modes"
