#!/usr/bin/env bash
# The control plane of the default (secured) local cluster seen through the C++
# clients: deploy/local-cluster.sh (etcd with client-certificate auth, 2 rpmp-proxy
# with mutual TLS, 3 rpmp-server heartbeating with their node certificates) on random
# loopback ports, then rpmpctl and rpmp-server as an attacker would use them:
#   - rpmpctl without RPMP_TLS_DIR (told at once that the proxies serve TLS), and with
#     a certificate of another CA: refused, in under 2 s, naming the certificate;
#   - a third proxy whose certificate (made here with openssl, from the cluster CA) does
#     not name the address it is dialled with: rpmpctl fails in under 2 s naming the
#     certificate's subject and SANs and the address;
#   - an rpmp-server restarted on node0's pool with node1's certificate: its
#     heartbeats are refused (permission denied), node0 stays bound to node0;
#   - drain, `nodes rm`, and `ns rm` of another application's namespace, need the
#     admin certificate (exit 1, permission denied); the owner and the admin succeed;
#   - etcd by role (deploy/etcd-auth.sh): etcdctl with the application's, the admin's or a
#     node's certificate cannot read, write, list or keep alive a lease (TLS refusal: etcd
#     trusts only its own CA); a certificate of the etcd CA whose CN is no etcd user is
#     refused every key (permission denied); the proxies' etcd certificate writes under
#     /rpmp/default/ only; etcd's peer port refuses plaintext and non-etcd certificates.
# The proxies' own attack tests are in proxy/test/integration/security_test.go.
# Missing prerequisites fail.
#
#   tests/security/control_plane_tls_test.sh BIN_DIR
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
BIN="$(cd "${1:?usage: $0 BIN_DIR}" && pwd)"
fail() { echo "FAIL: $*" >&2; exit 1; }
for tool in etcd openssl curl; do
  command -v "$tool" >/dev/null || fail "$tool not installed (deploy/install-deps.sh)"
done

# shellcheck source=../lib/port_block.sh
source "$here/../lib/port_block.sh"
reserve_port_block || fail "no free port block"
work=$(mktemp -d)
base=$PORT_BLOCK
export RPMP_RUN_DIR="$work/cluster" RPMP_BASE_PORT=$base RPMP_BIN_DIR="$BIN" RPMP_POOL_SIZE=128m
impostor="" proxy3=""
cleanup() {
  local rc=$?
  [ "$rc" -ne 0 ] && tail -n 8 "$RPMP_RUN_DIR"/*.log 2>/dev/null
  [ -n "$impostor" ] && kill "$impostor" 2>/dev/null && wait "$impostor" 2>/dev/null
  [ -n "$proxy3" ] && kill "$proxy3" 2>/dev/null && wait "$proxy3" 2>/dev/null
  "$here/../../deploy/local-cluster.sh" stop --wipe >/dev/null 2>&1 || true
  rm -rf "$work"
  release_port_block
}
trap cleanup EXIT

"$here/../../deploy/local-cluster.sh" start >"$work/cluster.out" || { cat "$work/cluster.out"; fail "cluster did not start"; }
val() { sed -n "s/^$1=//p" "$work/cluster.out" | tail -1; }
RPMP_PROXIES=$(val RPMP_PROXIES) RPMP_SECRET_FILE=$(val RPMP_SECRET_FILE) tls=$(val RPMP_TLS_DIR)
[ -n "$tls" ] && [ -n "$RPMP_SECRET_FILE" ] || { cat "$work/cluster.out"; fail "status printed no RPMP_TLS_DIR/RPMP_SECRET_FILE"; }
export RPMP_PROXIES RPMP_SECRET_FILE
admin="$RPMP_RUN_DIR/tls/admin"
ctl() { "$BIN/rpmpctl" --proxy "$RPMP_PROXIES" "$@"; }

# expect_refused WHAT PATTERN COMMAND...: COMMAND exits 1 with PATTERN on stderr.
expect_refused() {
  local what=$1 pattern=$2 rc=0; shift 2
  "$@" >"$work/out" 2>"$work/err" || rc=$?
  [ "$rc" -eq 1 ] || fail "$what: want exit 1, got $rc: $(cat "$work/out" "$work/err")"
  grep -qE "$pattern" "$work/err" || fail "$what: stderr lacks /$pattern/: $(cat "$work/err")"
  echo "refused as expected ($what): $(head -c 300 "$work/err")"
}

echo "== gRPC without TLS, and with a certificate from another CA"
t0=$(date +%s%N)
expect_refused "rpmpctl without RPMP_TLS_DIR" "serves TLS .*RPMP_TLS_DIR" env -u RPMP_TLS_DIR "$BIN/rpmpctl" --proxy "$RPMP_PROXIES" nodes
# Told at once (a TLS probe of the proxy), not after the 10 s retry window.
took_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ "$took_ms" -lt 5000 ] || fail "rpmpctl without RPMP_TLS_DIR took ${took_ms} ms to fail (want < 5000: no retry window)"
echo "ok plaintext against the TLS proxies failed in ${took_ms} ms"
"$here/../../deploy/make-certs.sh" "$work/other-ca" --nodes node0 >/dev/null
mkdir -p "$work/wrong"
cp "$tls/ca.crt" "$work/wrong/ca.crt"                      # trusts the real proxies...
cp "$work/other-ca/admin/client.crt" "$work/other-ca/admin/client.key" "$work/wrong/"  # ...as another CA's "admin"
t0=$(date +%s%N)
expect_refused "rpmpctl with another CA's admin certificate" \
  "refused this client's TLS certificate \(subject CN=rpmp-admin,OU=rpmp-admin; SANs none, from $work/wrong/client.crt\)" \
  env RPMP_TLS_DIR="$work/wrong" "$BIN/rpmpctl" --proxy "$RPMP_PROXIES" nodes
took_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ "$took_ms" -lt 2000 ] || fail "rpmpctl with another CA's certificate took ${took_ms} ms to fail (want < 2000)"
echo "ok another CA's client certificate failed in ${took_ms} ms"
RPMP_TLS_DIR="$tls" ctl nodes >/dev/null || fail "the cluster's own client certificate was refused"

echo "== a proxy certificate that does not name the address it is dialled with"
# Signed by the cluster CA, but for other names: a SAN mismatch, as with a certificate
# made for --hosts proxy1.example and a client listing the proxy by its IP address.
wrong_san="$work/wrong-san"
mkdir -p "$wrong_san"
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=rpmp-proxy" \
  -keyout "$wrong_san/proxy.key" -out "$wrong_san/proxy.csr" 2>/dev/null
printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=DNS:proxy.wrong.example,IP:10.99.0.1\n' \
  >"$wrong_san/proxy.ext"
openssl x509 -req -in "$wrong_san/proxy.csr" -CA "$RPMP_RUN_DIR/tls/ca.crt" -CAkey "$RPMP_RUN_DIR/tls/ca.key" \
  -CAcreateserial -days 1 -extfile "$wrong_san/proxy.ext" -out "$wrong_san/proxy.crt" 2>/dev/null
port3=$((base + 12))
ca="$RPMP_RUN_DIR/tls/ca.crt"
"$BIN/rpmp-proxy" --listen "127.0.0.1:$port3" --etcd "https://127.0.0.1:$base" \
  --tls-cert "$wrong_san/proxy.crt" --tls-key "$wrong_san/proxy.key" --tls-ca "$ca" --etcd-ca "$RPMP_RUN_DIR/tls/etcd-ca.crt" \
  --etcd-cert "$RPMP_RUN_DIR/tls/proxy-etcd.crt" --etcd-key "$RPMP_RUN_DIR/tls/proxy-etcd.key" >"$work/proxy3.log" 2>&1 &
proxy3=$!
deadline=$((SECONDS + 30))
until grep -q "listening on 127.0.0.1:$port3" "$work/proxy3.log"; do
  [ $SECONDS -lt $deadline ] && kill -0 "$proxy3" 2>/dev/null || { cat "$work/proxy3.log"; fail "the third proxy did not start"; }
  sleep 0.1
done
t0=$(date +%s%N)
expect_refused "rpmpctl to a proxy whose certificate does not name its address" \
  "proxy 127.0.0.1:$port3 presents a TLS certificate \(subject CN=rpmp-proxy; SANs DNS:proxy.wrong.example, IP:10.99.0.1\) that does not name 127.0.0.1, the address it was dialled with" \
  env RPMP_TLS_DIR="$tls" "$BIN/rpmpctl" --proxy "127.0.0.1:$port3" nodes
took_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ "$took_ms" -lt 2000 ] || fail "rpmpctl against the wrong SAN took ${took_ms} ms to fail (want < 2000)"
echo "ok the SAN mismatch failed in ${took_ms} ms"
kill -TERM "$proxy3"; wait "$proxy3" 2>/dev/null || true; proxy3=""

echo "== a server heartbeating with another node's certificate"
export RPMP_TLS_DIR="$tls"
node0=$(ctl nodes | awk -v ep="127.0.0.1:$((base + 20))" '$2 == ep {print $1}')
[ -n "$node0" ] || fail "server0 not in the node map: $(ctl nodes)"
kill -TERM "$(cat "$RPMP_RUN_DIR/server0.pid")"
while kill -0 "$(cat "$RPMP_RUN_DIR/server0.pid")" 2>/dev/null; do sleep 0.1; done
"$BIN/rpmp-server" --listen "127.0.0.1:$((base + 20))" --pool "/dev/shm/rpmp-cluster-$base-0.pool:128m" \
  --proxy "$RPMP_PROXIES" --auth-secret-file "$RPMP_SECRET_FILE" --tls-ca "$RPMP_RUN_DIR/tls/ca.crt" \
  --tls-cert "$RPMP_RUN_DIR/tls/node1.crt" --tls-key "$RPMP_RUN_DIR/tls/node1.key" >"$work/impostor.log" 2>&1 &
impostor=$!
deadline=$((SECONDS + 30))
until grep -q "heartbeat failed.*permission denied.*registered to certificate \"node0\"" "$work/impostor.log"; do
  [ $SECONDS -lt $deadline ] || { cat "$work/impostor.log"; fail "the impostor's heartbeat was not refused"; }
  kill -0 "$impostor" 2>/dev/null || { cat "$work/impostor.log"; fail "the impostor server exited"; }
  sleep 0.1
done
echo "refused as expected: $(grep -m1 'permission denied' "$work/impostor.log")"
kill -TERM "$impostor"; wait "$impostor" 2>/dev/null || true; impostor=""
"$here/../../deploy/local-cluster.sh" start >/dev/null || fail "server0 did not come back with its own certificate"

echo "== drain and deleting another application's namespace need the admin certificate"
ctl ns create app/a --replicas 2 >/dev/null || fail "ns create with the client certificate"
echo hello | ctl put app/a k - || fail "put with the client certificate"
expect_refused "drain as an application" "permission denied.*admin" ctl drain "$node0"
RPMP_TLS_DIR="$admin" ctl drain "$node0" >/dev/null || fail "drain as admin"
RPMP_TLS_DIR="$admin" ctl drain "$node0" --cancel >/dev/null || fail "undrain as admin"
expect_refused "nodes rm as an application" "permission denied.*RemoveNode is for admin" ctl nodes rm "$node0"
expect_refused "nodes rm of a LIVE node as admin" "is LIVE: only a DEAD node can be removed" \
  env RPMP_TLS_DIR="$admin" "$BIN/rpmpctl" --proxy "$RPMP_PROXIES" nodes rm "$node0"
# Another application: a certificate of the cluster CA with another CN.
mkdir -p "$work/app2"
cp "$tls/ca.crt" "$work/app2/"
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=app2" \
  -keyout "$work/app2/client.key" -out "$work/app2.csr" 2>/dev/null
printf 'extendedKeyUsage=clientAuth\n' >"$work/app2.ext"
openssl x509 -req -in "$work/app2.csr" -CA "$RPMP_RUN_DIR/tls/ca.crt" -CAkey "$RPMP_RUN_DIR/tls/ca.key" \
  -CAcreateserial -days 1 -extfile "$work/app2.ext" -out "$work/app2/client.crt" 2>/dev/null
RPMP_TLS_DIR="$work/app2" ctl ns show app/a >/dev/null || fail "another application cannot read the placement"
expect_refused "ns rm of another application's namespace" "permission denied.*belongs to \"rpmp-client\"" \
  env RPMP_TLS_DIR="$work/app2" "$BIN/rpmpctl" --proxy "$RPMP_PROXIES" ns rm app/a
[ "$(ctl get app/a k -)" = hello ] || fail "the refused delete changed the namespace"
RPMP_TLS_DIR="$admin" ctl ns rm app/a >/dev/null || fail "ns rm as admin"
ctl ns create app/b --replicas 1 >/dev/null && ctl ns rm app/b >/dev/null || fail "the owner's ns rm"

echo "== etcd by role: only the proxies' certificate reaches etcd, and only /rpmp/default/"
command -v etcdctl >/dev/null || fail "etcdctl not installed (Debian package etcd-client)"
t="$RPMP_RUN_DIR/tls"
# etcd_as CERT KEY ARGS...: etcdctl against the cluster's etcd, trusting the etcd CA
# (at most 15 s: `lease keep-alive` retries a failing connection forever).
etcd_as() {
  local crt=$1 key=$2; shift 2
  ETCDCTL_API=3 timeout 15 etcdctl --endpoints "https://127.0.0.1:$base" --cacert "$t/etcd-ca.crt" --cert "$crt" --key "$key" \
    --dial-timeout 2s --command-timeout 4s "$@"
}
root() { etcd_as "$t/etcd-root.crt" "$t/etcd-root.key" "$@"; }
# etcd_refused WHAT PATTERN CERT KEY ARGS...: etcdctl fails with PATTERN on stderr, prints nothing.
etcd_refused() {
  local what=$1 pattern=$2 rc=0; shift 2
  etcd_as "$@" >"$work/out" 2>"$work/err" || rc=$?
  [ "$rc" -ne 0 ] || fail "etcd $what was allowed: $(cat "$work/out")"
  [ "$rc" -ne 124 ] || echo "no connection within 15 s" >>"$work/err"  # kept retrying
  [ ! -s "$work/out" ] || fail "etcd $what printed data: $(head -c 300 "$work/out")"
  grep -qE "$pattern" "$work/err" || fail "etcd $what: stderr lacks /$pattern/: $(tail -c 400 "$work/err")"
  echo "refused as expected (etcd $what)"
}
ctl ns create app/etcd --replicas 1 >/dev/null || fail "ns create app/etcd"
[ -n "$(root get /rpmp/default/namespaces/app/etcd --keys-only)" ] ||
  fail "the proxies' namespace record is not at /rpmp/default/namespaces/app/etcd: $(root get / --prefix --keys-only | head -20)"
lease=$(root lease list | sed -n 2p)
[ -n "$lease" ] || fail "no proxy election lease in etcd (root: $(root lease list))"
# The application's, the admin's and a node's certificates (cluster CA): no TLS session.
tls_refused="deadline exceeded|certificate|handshake|no connection"
for who in "client/client" "admin/client" "node0"; do
  etcd_refused "read with $who.crt" "$tls_refused" "$t/$who.crt" "$t/$who.key" get /rpmp/default/ --prefix
  etcd_refused "write with $who.crt" "$tls_refused" "$t/$who.crt" "$t/$who.key" put /rpmp/default/namespaces/evil x
done
etcd_refused "lease keep-alive with the application certificate" "$tls_refused" \
  "$t/client/client.crt" "$t/client/client.key" lease keep-alive --once "$lease"
etcd_refused "lease list with the application certificate" "$tls_refused" \
  "$t/client/client.crt" "$t/client/client.key" lease list
# A certificate of the etcd CA whose CN names no etcd user (as if the application's CN had
# been signed by the wrong CA): authenticated, then refused every key by the roles.
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=rpmp-client" \
  -keyout "$work/etcd-app.key" -out "$work/etcd-app.csr" 2>/dev/null
openssl x509 -req -in "$work/etcd-app.csr" -CA "$t/etcd-ca.crt" -CAkey "$t/etcd-ca.key" -CAcreateserial \
  -days 1 -extfile "$work/app2.ext" -out "$work/etcd-app.crt" 2>/dev/null
etcd_refused "read by CN=rpmp-client (etcd CA)" "permission denied|user name not found" \
  "$work/etcd-app.crt" "$work/etcd-app.key" get /rpmp/default/ --prefix
etcd_refused "write by CN=rpmp-client (etcd CA)" "permission denied|user name not found" \
  "$work/etcd-app.crt" "$work/etcd-app.key" put /rpmp/default/namespaces/evil x
etcd_refused "lease revoke by CN=rpmp-client (etcd CA)" "permission denied|user name not found" \
  "$work/etcd-app.crt" "$work/etcd-app.key" lease revoke "$lease"
[ -z "$(root get /rpmp/default/namespaces/evil)" ] || fail "a refused write reached etcd"
# The proxies' etcd certificate: read and write under /rpmp/default/, nothing elsewhere.
px() { etcd_as "$t/proxy-etcd.crt" "$t/proxy-etcd.key" "$@"; }
px put /rpmp/default/etcd-role-test ok >/dev/null || fail "the proxies' certificate cannot write under /rpmp/default/"
[ "$(px get /rpmp/default/etcd-role-test --print-value-only)" = ok ] || fail "the proxies' certificate cannot read back"
px del /rpmp/default/etcd-role-test >/dev/null || fail "the proxies' certificate cannot delete under /rpmp/default/"
etcd_refused "proxy write outside /rpmp/default/" "permission denied" "$t/proxy-etcd.crt" "$t/proxy-etcd.key" put /rpmp/other/x y
etcd_refused "proxy write at /" "permission denied" "$t/proxy-etcd.crt" "$t/proxy-etcd.key" put /evil y
etcd_refused "proxy read of all keys" "permission denied" "$t/proxy-etcd.crt" "$t/proxy-etcd.key" get / --prefix
etcd_refused "proxy user administration" "permission denied" "$t/proxy-etcd.crt" "$t/proxy-etcd.key" user add evil --no-password
[ -z "$(root get /rpmp/other/x)$(root get /evil)" ] || fail "a refused proxy write reached etcd"
# The peer port (BASE+1): TLS with peer certificates of CN=etcd only.
peer="127.0.0.1:$((base + 1))"
code=$(curl -s -m 3 -o "$work/out" -w '%{http_code}' "http://$peer/members" || true)
[ "$code" != 200 ] || fail "etcd's peer port served plaintext: $(head -c 200 "$work/out")"
code=$(curl -s -m 3 -o /dev/null -w '%{http_code}' --cacert "$t/etcd-ca.crt" --cert "$t/proxy-etcd.crt" --key "$t/proxy-etcd.key" \
  "https://$peer/leases" -X POST -d x || true)
[ "$code" = 000 ] || [ "$code" -ge 400 ] || fail "etcd's peer port served a non-etcd certificate (HTTP $code)"
echo "ok etcd's peer port refused plaintext and a non-etcd certificate (HTTP $code)"
ctl nodes >/dev/null || fail "the cluster stopped answering after the etcd attempts"
echo "PASS"
