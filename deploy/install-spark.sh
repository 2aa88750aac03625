#!/usr/bin/env bash
# Installs the Spark RPMP is tested with (pyspark==4.2.0 from PyPI: a full Spark with
# spark-submit) into a virtualenv, once, and prints the virtualenv's bin directory.
# Usage: PATH="$(deploy/install-spark.sh):$PATH"     env: RPMP_SPARK_VENV
set -euo pipefail
venv=${RPMP_SPARK_VENV:-$HOME/.cache/rpmp/venv-spark-4.2.0}
if [ ! -x "$venv/bin/spark-submit" ]; then
  echo "install-spark: installing pyspark==4.2.0 into $venv (about 320 MB, once)" >&2
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install -q --disable-pip-version-check pyspark==4.2.0 >&2
fi
echo "$venv/bin"
