#!/usr/bin/env bash
# Tenants (docs/security.md "Tenants") on the default (secured) local cluster: the
# proxies issue per-application credentials (--token-secret-file), and two applications,
# A (certificate CN=rpmp-client) and B (CN=app-b, made here from the cluster CA), each
# hold only their own credential (RPMP_TOKEN_FILE, no RPMP_SECRET_FILE):
#   - `rpmpctl token issue`: B's prefix is claimed first come; a second claim of it, or
#     of a prefix over or under it, exits 1 naming the holder; "*" is for the admin only;
#   - each writes and reads its own prefix;
#   - A's credential cannot read, list or delete B's keys, nor delete B's namespace,
#     through the cluster client, nor read or delete them on B's server directly
#     (rpmpctl --server), each refusal exit 1 "permission denied";
#   - B still reads its data afterwards, and a credential of another secret is refused;
#   - A's namespace is owned by its credential, not its certificate: with A's certificate,
#     `rpmpctl ns rm` of it with B's credential or with none exits 1; with A's it works.
# Missing prerequisites fail.
#
#   tests/security/tenant_isolation_test.sh BIN_DIR
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
base=${RPMP_TEST_BASE_PORT:-$PORT_BLOCK}
export RPMP_RUN_DIR="$work/cluster" RPMP_BASE_PORT=$base RPMP_BIN_DIR="$BIN" RPMP_POOL_SIZE=128m
cleanup() {
  local rc=$?
  [ "$rc" -ne 0 ] && tail -n 8 "$RPMP_RUN_DIR"/*.log 2>/dev/null
  "$here/../../deploy/local-cluster.sh" stop --wipe >/dev/null 2>&1 || true
  rm -rf "$work"
  release_port_block
}
trap cleanup EXIT

"$here/../../deploy/local-cluster.sh" start >"$work/cluster.out" || { cat "$work/cluster.out"; fail "cluster did not start"; }
val() { sed -n "s/^$1=//p" "$work/cluster.out" | tail -1; }
RPMP_PROXIES=$(val RPMP_PROXIES) tls=$(val RPMP_TLS_DIR)
[ -n "$tls" ] || fail "status printed no RPMP_TLS_DIR"
export RPMP_PROXIES
unset RPMP_SECRET_FILE RPMP_TOKEN_FILE
ca="$RPMP_RUN_DIR/tls"

# B's certificate: CN=app-b, an application (no OU), from the cluster CA.
certb="$work/tls-b"
mkdir -p "$certb" && chmod 700 "$certb"
cp "$tls/ca.crt" "$certb/ca.crt"
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=app-b" \
  -keyout "$certb/client.key" -out "$work/b.csr" 2>/dev/null
openssl x509 -req -in "$work/b.csr" -CA "$ca/ca.crt" -CAkey "$ca/ca.key" -CAcreateserial \
  -days 1 -out "$certb/client.crt" 2>/dev/null
chmod 600 "$certb/client.key"

ctl() { "$BIN/rpmpctl" --proxy "$RPMP_PROXIES" "$@"; }
asA() { RPMP_TLS_DIR="$tls" RPMP_TOKEN_FILE="$work/a.token" "$@"; }
asB() { RPMP_TLS_DIR="$certb" RPMP_TOKEN_FILE="$work/b.token" "$@"; }

# expect_refused WHAT PATTERN COMMAND...: COMMAND exits 1 with PATTERN on stderr.
expect_refused() {
  local what=$1 pattern=$2 rc=0; shift 2
  "$@" >"$work/out" 2>"$work/err" || rc=$?
  [ "$rc" -eq 1 ] || fail "$what: want exit 1, got $rc: $(cat "$work/out" "$work/err")"
  grep -qiE "$pattern" "$work/err" || fail "$what: stderr lacks /$pattern/: $(cat "$work/err")"
  echo "refused as expected ($what): $(head -c 300 "$work/err")"
}
# issue WHO PREFIX APP: a credential into $work/WHO.token (mode 600).
issue() {
  (umask 077 && RPMP_TLS_DIR=$2 ctl token issue --prefix "$3" --app "$4" --ttl 10m >"$work/$1.token" 2>"$work/$1.err") ||
    fail "token issue $3 as $1: $(cat "$work/$1.err")"
  grep -q "^v1\." "$work/$1.token" || fail "token issue printed no token: $(cat "$work/$1.token")"
  echo "issued $1: $(cat "$work/$1.err")"
}

issue a "$tls" tenants/a/ a
issue b "$certb" tenants/b/ b
expect_refused "a second claim of tenants/b/" 'already exists.*claimed by application "b"' \
  env RPMP_TLS_DIR="$tls" "$BIN/rpmpctl" --proxy "$RPMP_PROXIES" token issue --prefix tenants/b/ --app a
expect_refused "a claim under tenants/b/" 'claimed by application "b"' \
  env RPMP_TLS_DIR="$tls" "$BIN/rpmpctl" --proxy "$RPMP_PROXIES" token issue --prefix tenants/b/x/ --app a
expect_refused "a claim over tenants/a/ and tenants/b/" 'claimed by application' \
  env RPMP_TLS_DIR="$tls" "$BIN/rpmpctl" --proxy "$RPMP_PROXIES" token issue --prefix tenants/ --app a
expect_refused "* for an application" 'admin certificates only' \
  env RPMP_TLS_DIR="$tls" "$BIN/rpmpctl" --proxy "$RPMP_PROXIES" token issue --prefix '*' --app a
RPMP_TLS_DIR="$ca/admin" ctl token issue --prefix '*' --app ops >/dev/null 2>&1 || fail "the admin cannot issue *"

# Each writes and reads its own prefix.
echo "B's data $RANDOM$RANDOM" >"$work/b.data"
echo "A's data $RANDOM$RANDOM" >"$work/a.data"
asB ctl ns create tenants/b/data --replicas 2 >/dev/null || fail "B cannot create its namespace"
asB ctl put tenants/b/data k "$work/b.data" || fail "B cannot write its namespace"
asA ctl ns create tenants/a/data --replicas 2 >/dev/null || fail "A cannot create its namespace"
asA ctl put tenants/a/data k "$work/a.data" || fail "A cannot write its namespace"
asA ctl get tenants/a/data k - | cmp -s - "$work/a.data" || fail "A reads back other bytes"

# A's credential on B's namespace: through the cluster client...
expect_refused "A reads B's key (cluster)" "permission denied" asA ctl get tenants/b/data k -
expect_refused "A lists B's namespace (cluster)" "permission denied" asA ctl ls tenants/b/data
expect_refused "A overwrites B's key (cluster)" "permission denied" asA ctl put tenants/b/data k "$work/a.data"
expect_refused "A deletes B's key (cluster)" "permission denied" asA ctl del tenants/b/data k
expect_refused "A deletes B's namespace (cluster)" "permission denied" asA ctl ns rm tenants/b/data
# ...and on B's servers directly.
endpoints=$(asB ctl ns show tenants/b/data | awk '$1 == "member" {print $3}')
[ -n "$endpoints" ] || fail "no member of tenants/b/data"
for ep in $endpoints; do
  expect_refused "A reads B's key on $ep" "permission denied" asA "$BIN/rpmpctl" --server "$ep" get tenants/b/data k -
  expect_refused "A deletes B's key on $ep" "permission denied" asA "$BIN/rpmpctl" --server "$ep" del tenants/b/data k
  expect_refused "A deletes B's namespace on $ep" "permission denied" asA "$BIN/rpmpctl" --server "$ep" rmns tenants/b/data
done
asB ctl get tenants/b/data k - | cmp -s - "$work/b.data" || fail "B's data changed"

# A credential minted under another secret is refused by the servers.
sed 's/\.[0-9a-f]*$/.'"$(printf '%064d' 0)"'/' "$work/a.token" >"$work/forged.token"
chmod 600 "$work/forged.token"
expect_refused "a forged credential" "permission denied|unauthenticated" \
  env RPMP_TLS_DIR="$tls" RPMP_TOKEN_FILE="$work/forged.token" "$BIN/rpmpctl" --proxy "$RPMP_PROXIES" get tenants/a/data k -
grep -rq "$(cut -d. -f5 "$work/a.token")" "$RPMP_RUN_DIR"/*.log && fail "a credential's MAC is in a log"

# Namespace deletion through the proxy goes by credential: A's certificate is not enough.
expect_refused "A's certificate with B's credential removes A's namespace" "outside this credential's prefix" \
  env RPMP_TLS_DIR="$tls" RPMP_TOKEN_FILE="$work/b.token" "$BIN/rpmpctl" --proxy "$RPMP_PROXIES" ns rm tenants/a/data
expect_refused "A's certificate without a credential removes A's namespace" "permission denied" \
  env RPMP_TLS_DIR="$tls" "$BIN/rpmpctl" --proxy "$RPMP_PROXIES" ns rm tenants/a/data
asA ctl ns rm tenants/a/data >/dev/null || fail "A cannot remove its own namespace"
echo "PASS: tenants are isolated through the cluster client and on direct server connections"
