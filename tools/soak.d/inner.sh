#!/usr/bin/env bash
# tools/soak inside the soft-RoCE guest: SECS PERIOD ALLOW_KIB.
set -u
secs=$1 period=$2 allow_kib=$3
dir=build/soak
mkdir -p "$dir"
conf=$dir/soak.conf out=$dir/summary.txt csv=$dir/samples.csv
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
# One sampler for the whole run, not a dpdk-telemetry.py and a python3 started for each
# sample: in the busy guest those took 7-15 s a sample, which left 4-5 samples in a
# 2-minute soak against the 4 it needs. Each period: RSS from /proc, then
# /rdmapipe/lcores over EAL's telemetry socket (what dpdk-telemetry.py does).
python3 - "$pid" "$prefix" "$period" "$csv" <<'PY'
import json, os, socket, sys, time
pid, prefix, period, csv = int(sys.argv[1]), sys.argv[2], float(sys.argv[3]), sys.argv[4]
path = f"/var/run/dpdk/{prefix}/dpdk_telemetry.v2"
t0 = time.monotonic()
open(csv, 'w').close()

def alive():
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False

def rss_kib():
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith('VmRSS:'):
                return int(line.split()[1])
    except OSError:
        pass
    return None

def pools():
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as s:
            s.settimeout(10)
            s.connect(path)
            size = json.loads(s.recv(1024).decode())['max_output_len']
            s.send(b'/rdmapipe/lcores')
            d = json.loads(s.recv(size).decode()).get('/rdmapipe/lcores') or {}
    except (OSError, ValueError, KeyError):
        return {}   # setting up or finished: no run to sample
    return {k[:-len('_in_use')]: v for k, v in d.items() if k.endswith('_in_use')}

while alive():
    now, rss, p = int(time.monotonic() - t0), rss_kib(), pools()
    if rss and p:
        new = os.path.getsize(csv) == 0
        with open(csv, 'a') as f:
            if new:
                f.write('seconds,rss_kib,' + ','.join(sorted(p)) + '\n')
            f.write(f"{now},{rss}," + ','.join(str(p[k]) for k in sorted(p)) + '\n')
    # The period, or less once the run has ended (not a whole period past its end).
    end = time.monotonic() + period
    while alive() and time.monotonic() < end:
        time.sleep(0.2)
PY
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
