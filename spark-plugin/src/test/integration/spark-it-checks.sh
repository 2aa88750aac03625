# Sourced by the run-spark-*-it.sh tests after spark-it-prereqs.sh: their tally of checks
# (ok, bad; each script ends with `echo "$passed passed, $failed failed"`) and the result
# comparison that the jobs writing one JSON digest per query share.
passed=0 failed=0
ok() { echo "ok   $1"; passed=$((passed+1)); }
bad() { echo "FAIL $1"; failed=$((failed+1)); }

# results_match OUT.json REF.json: prints "N NDIFF FIRST...": the N results in OUT.json,
# how many of them differ from REF.json's or are missing there, and the first few of those
# keys. An unreadable or missing file prints "0 0 unreadable" (so N never matches).
results_match() {
  "$python_bin" -c '
import json, sys
out, ref = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
diff = [k for k in sorted(out) if ref.get(k) != out[k]]
print(len(out), len(diff), " ".join(diff[:5]))' "$1" "$2" 2>/dev/null || echo "0 0 unreadable"
}
