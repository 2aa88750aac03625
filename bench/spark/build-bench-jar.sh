#!/usr/bin/env bash
# Builds <build>/jars/rpmp-spark-bench.jar (bench/spark/src: the JVM shuffle benchmark
# jobs) with javac against the jars of the Spark that spark-submit runs (pyspark's jars
# directory, or $SPARK_HOME/jars). Called by the CMake target rpmp_spark_bench_jar
# (built with -DRPMP_JAVA=ON when spark-submit is found), or by hand:
#   bench/spark/build-bench-jar.sh <cmake build dir>
set -euo pipefail
build_dir=$(cd "${1:?usage: build-bench-jar.sh <cmake build dir>}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
spark_submit=${SPARK_SUBMIT:-$(command -v spark-submit || true)}
jars=""
if [[ -n "${SPARK_HOME:-}" && -d "$SPARK_HOME/jars" ]]; then
  jars=$SPARK_HOME/jars
elif [[ -n "$spark_submit" ]]; then
  py=$(dirname "$spark_submit")/python3
  [[ -x "$py" ]] || py=python3
  jars=$("$py" -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))')
fi
[[ -d "$jars" ]] || { echo "build-bench-jar: no Spark jars (set SPARK_HOME or put spark-submit on PATH)" >&2; exit 1; }
classes=$(mktemp -d)
trap 'rm -rf "$classes"' EXIT
javac --release 17 -Xlint:-options -d "$classes" -cp "$jars/*" $(find "$here/src" -name '*.java')
mkdir -p "$build_dir/jars"
jar --create --file "$build_dir/jars/rpmp-spark-bench.jar" -C "$classes" .
echo "built $build_dir/jars/rpmp-spark-bench.jar"
