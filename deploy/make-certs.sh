#!/usr/bin/env bash
# Makes the certificates of an RPMP cluster with openssl, signed by one CA for the whole
# cluster, and those of etcd and its clients, signed by a second CA that only etcd
# trusts, so that no application or node certificate can even connect to etcd
# (docs/security.md "Control plane", docs/deploy.md "Certificates"). Used by
# deploy/local-cluster.sh, by tests, and by operators on each host:
#
#   make-certs.sh DIR [--ca CA_DIR] [--hosts H1,H2,...] [--etcd-hosts H1,...]
#                     [--nodes N1,N2,...] [--owner USER] [--etcd-owner USER]
#
# --ca CA_DIR       the cluster's CA is CA_DIR/ca.crt + CA_DIR/ca.key, etcd's CA
#                   CA_DIR/etcd-ca.crt + etcd-ca.key (made there when missing); DIR gets
#                   copies of ca.crt and etcd-ca.crt, never the keys. Without --ca the CAs
#                   are in DIR (one pair per DIR: fine on one machine, wrong for a cluster
#                   whose hosts each run this script).
# --hosts LIST      DIR/proxy.crt, proxy.key: rpmp-proxy's gRPC server certificate for
#                   these IP addresses or DNS names (what clients and servers dial; default
#                   127.0.0.1,localhost); DIR/proxy-etcd.crt, proxy-etcd.key: its etcd
#                   client certificate (etcd CA, CN=rpmp-proxy). "" = none.
# --etcd-hosts LIST DIR/etcd.crt, etcd.key: etcd's server (and peer) certificate (etcd CA,
#                   CN=etcd) for the addresses in the proxies' --etcd URLs (default: the
#                   --hosts); DIR/etcd-root.crt, etcd-root.key (etcd CA, CN=root): etcd's
#                   root user, for deploy/etcd-auth.sh and operators only (key owned by
#                   whoever runs this). "" = none.
# --nodes LIST      DIR/NAME.crt, NAME.key per name (default node0,node1,node2): CN=NAME,
#                   OU=rpmp-node; the proxy binds a node id to it. "" = none.
# DIR/client/, DIR/admin/  RPMP_TLS_DIR directories (ca.crt, client.crt, client.key) of an
#                   application (CN=rpmp-client) and of an operator (CN=rpmp-admin,
#                   OU=rpmp-admin: drain, nodes rm, delete any namespace).
# --owner USER      keys (mode 600) owned by USER and its group, e.g. rpmp (the units run
#                   as User=rpmp); default: whoever runs the script.
# --etcd-owner USER owner of etcd.key (default: user etcd when it exists, else --owner).
#
# Rerunning is safe: existing certificates are kept, except one whose SAN differs from
# the requested hosts or which the CA in use did not sign; those are reissued and the
# script says so on stderr.
set -euo pipefail

die() { echo "make-certs: $*" >&2; exit 1; }
usage="usage: $0 DIR [--ca CA_DIR] [--hosts H1,H2] [--etcd-hosts H1,H2] [--nodes N1,N2] [--owner USER] [--etcd-owner USER]"
[ $# -ge 1 ] || die "$usage"
dir=$1; shift
hosts=127.0.0.1,localhost
etcd_hosts=unset
nodes=node0,node1,node2
ca_dir=""
owner=""
etcd_owner=""
while [ $# -gt 0 ]; do
  case $1 in --hosts | --etcd-hosts | --nodes | --ca | --owner | --etcd-owner) ;;
    *) die "unknown argument $1 ($usage)" ;;
  esac
  [ $# -ge 2 ] || die "$1 needs a value ($usage)"
  case $1 in
    --hosts) hosts=$2 ;;
    --etcd-hosts) etcd_hosts=$2 ;;
    --nodes) nodes=$2 ;;
    --ca) ca_dir=$2 ;;
    --owner) owner=$2 ;;
    --etcd-owner) etcd_owner=$2 ;;
  esac
  shift 2
done
[ "$etcd_hosts" = unset ] && etcd_hosts=$hosts
command -v openssl >/dev/null || die "openssl not found"
if [ -n "$owner" ]; then getent passwd "$owner" >/dev/null || die "--owner $owner: no such user"; fi
if [ -z "$etcd_owner" ]; then
  if getent passwd etcd >/dev/null; then etcd_owner=etcd; else etcd_owner=$owner; fi
elif ! getent passwd "$etcd_owner" >/dev/null; then
  die "--etcd-owner $etcd_owner: no such user"
fi
umask 077
mkdir -p "$dir/client" "$dir/admin"
ca_dir=${ca_dir:-$dir}
mkdir -p "$ca_dir"

# make_ca NAME SUBJECT WHAT: CA_DIR/NAME.crt + NAME.key, made when missing; DIR/NAME.crt a copy.
make_ca() {
  local name=$1 subj=$2 what=$3
  if [ ! -s "$ca_dir/$name.crt" ]; then
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3650 \
      -subj "$subj" -keyout "$ca_dir/$name.key" -out "$ca_dir/$name.crt" 2>/dev/null
    chmod 644 "$ca_dir/$name.crt"
    echo "make-certs: made a new $what in $ca_dir (keep $name.key offline)" >&2
  fi
  [ -s "$ca_dir/$name.key" ] || die "$ca_dir/$name.key missing: the CA's key is needed to sign"
  if [ "$ca_dir" != "$dir" ] && ! cmp -s "$ca_dir/$name.crt" "$dir/$name.crt"; then
    [ -s "$dir/$name.crt" ] && echo "make-certs: $dir/$name.crt replaced by the $what of $ca_dir" >&2
    cp "$ca_dir/$name.crt" "$dir/$name.crt"
  fi
}
make_ca ca "/CN=rpmp cluster CA" "cluster CA"
make_ca etcd-ca "/CN=rpmp etcd CA" "etcd CA"

# san_of LIST: "IP:a,DNS:b" for a comma-separated list of addresses and names.
san_of() {
  local out="" h
  IFS=, read -ra hs <<<"$1"
  for h in "${hs[@]}"; do
    [ -n "$h" ] || continue
    if [[ $h =~ ^[0-9.]+$ || $h == *:* ]]; then out+="${out:+,}IP:$h"; else out+="${out:+,}DNS:$h"; fi
  done
  echo "$out"
}
# sorted SAN: a SAN list in a canonical order, to compare requested and issued.
sorted() { tr -d ' ' <<<"$1" | tr ',' '\n' | sed 's/^IPAddress:/IP:/' | grep -v '^$' | sort | paste -sd, - || true; }
# issued_san CRT: the SAN of an existing certificate, canonical.
issued_san() {
  sorted "$(openssl x509 -in "$1" -noout -ext subjectAltName 2>/dev/null | tail -n +2 | tr -d ' ')"
}

# issue NAME SUBJECT EXTENDED_KEY_USAGE [SAN] [CA]: NAME.crt/NAME.key signed by CA (ca, the
# cluster's, by default; etcd-ca); an existing certificate is kept unless its SAN or its CA
# differs.
issue() {
  local name=$1 subj=$2 eku=$3 alt=${4:-} ca=${5:-ca}
  local what="cluster CA"; [ "$ca" = ca ] || what="etcd CA"
  if [ -s "$dir/$name.crt" ] && [ -s "$dir/$name.key" ]; then
    local reason=""
    if ! openssl verify -CAfile "$dir/$ca.crt" "$dir/$name.crt" >/dev/null 2>&1; then
      reason="not signed by the $what $ca_dir/$ca.crt"
    elif [ "$(issued_san "$dir/$name.crt")" != "$(sorted "$alt")" ]; then
      reason="SAN changed from '$(issued_san "$dir/$name.crt")' to '$(sorted "$alt")'"
    fi
    [ -z "$reason" ] && return 0
    echo "make-certs: $dir/$name.crt: $reason; reissued" >&2
  fi
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "$subj" \
    -keyout "$dir/$name.key" -out "$dir/$name.csr" 2>/dev/null
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature"
    echo "extendedKeyUsage=$eku"
    [ -n "$alt" ] && echo "subjectAltName=$alt"
  } >"$dir/$name.ext"
  openssl x509 -req -in "$dir/$name.csr" -CA "$ca_dir/$ca.crt" -CAkey "$ca_dir/$ca.key" \
    -CAcreateserial -days 825 -extfile "$dir/$name.ext" -out "$dir/$name.crt" 2>/dev/null
  rm -f "$dir/$name.csr" "$dir/$name.ext"
}

# own KEY USER: the key readable by USER (and its group) only.
own() {
  chmod 600 "$1"
  [ -n "$2" ] && chown "$2:$(id -gn "$2")" "$1"
  return 0
}

if [ -n "$hosts" ]; then
  issue proxy "/CN=rpmp-proxy" serverAuth,clientAuth "$(san_of "$hosts")"
  own "$dir/proxy.key" "$owner"
  issue proxy-etcd "/CN=rpmp-proxy" clientAuth "" etcd-ca
  own "$dir/proxy-etcd.key" "$owner"
fi
if [ -n "$etcd_hosts" ]; then
  issue etcd "/CN=etcd" serverAuth,clientAuth "$(san_of "$etcd_hosts")" etcd-ca
  own "$dir/etcd.key" "$etcd_owner"
  issue etcd-root "/CN=root" clientAuth "" etcd-ca
  own "$dir/etcd-root.key" ""
fi
IFS=, read -ra ns <<<"$nodes"
for n in "${ns[@]}"; do
  [ -n "$n" ] || continue
  issue "$n" "/OU=rpmp-node/CN=$n" clientAuth
  own "$dir/$n.key" "$owner"
done
issue client/client "/CN=rpmp-client" clientAuth
issue admin/client "/OU=rpmp-admin/CN=rpmp-admin" clientAuth
cp "$dir/ca.crt" "$dir/client/ca.crt"
cp "$dir/ca.crt" "$dir/admin/ca.crt"
chmod 644 "$dir"/*.crt "$dir"/*/*.crt
chmod 755 "$dir" "$dir/client" "$dir/admin"
