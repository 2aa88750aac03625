#!/usr/bin/env bash
# Builds the Java client jar (with the CMake-built librpmp_jni.so inside) and the Spark
# plugin's shaded jars, copied to <build>/jars/rpmp-spark.jar (Spark 4) and
# <build>/jars/rpmp-spark-3.5.jar (Spark 3.5). Tests are skipped here
# (ctest runs them). Called by CMake target rpmp_java_jars, or by hand:
#   client-java/build-jars.sh <cmake build dir>
set -euo pipefail
build_dir=$(cd "${1:?usage: build-jars.sh <cmake build dir>}" && pwd)
repo_dir=$(cd "$(dirname "$0")/.." && pwd)
mvn_cmd=(mvn -B -q ${RPMP_MVN_OPTS:-})
# `mvn install` writes the client jar into the shared local repository (~/.m2) that the
# plugin build then reads: two builds at once (two worktrees, two build dirs) would read
# each other's half-written jar ("ZipFile invalid LOC header"). One at a time.
mkdir -p "$HOME/.m2"
exec 9>"$HOME/.m2/.rpmp-build-jars.lock"
flock 9

"${mvn_cmd[@]}" -f "$repo_dir/client-java/pom.xml" install -DskipTests \
  -Drpmp.native.dir="$build_dir/lib" -Drpmp.bin.dir="$build_dir/bin"
if [[ -f "$repo_dir/spark-plugin/pom.xml" ]]; then
  "${mvn_cmd[@]}" -f "$repo_dir/spark-plugin/pom.xml" package -DskipTests
  mkdir -p "$build_dir/jars"
  cp "$repo_dir/spark-plugin/target/rpmp-spark.jar" "$build_dir/jars/rpmp-spark.jar"
  echo "built $build_dir/jars/rpmp-spark.jar"
  # The same sources for Spark 3.5 / Scala 2.12 (spark-plugin/pom.xml, profile spark-3.5).
  "${mvn_cmd[@]}" -f "$repo_dir/spark-plugin/pom.xml" -Pspark-3.5 package -DskipTests
  cp "$repo_dir/spark-plugin/target/spark-3.5/rpmp-spark-3.5.jar" "$build_dir/jars/rpmp-spark-3.5.jar"
  echo "built $build_dir/jars/rpmp-spark-3.5.jar"
fi
