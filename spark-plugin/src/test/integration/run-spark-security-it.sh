#!/usr/bin/env bash
# Spark against a secured rpmp-server (docs/security.md, docs/spark-plugin.md), with
# spark-submit and a real server started with --auth-secret-file:
#  1. the secret in spark.rpmp.auth.secretFile, spark.io.encryption.enabled=true, on
#     local-cluster (executor JVMs): the job works and the pool holds no plaintext of
#     its records (a marker string is absent from the pool file);
#  2. the same without encryption (control, so check 1 can fail): the marker is present;
#  3. a wrong spark.rpmp.auth.secret: the job fails at its first shuffle, with a message
#     naming spark.rpmp.auth.secret (no fallback to Spark's shuffle).
#   SPARK_SUBMIT=... run-spark-security-it.sh <build dir>
set -euo pipefail
build_dir=$(cd "${1:?usage: run-spark-security-it.sh <cmake build dir>}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
source "$here/spark-it-prereqs.sh"
spark_it_prereqs "$build_dir" rpmp-server
unset RPMP_SECRET_FILE  # only the Spark settings under test may give the secret

work=$(mktemp -d /tmp/rpmp-spark-security.XXXXXX)
source "$here/rpmp-server-lib.sh"
trap 'stop_rpmp_server; rm -rf "$work"' EXIT
openssl rand -hex 32 > "$work/secret" && chmod 600 "$work/secret"
start_rpmp_server "$work" "$build_dir" "$python_bin" 256M --auth-secret-file "$work/secret"
port=$RPMP_SERVER_PORT pool=$RPMP_SERVER_POOL

failed=0 total=0
check() {  # check WHAT CONDITION...
  local what=$1; shift
  total=$((total + 1))
  if "$@"; then echo "ok   $what"; else echo "FAIL $what"; failed=$((failed + 1)); fi
}
in_pool() { LC_ALL=C grep -a -F -q "$1" "$pool"; }
run() {  # run NAME MASTER MARKER CONF...
  local name=$1 master=$2 marker=$3; shift 3
  "$spark_submit" --master "$master" --driver-memory 1g --conf spark.ui.enabled=false \
    --conf spark.shuffle.manager=io.rpmp.spark.PmofShuffleManager \
    --conf "spark.rpmp.server=127.0.0.1:$port" --conf spark.rpmp.fallback=sort \
    --conf spark.shuffle.compress=false --conf spark.sql.adaptive.enabled=false \
    --conf "spark.driver.extraClassPath=$jar" --conf "spark.executor.extraClassPath=$jar" \
    "$@" "$here/spark_security_job.py" "$marker" > "$work/$name.log" 2>&1
}
stored() { grep -q "stored in RPMP namespace" "$work/$1.log"; }

# Markers: random, so no earlier run (or anything else) left them in the pool.
enc=ENCRYPTED-$(openssl rand -hex 12) plain=PLAINTEXT-$(openssl rand -hex 12)
run encrypted "local-cluster[2,1,1024]" "$enc" --conf "spark.rpmp.auth.secretFile=$work/secret" \
  --conf spark.io.encryption.enabled=true && ok=true || ok=false
check "right secret (secretFile), io encryption on: the job succeeds on local-cluster" $ok
check "...its shuffles were stored in RPMP" stored encrypted
check "...and the pool file holds no plaintext of its records" eval '! in_pool "$enc"'
run plain "local[2]" "$plain" --conf "spark.rpmp.auth.secret=$(cat "$work/secret")" && ok=true || ok=false
check "right secret (secret), io encryption off: the job succeeds" $ok
check "...its shuffles were stored in RPMP" stored plain
check "...and its records are in the pool file in plaintext (control)" in_pool "$plain"
run wrong "local[2]" "WRONG-$(openssl rand -hex 8)" \
  --conf "spark.rpmp.auth.secret=not-the-cluster-secret-0123456789" && ok=true || ok=false
check "wrong secret: the job fails" eval '! $ok'
check "...at the first shuffle, naming spark.rpmp.auth.secret" \
  grep -q "RPMP refused this application's credentials.*spark.rpmp.auth.secret" "$work/wrong.log"
check "...and did not fall back to Spark's shuffle" eval '! grep -q "using Spark.s sort shuffle" "$work/wrong.log"'
if [[ $failed -gt 0 ]]; then
  for n in encrypted plain wrong; do echo "--- $n.log (tail)"; tail -25 "$work/$n.log"; done
  echo "--- server.log (tail)"; tail -20 "$work/server.log"
fi
grep -h "RPMP refused this application's credentials" "$work/wrong.log" | head -1 | cut -c1-400
echo "$((total - failed)) passed, $failed failed"
[[ $failed -eq 0 ]]
