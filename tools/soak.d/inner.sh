#!/usr/bin/env bash
# tools/soak inside the soft-RoCE guest: SECS PERIOD ALLOW_KIB.
set -u
secs=$1 period=$2 allow_kib=$3
dir=build/soak
mkdir -p "$dir"
conf=$dir/soak.conf out=$dir/summary.txt csv=$dir/samples.csv tel=$dir/tel.json
dev=${RXE_LOOP_DEV:?no rxe device (run through tools/softroce)}
sed "s/\"rxe0\"/\"$dev\"/; s/duration = 600;/duration = $secs;/" tools/soak.d/soak.conf >"$conf"
prefix=rpsoak$$
build/app/rdmapipe/rdmapipe -l 0-1 --no-pci --file-prefix $prefix --log-level=lib.eal:error -- -f "$conf" \
	--stall-timeout 30 >"$out" 2>&1 &
pid=$!
for _ in $(seq 1 300); do
	grep -q "^rdmapipe: running pipeline" "$out" && break
	kill -0 $pid 2>/dev/null || break
	sleep 0.1
done
t0=$(date +%s)
: >"$csv"
while kill -0 $pid 2>/dev/null; do
	now=$(($(date +%s) - t0))
	rss=$(awk '/^VmRSS:/ {print $2}' /proc/$pid/status 2>/dev/null)
	echo /rdmapipe/lcores | timeout 10 dpdk-telemetry.py -f $prefix >"$tel" 2>/dev/null
	python3 - "$tel" "$now" "${rss:-}" "$csv" <<'PY'
import json, sys
tel, now, rss, csv = sys.argv[1:]
pools = {}
for line in open(tel):
    line = line.strip()
    if line.startswith('{'):
        d = json.loads(line).get('/rdmapipe/lcores') or {}
        pools = {k[:-len('_in_use')]: v for k, v in d.items() if k.endswith('_in_use')}
if not rss or not pools:
    sys.exit(0)   # setting up or finished: no run to sample
new = open(csv).read() == ''
with open(csv, 'a') as f:
    if new:
        f.write('seconds,rss_kib,' + ','.join(sorted(pools)) + '\n')
    f.write(f"{now},{rss}," + ','.join(str(pools[k]) for k in sorted(pools)) + '\n')
PY
	# The period, or less once the run has ended (not a whole period past its end).
	for ((i = 0; i < period * 5; i++)); do
		kill -0 $pid 2>/dev/null || break
		sleep 0.2
	done
done
wait $pid
rc=$?
cat "$out"
echo "--- samples ($csv)"; cat "$csv"
python3 - "$csv" "$secs" "$allow_kib" "$rc" "$out" <<'PY'
import csv, re, sys
path, secs, allow, rc, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
rows = list(csv.DictReader(open(path)))
fails = []
if rc != 0:
    fails.append(f"rdmapipe exited {rc}")
summary = open(out).read()
m = re.search(r'^  buffers not returned: *(\d+)', summary, re.M)
if not m or int(m.group(1)) != 0:
    fails.append("a pool did not return to full: " + (m.group(0).strip() if m else "no 'buffers not returned' line"))
if len(rows) < 4:
    fails.append(f"only {len(rows)} samples")
else:
    steady = [r for r in rows if int(r['seconds']) >= secs // 5] or rows
    first, last = int(steady[0]['rss_kib']), int(rows[-1]['rss_kib'])
    peak = max(int(r['rss_kib']) for r in rows)
    print(f"soak: {secs} s, {len(rows)} samples; RSS {first} KiB at {steady[0]['seconds']} s, {last} KiB at the end, "
          f"peak {peak} KiB (growth allowed {allow} KiB)")
    if last - first > allow:
        fails.append(f"RSS grew {last - first} KiB after the first fifth of the run")
    pools = [k for k in rows[0] if k not in ('seconds', 'rss_kib')]
    for p in pools:
        vals = [int(r[p]) for r in steady if r.get(p) not in (None, '')]
        if vals:
            print(f"soak: pool {p}: in use {min(vals)}..{max(vals)} while running")
for f in fails:
    print("soak: FAIL: " + f)
print("soak: PASS" if not fails else "soak: FAILED")
sys.exit(1 if fails else 0)
PY
