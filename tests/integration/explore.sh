#!/usr/bin/env bash
# rdmapipe-explore on rxe: two anomalies planted in corners of a small space (rdmapipe
# --plant: a corrupted payload only where size >= 8192 and qps >= 4; a flow paced to
# 1000 msg/s only where batch <= 2 and inline) are found from a fixed seed and each
# minimised to exactly its planted settings, every point run by real child rdmapipes
# (one EAL for many points); the reproducers run and show the anomaly again.
. "$(dirname "$0")/lib.sh"
need_device
X=$(realpath "$(dirname "$RDMAPIPE")/../rdmapipe-explore/rdmapipe-explore")
T=$(mktemp -d)
on_exit 'rm -rf "$T"'
cat > "$T/space.conf" <<S
version = 1;
fixed = { device = "$DEV"; };
dimensions = (
  { setting = "size"; values = [64, 1024, 4096, 8192]; simplest = 64; },
  { setting = "qps"; values = [1, 2, 4]; simplest = 1; },
  { setting = "batch"; values = [1, 2, 4, 32]; simplest = 32; },
  { setting = "inline"; values = [false, true]; simplest = false; }
);
# perf_flag 0.3: rxe's own spread between neighbours stays above it; the planted pace
# (1000 msg/s against thousands more) does not.
search = { strategy = "anneal"; budget = 200; seed = 5; perf_flag = 0.3; point_seconds = 0.4; point_timeout = 60; };
S
start=$(date +%s)
# shellcheck disable=SC2046
timeout -k 10 900 "$X" -f "$T/space.conf" -o "$T/out" --plant 'corrupt:size>=8192,qps>=4' \
	--plant 'slow:batch<=2,inline=true' -- $(eal_args) > "$T/explore.out" 2>&1
rc=$?
echo "--- rdmapipe-explore (exit $rc, $(($(date +%s) - start)) s)"
tail -n 12 "$T/explore.out"
expect_eq "exit status (anomalies found)" "$rc" 1
findings=$(python3 -c 'import json,sys; [print(f["kind"] + ": " + f["mfs"]) for f in json.load(open(sys.argv[1]))]' "$T/out/findings.json")
echo "$findings"
grep -qx "correctness: size >= 8192, qps >= 4" <<<"$findings" && echo "ok: the planted corruption, minimised exactly" ||
	{ echo "FAIL: the planted corruption is not among the findings, minimised to size >= 8192, qps >= 4"; fails=$((fails + 1)); }
grep -qx "performance: batch <= 2, inline = true" <<<"$findings" && echo "ok: the planted slowdown, minimised exactly" ||
	{ echo "FAIL: the planted slowdown is not among the findings, minimised to batch <= 2, inline = true"; fails=$((fails + 1)); }
points=$(grep -c '"status":"ran"' "$T/out/points.jsonl")
children=$(ls "$T/out"/child-*.log | wc -l)
echo "ok: $points points ran in $children child(ren)"
[ "$children" -lt "$points" ] || { echo "FAIL: a child per point: start-up not amortised"; fails=$((fails + 1)); }
grep -q '"status":"ran","verdict":"none"' "$T/out/points.jsonl" || python3 - "$T/out/points.jsonl" <<'P' || { echo "FAIL: no point passed"; fails=$((fails + 1)); }
import json, sys
sys.exit(0 if any(json.loads(l)["pass"] for l in open(sys.argv[1])) else 1)
P
# The corruption's reproducer, run as its command file says, fails as the search saw.
n=$(python3 -c 'import json,sys; print([f["id"] for f in json.load(open(sys.argv[1])) if f["kind"] == "correctness"][0])' "$T/out/findings.json" 2>/dev/null)
if [ -n "$n" ]; then
	d="$T/out/anomalies/$n"
	cat "$d/command"
	(cd "$d" && timeout -k 5 120 bash ./command > run.out 2>&1)
	rrc=$?
	expect_eq "the reproducer's exit status (a payload error)" "$rrc" 1
	grep -qiE "payload|mismatch|corrupt" "$d/run.out" && echo "ok: the reproducer names the payload error" ||
		{ echo "FAIL: the reproducer's output names no payload error"; tail -5 "$d/run.out"; fails=$((fails + 1)); }
fi
finish
