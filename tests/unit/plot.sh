#!/usr/bin/env bash
# tools/plot-results on a results file (docs/results.md): a PNG of each flow's rate over
# time, one of the latency CDFs and one of latency by percentile (from latency_hist, or
# latency_cdf in older files), several files overlaid; on a job's results file (docs/cluster.md): rank x
# rank maps of each pair's rate and p99 latency, flagged and failed pairs marked,
# unmeasured ones blank; a file that is neither, or a job's without a pair's rate, is
# refused (exit 2).
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
# run.json is a file from before latency_hist: the percentile plot too, from latency_cdf
# and latency_us, and said so.
# expect NAME WHAT: the log has the line WHAT (fixed string, whole line)
expect() {
	if grep -qxF -- "$2" "$d/log"; then echo "ok: $1"; else echo "FAIL: $1: no line '$2' in:"; cat "$d/log"; fails=$((fails + 1)); fi
}
png_ok() {
	if [ "$(head -c 4 "$1" 2>/dev/null | od -An -tx1 | tr -d ' ')" = 89504e47 ] && [ "$(stat -c %s "$1")" -gt 5000 ]; then
		echo "ok: $(basename "$1")"
	else
		echo "FAIL: $1 is not a PNG of a plot"; fails=$((fails + 1))
	fi
}
if "$top/tools/plot-results" "$d/run.json" "$d/png" >"$d/log" 2>&1; then
	png_ok "$d/png/run-latency-percentiles.png"
	expect "an old file: the fallback said" "  run-latency-percentiles.png flow one: p50 800.000 p99 2000.000 p99.9 2400.000 us (latency_cdf)"
	expect "an old file: a flow without latency_us" "  run-latency-percentiles.png flow many: none marked (no latency_us) (latency_cdf)"
fi
# A file with latency_hist (docs/results.md): buckets of Histogram's layout (lower, upper
# in ns), 10000 samples; p99.99 lands in the top bucket, clamped to latency_us.max.
/usr/bin/python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
f = r["flows"][0]
f["latency_us"].update(samples=10000, max=1001.2)
f["latency_hist"] = {"unit": "ns", "count": 10000, "buckets": [[1000, 1003, 5000], [2000, 2007, 4900],
    [49920, 50175, 90], [299008, 301055, 8], [999424, 1003519, 2]]}
json.dump(r, open(sys.argv[2], "w"))' "$d/run.json" "$d/hist.json"
# The marked percentiles worked out here another way: every sample written out as its
# bucket's upper bound (clamped to max), sorted, the ceil(q * n)-th taken.
want=$(/usr/bin/python3 -c 'import json, math, sys
f = json.load(open(sys.argv[1]))["flows"][0]
top = f["latency_us"]["max"] * 1000
xs = sorted(min(hi, top) for lo, hi, n in f["latency_hist"]["buckets"] for _ in range(n))
print(" ".join(f"{m} {xs[math.ceil(q * len(xs)) - 1] / 1000:.3f}" for q, m in ((0.5, "p50"), (0.99, "p99"), (0.999, "p99.9"), (0.9999, "p99.99"))))' "$d/hist.json")
if "$top/tools/plot-results" "$d/hist.json" "$d/png" >"$d/log" 2>&1; then
	png_ok "$d/png/hist-latency-cdf.png"
	png_ok "$d/png/hist-latency-percentiles.png"
	expect "latency_hist: the marked percentiles are the buckets'" "  hist-latency-percentiles.png flow one: $want us"
	expect "latency_hist: values as latency_us computes them" "  hist-latency-percentiles.png flow one: p50 1.003 p99 2.007 p99.9 50.175 p99.99 1001.200 us"
else
	echo "FAIL: plot-results failed on latency_hist:"; cat "$d/log"; fails=$((fails + 1))
fi
# Two files overlaid (before/after): one image of each kind, every flow labelled file:flow.
rm -rf "$d/ovl"
if "$top/tools/plot-results" "$d/hist.json" "$d/run.json" -o "$d/ovl" >"$d/log" 2>&1; then
	png_ok "$d/ovl/hist+run-latency-cdf.png"
	png_ok "$d/ovl/hist+run-latency-percentiles.png"
	[ "$(ls "$d/ovl" | wc -l)" -eq 3 ] && echo "ok: overlay: one image of each kind" || { echo "FAIL: overlay wrote:"; ls "$d/ovl"; fails=$((fails + 1)); }
	expect "overlay: the CDF's legend" "  hist+run-latency-cdf.png legend: hist:one | hist:many | run:one | run:many"
	expect "overlay: the percentiles' legend" "  hist+run-latency-percentiles.png legend: hist:one | hist:many | run:one | run:many"
	expect "overlay: the rates' legend" "  hist+run-rate.png legend: hist:one | hist:many | run:one | run:many"
	expect "overlay: the new file's percentiles" "  hist+run-latency-percentiles.png flow hist:one: $want us"
	expect "overlay: the old file's, said so" "  hist+run-latency-percentiles.png flow run:one: p50 800.000 p99 2000.000 p99.9 2400.000 us (latency_cdf)"
else
	echo "FAIL: plot-results failed on an overlay:"; cat "$d/log"; fails=$((fails + 1))
fi
# A job's results file (docs/cluster.md), shaped as rank 0 writes it: job_report() in
# lib/control/job_report.cpp (pair_json, rank_json, the "job" object) and
# docs/job-results.schema.json; the figures are those of docs/cluster.md's table and of
# tests/unit/test_job.cpp (a ring of 4, a slow pair flagged on rate, a failed pair, a
# rank that sent no results), with a ping-pong flow beside it (pattern flows = ["bw",
# "pp"]: pairs in job_flows' order, flow by flow) whose slow pair is flagged on latency.
# A rank's results files are cut down to the fields plot-results reads (latency_us.what).
# Every pair but the ring's is unmeasured (0->2, 1->3, ...).
cat >"$d/job.json" <<'JSON'
{
  "rdmapipe": {"version": "0.1.0", "job_results_schema": 1},
  "job": {"ranks": 4, "pattern": "ring", "pairs": 4, "bw_flag": 0.8, "lat_flag": 2.0, "flagged": 2, "result": "FAIL"},
  "ranks": [
    {"rank": 0, "host": "n1", "device": "rxeA", "address": "10.2.0.1", "gid": "::ffff:10.2.0.1", "gid_index": 1, "port": 18515,
     "reported": true, "exit_status": 0, "results": [
       {"run": {"mode": "rate", "role": "client+server", "result": "PASS"}, "flows": [
         {"name": "bw_0to1", "result": "PASS", "latency_us": {"what": "chain posted to its signalled completion", "p50": 7438.34, "p99": 55634.36}},
         {"name": "pp_0to1", "result": "PASS", "latency_us": {"what": "half round trip: one iteration per QP, post to post, / 2 (as ib_send_lat)", "p50": 10.0, "p99": 14.5}}]}]},
    {"rank": 1, "host": "n2", "device": "rxeB", "address": "10.2.0.2", "gid": "::ffff:10.2.0.2", "gid_index": 1, "port": 18515,
     "reported": true, "exit_status": 0, "results": []},
    {"rank": 2, "host": "n3", "device": "rxeA", "address": "10.2.0.3", "gid": "::ffff:10.2.0.3", "gid_index": 1, "port": 18515,
     "reported": true, "exit_status": 1, "error": "flow 'bw_2to3' failed", "results": []},
    {"rank": 3, "host": "n4", "device": "rxeB", "address": "10.2.0.4", "gid": "::ffff:10.2.0.4", "gid_index": 1, "port": 18515,
     "reported": false, "exit_status": 0, "error": "sent no results within 60 s", "results": []}
  ],
  "pairs": [
    {"flow": "bw", "name": "bw_0to1", "from": 0, "to": 1, "message_bytes": 4096, "messages_sent": 4000, "messages_completed": 4000,
     "messages_verified": 4000, "message_rate": 4277.2, "gbit_per_s": 0.140156, "errors": 0, "failed_qps": 0, "result": "PASS",
     "flags": [], "latency_us": {"p50": 7438.34, "p99": 55634.36}},
    {"flow": "bw", "name": "bw_1to2", "from": 1, "to": 2, "message_bytes": 4096, "messages_sent": 4000, "messages_completed": 4000,
     "messages_verified": 4000, "message_rate": 3159.5, "gbit_per_s": 0.103498, "errors": 0, "failed_qps": 0, "result": "PASS",
     "flags": ["rate"], "latency_us": {"p50": 7176.19, "p99": 60770.91}},
    {"flow": "bw", "name": "bw_2to3", "from": 2, "to": 3, "message_bytes": 4096, "messages_sent": 384, "messages_completed": 384,
     "messages_verified": 384, "message_rate": 0.0, "gbit_per_s": 0.0, "errors": 3, "failed_qps": 1, "result": "FAIL",
     "flags": [], "reason": "rank 2 (sender) failed it: completion errors"},
    {"flow": "bw", "name": "bw_3to0", "from": 3, "to": 0, "message_bytes": 4096, "messages_sent": 0, "messages_completed": 0,
     "messages_verified": 0, "message_rate": 0.0, "gbit_per_s": 0.0, "errors": 0, "failed_qps": 0, "result": "FAIL",
     "flags": [], "reason": "rank 3 (sender) sent no results: sent no results within 60 s"},
    {"flow": "pp", "name": "pp_0to1", "from": 0, "to": 1, "message_bytes": 32, "messages_sent": 2000, "messages_completed": 2000,
     "messages_verified": 2000, "message_rate": 48000.0, "gbit_per_s": 0.012288, "errors": 0, "failed_qps": 0, "result": "PASS",
     "flags": [], "latency_us": {"p50": 10.0, "p99": 14.5}},
    {"flow": "pp", "name": "pp_1to2", "from": 1, "to": 2, "message_bytes": 32, "messages_sent": 2000, "messages_completed": 2000,
     "messages_verified": 2000, "message_rate": 45000.0, "gbit_per_s": 0.01152, "errors": 0, "failed_qps": 0, "result": "PASS",
     "flags": [], "latency_us": {"p50": 11.0, "p99": 16.0}},
    {"flow": "pp", "name": "pp_2to3", "from": 2, "to": 3, "message_bytes": 32, "messages_sent": 2000, "messages_completed": 2000,
     "messages_verified": 2000, "message_rate": 20000.0, "gbit_per_s": 0.00512, "errors": 0, "failed_qps": 0, "result": "PASS",
     "flags": ["latency"], "latency_us": {"p50": 25.0, "p99": 61.0}},
    {"flow": "pp", "name": "pp_3to0", "from": 3, "to": 0, "message_bytes": 32, "messages_sent": 0, "messages_completed": 0,
     "messages_verified": 0, "message_rate": 0.0, "gbit_per_s": 0.0, "errors": 0, "failed_qps": 0, "result": "FAIL",
     "flags": [], "reason": "rank 3 (sender) sent no results: sent no results within 60 s"}
  ]
}
JSON
# The file is a job's results by docs/job-results.schema.json (a rank's cut-down results
# files aside: results_schema checks those).
if /usr/bin/python3 -c 'import jsonschema' 2>/dev/null; then
	if /usr/bin/python3 -c 'import json, sys, jsonschema
s = json.load(open(sys.argv[1]))
s["properties"]["ranks"]["items"]["properties"]["results"]["items"] = {"type": "object"}
jsonschema.Draft202012Validator(s).validate(json.load(open(sys.argv[2])))' "$top/docs/job-results.schema.json" "$d/job.json" >"$d/log" 2>&1; then
		echo "ok: the job's file is valid by job-results.schema.json"
	else
		echo "FAIL: the job's file is not valid by job-results.schema.json:"; tail -5 "$d/log"; fails=$((fails + 1))
	fi
elif [ -n "${CI:-}" ]; then
	echo "FAIL: python3-jsonschema missing (tools/install-deps installs it)"; fails=$((fails + 1))
else
	echo "SKIP: python3-jsonschema missing: the job's file not checked against its schema"
fi
if "$top/tools/plot-results" "$d/job.json" "$d/png" >"$d/log" 2>&1; then
	for f in job-pairs-rate.png job-pairs-latency.png; do
		if [ "$(head -c 4 "$d/png/$f" 2>/dev/null | od -An -tx1 | tr -d ' ')" = 89504e47 ] && [ "$(stat -c %s "$d/png/$f")" -gt 5000 ]; then
			echo "ok: $f"
		else
			echo "FAIL: $f is not a PNG of a plot"; fails=$((fails + 1))
		fi
		expect "$f named" "$d/png/$f"
	done
	# Each panel: the pairs drawn, the flagged and failed pairs marked (from the marks on
	# the axes), the cells left blank (12 of 16: unmeasured pairs are not drawn as zero).
	expect "rate map, bw: the slow pair marked" "  job-pairs-rate.png flow bw, 4096 B: 4 of 4 pairs drawn, marked: rate 1->2; failed 2->3 3->0; blank: 12 of 16 cells"
	expect "rate map, pp: the late pair marked" "  job-pairs-rate.png flow pp, 32 B: 4 of 4 pairs drawn, marked: latency 2->3; failed 3->0; blank: 12 of 16 cells"
	# the failed pairs carry no latency_us: blank on the latency map, and still marked
	expect "latency map, bw" "  job-pairs-latency.png flow bw, 4096 B: 2 of 4 pairs drawn, marked: rate 1->2; failed 2->3 3->0; blank: 14 of 16 cells"
	expect "latency map, pp" "  job-pairs-latency.png flow pp, 32 B: 3 of 4 pairs drawn, marked: latency 2->3; failed 3->0; blank: 13 of 16 cells"
else
	echo "FAIL: plot-results failed on a job's results:"; cat "$d/log"; fails=$((fails + 1))
fi
# A job whose pairs carry no latency: the rate map, and a line saying why there is no other.
/usr/bin/python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
for p in r["pairs"]:
    p.pop("latency_us", None)
json.dump(r, open(sys.argv[2], "w"))' "$d/job.json" "$d/nolat.json"
rm -rf "$d/png"
if "$top/tools/plot-results" "$d/nolat.json" "$d/png" >"$d/log" 2>&1 && [ -s "$d/png/nolat-pairs-rate.png" ] && [ ! -e "$d/png/nolat-pairs-latency.png" ]; then
	expect "no latency, said so" "plot-results: $d/nolat.json: no pair carries latency_us (p99 or p50): no latency map"
else
	echo "FAIL: a job without latency:"; cat "$d/log"; ls "$d/png"; fails=$((fails + 1))
fi
# Flagged pairs re-run alone (pattern.confirm): bad alone and slow only under load
# marked apart, on both maps.
/usr/bin/python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
r["pairs"][1]["confirmed"] = "bad alone"
r["pairs"][6]["confirmed"] = "slow only under load"
json.dump(r, open(sys.argv[2], "w"))' "$d/job.json" "$d/confirm.json"
rm -rf "$d/png"
if "$top/tools/plot-results" "$d/confirm.json" "$d/png" >"$d/log" 2>&1; then
	expect "confirmed: rate map, bw" "  confirm-pairs-rate.png flow bw, 4096 B: 4 of 4 pairs drawn, marked: rate 1->2; failed 2->3 3->0; bad-alone 1->2; blank: 12 of 16 cells"
	expect "confirmed: latency map, pp" "  confirm-pairs-latency.png flow pp, 32 B: 3 of 4 pairs drawn, marked: latency 2->3; failed 3->0; load-only 2->3; blank: 13 of 16 cells"
else
	echo "FAIL: plot-results failed on confirmed pairs:"; cat "$d/log"; fails=$((fails + 1))
fi
# A job's results without what the maps need: refused, naming the pair and the field.
/usr/bin/python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
del r["pairs"][1]["message_rate"]
json.dump(r, open(sys.argv[2], "w"))' "$d/job.json" "$d/norate.json"
"$top/tools/plot-results" "$d/norate.json" "$d/png" >"$d/log" 2>&1
rc=$?
if [ "$rc" -eq 2 ] && [ "$(wc -l <"$d/log")" -eq 1 ]; then
	expect "a pair without its rate is refused" "plot-results: $d/norate.json: a job's results file the maps cannot be drawn from: pairs[1] (bw_1to2) has no 'message_rate'"
else
	echo "FAIL: a pair without its rate: exit $rc:"; cat "$d/log"; fails=$((fails + 1))
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
