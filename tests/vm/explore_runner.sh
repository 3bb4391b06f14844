#!/usr/bin/env bash
# rdmapipe-explore on this host, its children in the soft-RoCE VM (--runner
# tools/softroce, one VM a child), the guest's kernel crashed and left hanging at one
# corner (--plant wedge): each hang of the guest is a 'host hung' point with the guest's
# panic line from its console, the VM is restarted, the anomaly is minimised to its
# corner, its repro.c built and run in the VM, and the search ends having measured every
# point of the space. Issue 49, item 2's test. Boots a VM per child: some 7 minutes,
# so it is in the 'vm' suite, not in CI's (meson test --suite vm).
#   explore_runner.sh RDMAPIPE-EXPLORE RDMAPIPE SOFTROCE
set -u
X=$(realpath "${1:?usage: explore_runner.sh rdmapipe-explore rdmapipe tools/softroce}")
R=$(realpath "${2:?}")
SR=$(realpath "${3:?}")
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# The output folder is shared with the guest at its own path (no comma or space there).
out=$(mktemp -d /tmp/explore-runner.XXXXXX)
trap 'rm -rf "$out" "$out.conf" "$out.log"' EXIT
cat >"$out.conf" <<'S'
version = 1;
fixed = { device = "rxe0"; };
dimensions = (
  { setting = "size"; values = [64, 4096]; simplest = 64; },
  { setting = "qps";  values = [1, 2, 4]; simplest = 1; }
);
search = {
  strategy = "random"; budget = "15m"; seed = 1; repeats = 2; need = 2;
  point_seconds = 1.0; stall_timeout = 5; point_timeout = 30;
};
S
"$X" -q -f "$out.conf" -o "$out" --rdmapipe "$R" --plant 'wedge:size>=4096,qps>=4' --start-timeout 300 \
	--runner "$SR --stdin --share $out --console \"\$RDMAPIPE_EXPLORE_CONSOLE\" --dpdk-plugins mempool_ring --timeout 1800 --" \
	>"$out.log" 2>&1
rc=$?
cat "$out.log"
[ $rc -eq 1 ] || fail "exit $rc (1: anomalies found)"
python3 - "$out" <<'PY' || fails=$((fails + 1))
import json, sys
out = sys.argv[1]
pts = [json.loads(l) for l in open(out + '/points.jsonl')]
hung = [p for p in pts if p['status'] == 'host hung']
assert len(hung) >= 2, f'{len(hung)} host hung points (the finding, then minimisation\'s runs of it)'
for p in hung:
    assert p['point'] == {'size': '4096', 'qps': '4'}, p['point']
    assert 'Kernel panic - not syncing: sysrq triggered crash' in p['failure'], p['failure']
after = [p for p in pts if p['n'] > hung[0]['n'] and p['status'] == 'ran']
assert after, 'no point ran after the first host hang (the VM was not restarted)'
seen = {(p['point']['size'], p['point']['qps']) for p in pts if p['status'] in ('ran', 'host hung')}
assert len(seen) == 6, f'the space has 6 points; measured {sorted(seen)}'
f = json.load(open(out + '/findings.json'))
assert len(f) == 1 and f[0]['mfs'] == 'size >= 4096, qps >= 4' and f[0]['why'].startswith('host hung'), f
print(f'ok: {len(hung)} host hangs of the guest, {len(after)} points ran after the first, all 6 measured; '
      f'minimised to {f[0]["mfs"]}; repro.c: {f[0]["standalone"]}')
PY
n=$(ls "$out"/child-*.log | wc -l)
[ "$n" -ge 3 ] || fail "$n children (VMs) started; want the first and one after each host hang"
grep -q "only in rdmapipe" "$out/anomalies/1/standalone.txt" || fail "repro.c (no plant there) not run in the VM: $(cat "$out/anomalies/1/standalone.txt")"
[ $fails -eq 0 ] && echo "explore_runner: all passed" || echo "explore_runner: $fails failed"
exit $((fails > 0))
