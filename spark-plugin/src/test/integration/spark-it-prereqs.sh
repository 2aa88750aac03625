# Sourced by every run-spark-*.sh: finds and checks what a Spark integration test needs.
#   spark_it_prereqs BUILD_DIR [NEED...]
# Sets spark_submit (SPARK_SUBMIT, else spark-submit on PATH), jar (RPMP_SPARK_JAR, else
# <build>/jars/rpmp-spark.jar; made absolute, as executors need), python_bin
# (PYSPARK_PYTHON, else the pyspark install's python3, else python3), and exports
# PYSPARK_PYTHON and PYSPARK_DRIVER_PYTHON. Each NEED is a program in <build>/bin
# (rpmp-server, rpmp-proxy, rpmpctl) or on PATH (etcd, curl). A missing prerequisite
# fails the test (exit 1 with one line saying what is missing): it never skips it.
spark_it_prereqs() {
  local build_dir=$1 need
  shift
  spark_submit=${SPARK_SUBMIT:-$(command -v spark-submit || true)}
  [[ -x "$spark_submit" ]] \
    || { echo "FAIL spark-submit not found: '${spark_submit}' (deploy/install-spark.sh VERSION)"; exit 1; }
  jar=${RPMP_SPARK_JAR:-$build_dir/jars/rpmp-spark.jar}  # rpmp-spark-3.5.jar for Spark 3.5
  [[ -f "$jar" ]] || { echo "FAIL missing $jar (client-java/build-jars.sh $build_dir)"; exit 1; }
  jar=$(cd "$(dirname "$jar")" && pwd)/$(basename "$jar")
  for need in "$@"; do
    case $need in
      etcd) command -v etcd >/dev/null || { echo "FAIL etcd not found (Debian package etcd-server)"; exit 1; } ;;
      curl) command -v curl >/dev/null || { echo "FAIL curl not found"; exit 1; } ;;
      *) [[ -x "$build_dir/bin/$need" ]] || { echo "FAIL missing $build_dir/bin/$need"; exit 1; } ;;
    esac
  done
  python_bin=${PYSPARK_PYTHON:-$(dirname "$spark_submit")/python3}
  [[ -x "$python_bin" ]] || python_bin=$(command -v python3)
  export PYSPARK_PYTHON="$python_bin" PYSPARK_DRIVER_PYTHON="$python_bin"
}
