#!/usr/bin/env bash
# Results files on rxe: the JSON is valid by docs/results.schema.json, agrees with the
# summary, has per-flow latency percentiles, per-lcore poll counts and a per-second
# series; the CSV has one row per flow; a pipeline file's run.output is honoured; an
# unwritable results file fails the run with a clear error.
. "$(dirname "$0")/lib.sh"
need_device
out=$(mktemp)
dir=$(mktemp -d)

run_rdmapipe "$out" -d "$DEV" -v write_imm -Q 1,4 -t 2.5 --output "$dir/rate.json" --csv "$dir/rate.csv"
expect_eq "rate: exit status" "$rc" 0
json_check "$dir/rate.json" "
assert r['run']['result'] == 'PASS' and r['run']['mode'] == 'rate' and r['run']['verb'] == 'RDMA_WRITE_WITH_IMM'
assert [f['name'] for f in r['flows']] == ['flow0', 'flow1'] and [f['qps'] for f in r['flows']] == [1, 4]
for f in r['flows']:
    assert f['messages_sent'] > 0 and f['messages_verified'] == f['messages_sent'] == f['messages_completed']
    assert f['bytes'] == 64 * f['messages_completed'] and f['completion_errors'] == {}
    l = f['latency_us']
    assert l['samples'] > 0 and 0 < l['min'] <= l['p50'] <= l['p90'] <= l['p99'] <= l['p99.9'] <= l['max']
assert sum(f['messages_verified'] for f in r['flows']) == int('$(field "$out" 'messages verified' | cut -d' ' -f1)')
assert [l['role'] for l in r['lcores']] == ['requester', 'responder'] and all(l['polls_busy'] > 0 for l in r['lcores'])
s = r['series']['completed']
assert r['series']['flows'] == ['flow0', 'flow1'] and len(s) >= 2
for a, b in zip(s, s[1:]):
    assert all(x <= y for x, y in zip(a, b))
assert all(x <= f['messages_completed'] for x, f in zip(s[-1], r['flows']))
" "matches the summary, latency and series sane"
expect_eq "csv rows" "$(wc -l <"$dir/rate.csv")" 3
expect_grep "$dir/rate.csv" "^flow,mode,verb,message_bytes,qps,messages_sent,"
expect_grep "$dir/rate.csv" "^flow1,rate,RDMA_WRITE_WITH_IMM,64,4,[0-9]+,"

run_rdmapipe "$out" -d "$DEV" --pingpong -n 2000 --output "$dir/lat.json" --csv "$dir/lat.csv"
expect_eq "pingpong: exit status" "$rc" 0
json_check "$dir/lat.json" "
f = r['flows'][0]
assert r['run']['mode'] == 'pingpong' and f['messages_verified'] == 2000
l = f['latency_us']
assert l['samples'] == 2000 and l['what'].startswith('half round trip')
assert abs(l['p50'] - float('$(field "$out" 'latency median' | sed 's/ us//')')) < 0.01
" "ping-pong latency matches the summary"
# Text with commas (what the latency measures) stays one CSV field.
if python3 -c "
import csv
rows = list(csv.reader(open('$dir/lat.csv')))
assert len(rows) == 2 and len(rows[1]) == len(rows[0]), rows
assert rows[1][rows[0].index('latency_what')].startswith('half round trip')
"; then echo "ok: ping-pong CSV: one field per column"; else echo "FAIL: ping-pong CSV fields"; fails=$((fails + 1)); fi

conf=$dir/out.conf
sed "s/\"rxe0\"/\"$DEV\"/g; s/messages = 200000;/messages = 20000;/; s|stats_period = 0;|stats_period = 0;\n  output = { json = \"$dir/conf.json\"; csv = \"$dir/conf.csv\"; };|" \
	"$(dirname "$0")/../../conf/default.conf" >"$conf"
run_rdmapipe "$out" -f "$conf"
expect_eq "pipeline output: exit status" "$rc" 0
json_check "$dir/conf.json" "
assert [f['name'] for f in r['flows']] == ['bw'] and r['flows'][0]['messages_verified'] == 20000
" "a pipeline's run.output, flows named from the file"
expect_grep "$dir/conf.csv" "^bw,rate,RDMA_WRITE_WITH_IMM,64,1,20000,20000,20000,"

# run.warmup: the summary adds the rate of what completed after it; what came before
# is counted and left out (a 0.3 s warm-up of a run of at least a second).
sed "s/\"rxe0\"/\"$DEV\"/g; s/warmup = 0;/warmup = 0.3;/" "$(dirname "$0")/../../conf/default.conf" >"$conf"
run_rdmapipe "$out" -f "$conf"
expect_eq "warm-up: exit status" "$rc" 0
left=$(field "$out" 'after warm-up' | sed -n 's/.*Gbit\/s (\([0-9]*\) messages in the first 0.3 s left out)$/\1/p')
[ "${left:-0}" -gt 0 ] && [ "${left:-0}" -lt 200000 ] && echo "ok: warm-up left out $left messages" ||
	{ echo "FAIL: warm-up: '$(field "$out" 'after warm-up')'"; fails=$((fails + 1)); }

run_rdmapipe "$out" -d "$DEV" -n 1000 --output /nonexistent/dir/r.json
expect_eq "unwritable: exit status" "$rc" 1
expect_grep "$out" "^rdmapipe: /nonexistent/dir/r.json: cannot write the results: No such file or directory$"
expect_grep "$out" "^result: PASS$"
rm -rf "$dir" "$out"
finish
