#!/usr/bin/env bash
# Fails when a Catch2 test name cannot be run by ctest: catch_discover_tests
# splits the discovered names on ';', so "a; b" becomes two tests that match
# nothing (CI went red on one). Usage: test_names_check.sh SOURCE_DIR
set -euo pipefail
root=${1:?usage: test_names_check.sh SOURCE_DIR}
bad=$(grep -rnE --include='*.cc' 'TEST_CASE\("[^"]*;' "$root" \
        --exclude-dir=build --exclude-dir=.git \
      | grep -v "^$root/tests/lint/breach/" || true)
if [[ -n $bad ]]; then
  echo "test names with ';' (ctest splits them into names that match nothing):"
  echo "$bad"
  exit 1
fi
echo "test names: none contains ';'"
