#!/usr/bin/env bash
# Installs a Spark that RPMP is tested with (pyspark from PyPI: a full Spark with
# spark-submit) into a virtualenv of its own, once, and prints the virtualenv's bin
# directory. VERSION defaults to 4.2.0, the version the Spark 4 jar is built against;
# the Spark 3.5 jar is tested with 3.5.7 (docs/spark-plugin.md lists the matrix).
# Usage: PATH="$(deploy/install-spark.sh [VERSION]):$PATH"
#        deploy/install-spark.sh --where [VERSION]   (prints the bin directory, installs
#        nothing: for a caller that installs in the background and configures meanwhile)
#   env: RPMP_SPARK_VENV (the virtualenv; default ~/.cache/rpmp/venv-spark-VERSION)
set -euo pipefail
where=0
[ "${1:-}" = "--where" ] && { where=1; shift; }
version=${1:-4.2.0}
venv=${RPMP_SPARK_VENV:-$HOME/.cache/rpmp/venv-spark-$version}
if [ $where = 0 ] && [ ! -x "$venv/bin/spark-submit" ]; then
  echo "install-spark: installing pyspark==$version into $venv (about 320 MB, once)" >&2
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install -q --disable-pip-version-check "pyspark==$version" >&2
fi
echo "$venv/bin"
