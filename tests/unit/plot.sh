#!/usr/bin/env bash
# tools/plot-results on a results file (docs/results.md): a PNG of each flow's rate over
# time and one of the latency CDFs; a file that is not results is refused (exit 2).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
fails=0
if ! /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
	if [ -n "${CI:-}" ]; then echo "FAIL: python3-matplotlib missing (tools/install-deps installs it)"; exit 1; fi
	echo "SKIP: python3-matplotlib missing"; exit 77
fi
d=$(mktemp -d)
cat >"$d/run.json" <<'JSON'
{
  "rdmapipe": {"version": "0.1.0", "results_schema": 1},
  "run": {"mode": "rate", "role": "loopback", "verb": "RDMA_WRITE_WITH_IMM", "message_bytes": 64, "device": "rxe0",
          "elapsed_s": 3.2, "result": "PASS"},
  "flows": [
    {"name": "one", "qps": 1, "messages_sent": 64000, "messages_completed": 64000, "messages_verified": 64000,
     "bytes": 4096000, "message_rate": 20000.0, "gbit_per_s": 0.0102, "failed_qps": 0, "completion_errors": {},
     "latency_us": {"what": "chain posted to its signalled completion", "samples": 2000, "min": 410.0, "p50": 800.0,
                    "p90": 1200.0, "p99": 2000.0, "p99.9": 2400.0, "max": 2500.0, "mean": 850.0},
     "latency_cdf": [[410.0, 0], [500.0, 0.1], [800.0, 0.5], [1200.0, 0.9], [2000.0, 0.99], [2500.0, 1]]},
    {"name": "many", "qps": 64, "messages_sent": 64000, "messages_completed": 64000, "messages_verified": 64000,
     "bytes": 4096000, "message_rate": 20000.0, "gbit_per_s": 0.0102, "failed_qps": 0, "completion_errors": {},
     "latency_cdf": [[900.0, 0], [1500.0, 0.5], [4000.0, 0.99], [5000.0, 1]]}
  ],
  "lcores": [],
  "series": {"period_s": 1.0, "flows": ["one", "many"], "completed": [[20000, 19000], [41000, 40000], [62000, 61000]]}
}
JSON
if "$top/tools/plot-results" "$d/run.json" "$d/png" >"$d/log" 2>&1; then
	for f in run-rate.png run-latency-cdf.png; do
		if [ "$(head -c 4 "$d/png/$f" 2>/dev/null | od -An -tx1 | tr -d ' ')" = 89504e47 ] && [ "$(stat -c %s "$d/png/$f")" -gt 5000 ]; then
			echo "ok: $f"
		else
			echo "FAIL: $f is not a PNG of a plot"; fails=$((fails + 1))
		fi
	done
	grep -q "png/run-rate.png$" "$d/log" && echo "ok: the files are named" || { echo "FAIL: names not printed"; cat "$d/log"; fails=$((fails + 1)); }
else
	echo "FAIL: plot-results failed:"; cat "$d/log"; fails=$((fails + 1))
fi
echo '{"not": "results"}' >"$d/bad.json"
"$top/tools/plot-results" "$d/bad.json" "$d/png" >"$d/log" 2>&1
rc=$?
if [ "$rc" -eq 2 ] && grep -q "^plot-results: $d/bad.json: not an rdmapipe results file (KeyError" "$d/log"; then
	echo "ok: a file that is not results is refused"
else
	echo "FAIL: bad file: exit $rc:"; cat "$d/log"; fails=$((fails + 1))
fi
rm -rf "$d"
[ "$fails" -eq 0 ] && echo "plot: all checks passed" && exit 0
echo "plot: $fails check(s) failed"
exit 1
