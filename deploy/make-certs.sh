#!/usr/bin/env bash
# Makes a small certificate authority and the certificates of an RPMP control plane
# with openssl (docs/security.md "Control plane"), for deploy/local-cluster.sh and as
# a starting point for a real cluster:
#
#   deploy/make-certs.sh DIR [--hosts H1,H2,...] [--nodes N1,N2,...]
#
# DIR/ca.crt, ca.key          the CA (keep ca.key offline in production)
# DIR/proxy.crt, proxy.key    rpmp-proxy's gRPC server certificate for the --hosts
#                             (IP addresses or DNS names; default 127.0.0.1,localhost),
#                             also its etcd client certificate
# DIR/etcd.crt, etcd.key      etcd's server certificate for the same hosts
# DIR/NAME.crt, NAME.key      one per --nodes name (default node0,node1,node2): CN=NAME,
#                             OU=rpmp-node; the proxy binds a node id to it
# DIR/client/, DIR/admin/     RPMP_TLS_DIR directories (ca.crt, client.crt, client.key)
#                             of an application (CN=rpmp-client) and of an operator
#                             (CN=rpmp-admin, OU=rpmp-admin: drain, delete any namespace)
# Keys are mode 600. Existing files are kept (rerunning adds only what is missing).
set -euo pipefail

die() { echo "make-certs: $*" >&2; exit 1; }
[ $# -ge 1 ] || die "usage: $0 DIR [--hosts H1,H2] [--nodes N1,N2]"
dir=$1; shift
hosts=127.0.0.1,localhost
nodes=node0,node1,node2
while [ $# -gt 0 ]; do
  case $1 in
    --hosts) hosts=$2; shift 2 ;;
    --nodes) nodes=$2; shift 2 ;;
    *) die "unknown argument $1" ;;
  esac
done
command -v openssl >/dev/null || die "openssl not found"
mkdir -p "$dir/client" "$dir/admin"
umask 077

san=""
IFS=, read -ra hs <<<"$hosts"
for h in "${hs[@]}"; do
  if [[ $h =~ ^[0-9.]+$ || $h == *:* ]]; then san+="${san:+,}IP:$h"; else san+="${san:+,}DNS:$h"; fi
done

if [ ! -s "$dir/ca.crt" ]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3650 \
    -subj "/CN=rpmp cluster CA" -keyout "$dir/ca.key" -out "$dir/ca.crt" 2>/dev/null
fi

# issue NAME SUBJECT EXTENDED_KEY_USAGE [SAN]: NAME.crt/NAME.key signed by the CA.
issue() {
  local name=$1 subj=$2 eku=$3 alt=${4:-}
  [ -s "$dir/$name.crt" ] && return 0
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "$subj" \
    -keyout "$dir/$name.key" -out "$dir/$name.csr" 2>/dev/null
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature"
    echo "extendedKeyUsage=$eku"
    [ -n "$alt" ] && echo "subjectAltName=$alt"
  } >"$dir/$name.ext"
  openssl x509 -req -in "$dir/$name.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial \
    -days 825 -extfile "$dir/$name.ext" -out "$dir/$name.crt" 2>/dev/null
  rm -f "$dir/$name.csr" "$dir/$name.ext"
}

issue proxy "/CN=rpmp-proxy" serverAuth,clientAuth "$san"
issue etcd "/CN=etcd" serverAuth,clientAuth "$san"
IFS=, read -ra ns <<<"$nodes"
for n in "${ns[@]}"; do issue "$n" "/OU=rpmp-node/CN=$n" clientAuth; done
issue client/client "/CN=rpmp-client" clientAuth
issue admin/client "/OU=rpmp-admin/CN=rpmp-admin" clientAuth
cp "$dir/ca.crt" "$dir/client/ca.crt"
cp "$dir/ca.crt" "$dir/admin/ca.crt"
chmod 644 "$dir"/*.crt "$dir"/*/*.crt
