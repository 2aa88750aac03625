#!/usr/bin/env bash
# docs/deploy.md followed on six hosts simulated with network namespaces on a bridge
# (10.77.0.0/24): etcd + proxy1 on .10, proxy2 on .11, storage1-3 on .21-.23, a client on
# .30. Each host gets the built Debian packages it needs installed with `dpkg --root`
# into a root of its own (systemd cannot run here; the maintainer scripts run with
# DPKG_ROOT set). Then, as the guide says: one cluster CA, per-host certificates with
# make-certs.sh --ca ... --owner, the secret, the shipped configs edited for each host,
# etcd with client TLS, and each unit's ExecStart line run under the unit's user (user
# nobody stands in for rpmp, so the key owners and modes are really exercised). From the
# client namespace: rpmpctl (3 LIVE nodes at their addresses, a 2-copy namespace
# written and read), rpmp-bench, a storage node killed with kill -9 (data still read
# from the other copy), restarted (LIVE again, with its data), and the Spark demo job
# (deploy/spark_demo.py, installed by rpmp-spark-jars) with its exact result.
# Every process, namespace and link it makes is removed on exit, also on failure.
# Needs root, ip, dpkg, etcd, openssl, curl, setpriv and spark-submit (SPARK_SUBMIT or
# PATH); a missing one fails the test. The packages come from BUILD (package_test.sh
# builds them; ctest runs it first, fixture debian_packages).
#
#   tests/deploy/netns_deploy_test.sh BUILD_DIR
set -euo pipefail
BUILD="$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)"
here="$(cd "$(dirname "$0")" && pwd)"
fail() { echo "FAIL: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || fail "needs root (network namespaces); CI runs as root"
SPARK_SUBMIT=${SPARK_SUBMIT:-$(command -v spark-submit || true)}
[ -n "$SPARK_SUBMIT" ] || fail "spark-submit not found (deploy/install-spark.sh; or set SPARK_SUBMIT)"
for tool in ip dpkg dpkg-deb etcd openssl curl setpriv; do
  command -v "$tool" >/dev/null || fail "$tool not installed (deploy/install-deps.sh)"
done
# shellcheck source=tests/deploy/netns_lib.sh
. "$here/netns_lib.sh"

work=$(mktemp -d /tmp/rpmp20-deploy.XXXXXX)
chmod 755 "$work"   # the hosts' users (not root) reach their roots inside
cleanup() {
  local rc=$?
  if [ "$rc" -ne 0 ]; then
    for f in "$work"/*.log; do [ -f "$f" ] && { echo "--- $f"; tail -n 15 "$f"; }; done >&2
  fi
  disown -a 2>/dev/null || true   # no "Killed" lines for the processes stopped below
  netns_cleanup
  rm -rf "$work" /dev/shm/rpmp20-*.pool
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
netns_remove_stale
start=$SECONDS

# --- hosts and packages -------------------------------------------------------------
declare -A addr=([p1]=10.77.0.10 [p2]=10.77.0.11 [s1]=10.77.0.21 [s2]=10.77.0.22 [s3]=10.77.0.23 [c]=10.77.0.30)
declare -A pkgs=([p1]="rpmp-common rpmp-proxy rpmpctl" [p2]="rpmp-common rpmp-proxy"
  [s1]="rpmp-common rpmp-server" [s2]="rpmp-common rpmp-server" [s3]="rpmp-common rpmp-server"
  [c]="rpmp-common rpmpctl rpmp-bench librpmp rpmp-spark-jars")
for h in p1 p2 s1 s2 s3 c; do netns_up "$h" "${addr[$h]}"; done
deb() { ls "$BUILD/$1"_*.deb 2>/dev/null | head -1; }
for h in p1 p2 s1 s2 s3 c; do
  r=$work/$h
  mkdir -p "$r/var/lib/dpkg/info" "$r/var/lib/dpkg/updates"
  touch "$r/var/lib/dpkg/status"
  debs=()
  for p in ${pkgs[$h]}; do
    [ -n "$(deb "$p")" ] || fail "package $p not built in $BUILD (tests/package_test.sh; -DRPMP_JAVA=ON for the jars)"
    debs+=("$(deb "$p")")
  done
  dpkg --root="$r" --force-script-chrootless --force-depends --log=/dev/null -i "${debs[@]}" \
    </dev/null >"$work/dpkg-$h.log" 2>&1 || fail "dpkg --root -i on $h (log $work/dpkg-$h.log)"
done

# --- certificates from one cluster CA, the secret (docs/deploy.md) --------------------
user=nobody   # stands in for rpmp (and etcd): not root, so owners and modes matter
certs() { # certs HOST MAKE-CERTS-ARGS...: on HOST, /etc/rpmp/tls from the cluster CA
  local h=$1; shift
  "$work/$h/usr/share/rpmp/make-certs.sh" "$work/$h/etc/rpmp/tls" --ca "$work/ca" "$@" \
    --owner "$user" --etcd-owner "$user" 2>>"$work/certs.log"
}
certs p1 --hosts "${addr[p1]}" --etcd-hosts "${addr[p1]}" --nodes ""
certs p2 --hosts "${addr[p2]}" --etcd-hosts "" --nodes ""
for i in 1 2 3; do certs "s$i" --hosts "" --etcd-hosts "" --nodes "storage$i"; done
certs c --hosts "" --etcd-hosts "" --nodes ""
[ "$(grep -c 'made a new cluster CA' "$work/certs.log")" -eq 1 ] || fail "more than one CA made"
(umask 077 && openssl rand -hex 32 >"$work/cluster.secret")
for h in s1 s2 s3 c; do
  install -o "$user" -m 600 "$work/cluster.secret" "$work/$h/etc/rpmp/cluster.secret"
done

# --- configs: the shipped files, edited as the guide says ----------------------------
# In the guide the reference addresses are 10.0.0.1/.2 (proxies, etcd) and .11-.13
# (storage); here they are this bridge's. /etc/rpmp is under each host's root.
for i in 1 2 3; do
  r=$work/s$i
  sed -i -e "s/10\.0\.0\.11:/${addr[s$i]}:/g; s/10\.0\.0\.1:/${addr[p1]}:/; s/10\.0\.0\.2:/${addr[p2]}:/" \
    -e "s/storage1\./storage$i./g; s|/etc/rpmp/|$r/etc/rpmp/|g" \
    -e "s|path: /dev/dax0.0|path: /dev/shm/rpmp20-s$i.pool|; s/^    size: 0\b/    size: 384m/" \
    "$r/etc/rpmp/rpmp-server.yaml"
done
for h in p1 p2; do
  sed -i -e "s/--listen 10\.0\.0\.1:/--listen ${addr[$h]}:/; s/--metrics-listen 10\.0\.0\.1:/--metrics-listen ${addr[$h]}:/" \
    -e "s|https://10\.0\.0\.1:|https://${addr[p1]}:|; s|/etc/rpmp/|$work/$h/etc/rpmp/|g" \
    "$work/$h/etc/rpmp/rpmp-proxy.flags"
done
grep -q "listen: ${addr[s2]}:7300" "$work/s2/etc/rpmp/rpmp-server.yaml" || fail "storage2 config not edited"
grep -q -- "--listen ${addr[p2]}:7070" "$work/p2/etc/rpmp/rpmp-proxy.flags" || fail "proxy2 flags not edited"

# --- start: etcd (Debian's /etc/default/etcd variables), then each unit's ExecStart ---
# run_as HOST NAME CMD...: CMD in HOST's namespace as $user, with the units' limits
# where this machine lets root raise them. pid[NAME] is CMD's own pid (ip netns exec,
# bash and setpriv each exec the next; a shell function here would add a subshell).
declare -A pid
run_as() {
  local h=$1 name=$2; shift 2
  ip netns exec "rpmp20-$h" bash -c 'ulimit -l unlimited 2>/dev/null; ulimit -n 65536 2>/dev/null
    exec setpriv --reuid="$0" --regid="$(id -g "$0")" --clear-groups -- "$@"' \
    "$user" "$@" >>"$work/$name.log" 2>&1 &
  pid[$name]=$!
}
tls=$work/p1/etc/rpmp/tls
cat >"$work/p1/etc/default-etcd" <<EOF
ETCD_NAME=etcd1
ETCD_DATA_DIR=$work/p1/var/lib/etcd
ETCD_LISTEN_CLIENT_URLS=https://${addr[p1]}:2379
ETCD_ADVERTISE_CLIENT_URLS=https://${addr[p1]}:2379
ETCD_LISTEN_PEER_URLS=https://${addr[p1]}:2380
ETCD_INITIAL_ADVERTISE_PEER_URLS=https://${addr[p1]}:2380
ETCD_INITIAL_CLUSTER=etcd1=https://${addr[p1]}:2380
ETCD_CERT_FILE=$tls/etcd.crt
ETCD_KEY_FILE=$tls/etcd.key
ETCD_CLIENT_CERT_AUTH=true
ETCD_TRUSTED_CA_FILE=$tls/etcd-ca.crt
ETCD_PEER_CERT_FILE=$tls/etcd.crt
ETCD_PEER_KEY_FILE=$tls/etcd.key
ETCD_PEER_CLIENT_CERT_AUTH=true
ETCD_PEER_TRUSTED_CA_FILE=$tls/etcd-ca.crt
ETCD_PEER_CERT_ALLOWED_CN=etcd
EOF
install -d -o "$user" -m 700 "$work/p1/var/lib/etcd"
mapfile -t etcd_env <"$work/p1/etc/default-etcd"
run_as p1 etcd env "${etcd_env[@]}" etcd

# exec_start HOST UNIT: the unit's ExecStart words, /usr/bin and /etc/rpmp under HOST's
# root, $VAR words expanded (split at blanks, as systemd does) from its EnvironmentFile.
exec_start() {
  local r=$work/$1 unit=$work/$1/usr/lib/systemd/system/$2.service line envfile w
  line=$(sed -n 's/^ExecStart=//p' "$unit")
  line=${line//\/usr\/bin\//$r/usr/bin/}
  envfile=$(sed -n 's/^EnvironmentFile=//p' "$unit")
  # shellcheck disable=SC1090
  [ -n "$envfile" ] && . "$r$envfile"
  for w in $line; do
    if [[ $w == \$* ]]; then w=${w#\$}; printf '%s\n' ${!w}; else printf '%s\n' "$w"; fi
  done | sed "s|^/etc/rpmp/|$r/etc/rpmp/|"
}
wait_log() {  # wait_log NAME SECONDS PATTERN
  local deadline=$((SECONDS + $2))
  until grep -q "$3" "$work/$1.log" 2>/dev/null; do
    kill -0 "${pid[$1]}" 2>/dev/null || fail "$1 exited before logging '$3'"
    [ $SECONDS -lt $deadline ] || fail "$1 did not log '$3' within $2 s"
    sleep 0.1
  done
}
client_tls=(--cacert "$tls/etcd-ca.crt" --cert "$tls/proxy-etcd.crt" --key "$tls/proxy-etcd.key")
deadline=$((SECONDS + 30))
until on p1 curl -sf "${client_tls[@]}" "https://${addr[p1]}:2379/health" >/dev/null 2>&1; do
  kill -0 "${pid[etcd]}" 2>/dev/null || fail "etcd exited"
  [ $SECONDS -lt $deadline ] || fail "etcd not healthy over https within 30 s"
  sleep 0.2
done
on p1 "$work/p1/usr/share/rpmp/etcd-auth.sh" "https://${addr[p1]}:2379" "$tls" || fail "etcd-auth.sh (docs/deploy.md step 4)"
for h in p1 p2; do
  mapfile -t cmd < <(exec_start "$h" rpmp-proxy)
  run_as "$h" "proxy-$h" "${cmd[@]}"
done
for h in p1 p2; do wait_log "proxy-$h" 30 "listening on"; done
start_server() {
  local cmd
  mapfile -t cmd < <(exec_start "$1" rpmp-server)
  : >"$work/server-$1.log"
  run_as "$1" "server-$1" "${cmd[@]}"
}
for i in 1 2 3; do start_server "s$i"; done
for i in 1 2 3; do wait_log "server-s$i" 60 "rpmp-server ready"; done

# --- the client host ----------------------------------------------------------------
C=$work/c
export RPMP_SECRET_FILE=$C/etc/rpmp/cluster.secret RPMP_TLS_DIR=$C/etc/rpmp/tls/client
export RPMP_PROXIES=${addr[p1]}:7070,${addr[p2]}:7070
ctl() { on c "$C/usr/bin/rpmpctl" --proxy "$RPMP_PROXIES" "$@"; }
live_at_own_addresses() {
  local out; out=$(ctl nodes 2>/dev/null) || return 1
  for i in 1 2 3; do grep -q "${addr[s$i]}:7300 .*LIVE\|LIVE.*${addr[s$i]}:7300" <<<"$out" || return 1; done
}
wait_until() {  # wait_until WHAT SECONDS CMD...
  local what=$1 deadline=$((SECONDS + $2)); shift 2
  until "$@"; do [ $SECONDS -lt $deadline ] || fail "$what (not within the deadline)"; sleep 0.2; done
}
wait_until "3 storage nodes LIVE at 10.77.0.21-23" 30 live_at_own_addresses
ctl ns create deploy --replicas 2 >/dev/null || fail "rpmpctl ns create deploy --replicas 2"
head -c 4194304 /dev/urandom >"$work/blob"
ctl put deploy blob "$work/blob" || fail "rpmpctl put"
ctl get deploy blob "$work/blob.back" && cmp -s "$work/blob" "$work/blob.back" || fail "rpmpctl get: bytes differ"
bench=$(on c "$C/usr/bin/rpmp-bench" --proxy "$RPMP_PROXIES" --replicas 2 --workloads put,get --sizes 64k \
  --threads 1 --depth 4 --seconds 1 2>&1) || fail "rpmp-bench: $bench"
grep -q 'workload=get' <<<"$bench" || fail "rpmp-bench printed no get line: $bench"
echo "$bench" | grep 'workload=' | sed 's/^/  bench: /'

# --- kill -9 a storage node holding the namespace, read on, restart it ----------------
victim_ep=$(ctl ns show deploy | awk '/^  member/ {print $3; exit}')
victim=""
for i in 1 2 3; do [ "$victim_ep" = "${addr[s$i]}:7300" ] && victim=s$i; done
[ -n "$victim" ] || fail "first member of deploy ($victim_ep) is none of the storage hosts"
kill -9 "${pid[server-$victim]}"
wait "${pid[server-$victim]}" 2>/dev/null || true
rm -f "$work/blob.back"
ctl get deploy blob "$work/blob.back" && cmp -s "$work/blob" "$work/blob.back" ||
  fail "get after kill -9 of $victim: not read from the other copy"
start_server "$victim"
wait_log "server-$victim" 60 "rpmp-server ready"
wait_until "$victim LIVE again after its restart" 30 live_at_own_addresses
rm -f "$work/blob.back"
ctl get deploy blob "$work/blob.back" && cmp -s "$work/blob" "$work/blob.back" || fail "get after the restart"

# --- the Spark demo job from the client host ------------------------------------------
jar=$C/usr/share/rpmp/jars/rpmp-spark.jar
out=$(on c env SPARK_LOCAL_IP="${addr[c]}" "$SPARK_SUBMIT" --master "local[2]" --driver-memory 1g \
  --conf spark.ui.enabled=false --conf spark.driver.host="${addr[c]}" \
  --conf spark.shuffle.manager=io.rpmp.spark.PmofShuffleManager --conf spark.rpmp.replicas=2 \
  --conf spark.rpmp.proxies="$RPMP_PROXIES" --conf spark.rpmp.fallback=fail \
  --conf spark.driver.extraClassPath="$jar" --conf spark.executor.extraClassPath="$jar" \
  "$C/usr/share/rpmp/spark_demo.py" 2>"$work/spark.log") || fail "spark job failed: $out"
expected="spark demo: sortByKey of 400000 records and reduceByKey of 997 words correct, shuffle manager io.rpmp.spark.PmofShuffleManager"
grep -qxF "$expected" <<<"$out" || fail "spark job: want '$expected', got '$out'"
echo "ok: deployment on 6 network namespaces (dpkg --root, one CA, TLS, secret, units' ExecStart):" \
  "3 nodes LIVE, 2-copy writes, bench, kill -9 + restart, Spark job exact; $((SECONDS - start)) s"
