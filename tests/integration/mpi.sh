#!/usr/bin/env bash
# N ranks under mpirun (Open MPI) on one host, each on rxeA or rxeB by its rank on the
# host: every pattern with its data verified and one merged result from rank 0 (the
# job's results file checked against docs/job-results.schema.json; the ring's ranks each
# push their metrics to a Pushgateway a real Prometheus scrapes), then what goes wrong:
# a rank whose device does not exist, a rank killed mid-run. Each a clear error naming
# the rank, within a bound.
. "$(dirname "$0")/lib.sh"
need_device
wire_ready || finish
command -v mpirun >/dev/null || skip_or_fail "no mpirun (tools/install-deps installs openmpi-bin)"
"$RDMAPIPE" --version >/dev/null || { echo "FAIL: $RDMAPIPE --version"; exit 1; }
ldd "$RDMAPIPE" | grep -q libmpi || skip_or_fail "$RDMAPIPE was built without MPI (meson setup -Dmpi=enabled)"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Open MPI's own messages between ranks of one host go over shared memory (vader) and
# self, what it picks there anyway: its TCP BTL and the cm PML are not opened at all,
# whose probing cost each job 0.6-1.5 s of MPI_Init in the guest (three rounds of a
# 4-rank MPI_Init, interleaved). The ranks' data is rdmapipe's, over rdma_cm.
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
on_exit 'rm -rf "$work"'
A=${RXE_A_DEV:-rxeA}
B=${RXE_B_DEV:-rxeB}

# A Pushgateway for the ring's pushes (--push), and a Prometheus scraping it (honouring
# the pushed job and grouping labels), both started now: Prometheus's first scrape
# comes some 6 s after its start, while the first jobs run.
gw_ok=
if command -v prometheus-pushgateway >/dev/null && command -v prometheus >/dev/null; then
	prometheus-pushgateway --web.listen-address=127.0.0.1:19091 --persistence.file= >"$work/gw.log" 2>&1 &
	gw_pid=$!
	cat >"$work/prom.yml" <<-'EOF'
		global: {scrape_interval: 1s}
		scrape_configs:
		  - job_name: pushgateway
		    honor_labels: true
		    static_configs: [{targets: ['127.0.0.1:19091']}]
	EOF
	prometheus --config.file="$work/prom.yml" --storage.tsdb.path="$work/prom" --web.listen-address=127.0.0.1:19092 \
		>"$work/prom.log" 2>&1 &
	prom_pid=$!
	on_exit "kill $gw_pid $prom_pid 2>/dev/null"
	gw_ok=1
else
	echo "FAIL: prometheus-pushgateway or prometheus not found (tools/install-deps installs them)"; fails=$((fails + 1))
fi

# conf NAME: tests/integration/mpi/NAME.conf with this host's device names.
conf() { sed -e "s/rxeA/$A/g" -e "s/rxeB/$B/g" "$here/mpi/$1.conf" >"$work/$1.conf"; echo "$work/$1.conf"; }

# rank_cmd [PREFIX]: sets rank_cmd, what mpirun starts as each rank: rdmapipe; with
# PREFIX, rdmapipe with EAL's file prefix PREFIX and its rank, not the default
# rdmapipe-rankN: for a job run beside another one's ranks, which hold those.
rank_cmd() {
	rank_cmd=("$RDMAPIPE")
	# shellcheck disable=SC2016
	[ -z "${1:-}" ] || rank_cmd=(bash -c 'exec "$0" --file-prefix="$1$OMPI_COMM_WORLD_RANK" "${@:2}"' "$RDMAPIPE" "$1")
}

# job NP CONF [ARGS...]: mpirun -np NP, each rank on the VM's two CPUs (their lcores
# float over both: four busy pollers pinned to one CPU would crawl), bounded; sets
# $rc, $secs, and $out (rank 0's table, every rank's log lines). job_prefix=PREFIX
# job ...: with the ranks' file prefixes PREFIXN (rank_cmd).
job() {
	local np=$1 file=$2 start
	shift 2
	out=$work/out.$((++runs))
	start=$(date +%s)
	rank_cmd "${job_prefix:-}"
	timeout -k 5 300 mpirun --oversubscribe -np "$np" "${rank_cmd[@]}" --lcores '0@(0,1),1@(0,1)' --no-huge -m 192 \
		--no-pci --log-level=lib.eal:error -- -f "$file" --stall-timeout 20 --connect-timeout 20 "$@" >"$out" 2>&1
	rc=$?
	secs=$(($(date +%s) - start))
	echo "--- mpirun -np $np $file $* (exit $rc, $secs s)"
	cat "$out"
}
runs=0

# pattern NAME NP PAIRS ASSERTIONS: the pattern's job passes, its table has PAIRS pairs
# that passed, and the job's results file is valid and holds the assertions (r).
pattern() {
	local name=$1 np=$2 npairs=$3 assertions=$4
	job "$np" "$(conf "$name")" --output "$work/$name.json" --csv "$work/$name.csv" ${push:+--push "$push"} \
		${metrics:+--metrics "$metrics"}
	expect_eq "$name: mpirun exit" "$rc" 0
	expect_grep "$out" "^job: $np ranks, pattern $name, $npairs pairs"
	expect_grep "$out" "^job result: PASS$"
	expect_eq "$name: pairs that passed" "$(grep -cE '^  [a-z_]+ [0-9]+->[0-9]+ .* PASS' "$out")" "$((npairs * ${steps:-1}))"
	json_check "$work/$name.json" "
assert r['job']['ranks'] == $np and r['job']['pattern'] == '$name' and r['job']['result'] == 'PASS', r['job']
assert len(r['pairs']) == $npairs * ${steps:-1}, len(r['pairs'])
for p in r['pairs']:
    assert p['result'] == 'PASS' and p['errors'] == 0 and p['failed_qps'] == 0, p
for k in r['ranks']:
    assert k['reported'] and k['exit_status'] == 0, k
    assert k['device'] in ('$A', '$B') and k['address'] in ('${RXE_A_ADDR:-10.2.0.1}', '${RXE_B_ADDR:-10.2.0.2}'), k
    assert k['gid'] == '::ffff:' + k['address'] and k['gid_index'] >= 0, k
    for s in k['results']:
        assert s['run']['result'] == 'PASS', s['run']
$assertions" "the job's results, valid and as expected" job-results.schema.json
	expect_eq "$name: CSV rows" "$(($(wc -l <"$work/$name.csv") - 1))" "$((npairs * ${steps:-1}))"
}

# Ring: 4 ranks, each writes to the next; the receiver verifies every message. Each
# rank pushes its state at its end, and serves its metrics on a port of its own: the
# job's PORT plus its place on the host (the VM is one host: 19480 to 19483).
push=${gw_ok:+http://127.0.0.1:19091} metrics=127.0.0.1:19480 pattern ring 4 4 "
assert sorted((p['from'], p['to']) for p in r['pairs']) == [(0, 1), (1, 2), (2, 3), (3, 0)]
for p in r['pairs']:
    assert p['messages_sent'] == 4000 and p['messages_completed'] == 4000 and p['messages_verified'] == 4000, p
    assert p['message_rate'] > 0 and p['message_bytes'] == 4096, p
# ranks alternate devices by their rank on the host
assert [k['device'] for k in r['ranks']] == ['$A', '$B', '$A', '$B'], r['ranks']"
expect_grep "$out" "rank 1: rdmapipe: flow 'bw_1to2': client of ${RXE_A_ADDR:-10.2.0.1}:[0-9]+ on $B, 2 QPs"
expect_eq "ring: the ranks' metrics endpoints, a port each" \
	"$(grep -oE 'rdmapipe: metrics at http://127\.0\.0\.1:194[0-9]+/metrics' "$out" | sed -E 's|.*:([0-9]+)/metrics|\1|' | sort -u | tr '\n' ' ')" \
	"19480 19481 19482 19483 "
# The pushes arrived, each rank's its own group, and Prometheus has them from the
# gateway: every sender's 4000 messages, per pair (its src and dst ranks as labels;
# a pair the ring flagged and re-ran alone pushes that run under a confirm label).
# Asked in the background, while the next job runs (Prometheus scrapes once a second),
# and checked after it.
[ -z "$gw_ok" ] || python3 - >"$work/pushes.out" 2>&1 <<'PY' &
import json, time, urllib.parse, urllib.request
def q(expr):
    url = 'http://127.0.0.1:19092/api/v1/query?' + urllib.parse.urlencode({'query': expr})
    r = json.load(urllib.request.urlopen(url, timeout=10))
    assert r['status'] == 'success', r
    return {tuple(s['metric'][k] for k in ('rank', 'flow', 'src', 'dst')): float(s['value'][1]) for s in r['data']['result']}
want = {(str(i), f'bw_{i}to{(i + 1) % 4}', str(i), str((i + 1) % 4)): 4000.0 for i in range(4)}
end = time.monotonic() + 60
while True:
    try:
        got = q('rdmapipe_flow_messages_completed_total{job="rdmapipe",role="client",confirm=""}')
    except OSError:
        got = {}
    if got == want:
        break
    assert time.monotonic() < end, f'60 s and Prometheus has {got}, not {want}'
    time.sleep(0.5)
print('per pair, from the gateway:', got)
PY
pushes_pid=$!

# Pairs: i <-> i + N/2 both ways, UC made reliable in software, at a rate.
pattern pairs 4 4 "
assert sorted((p['from'], p['to']) for p in r['pairs']) == [(0, 2), (1, 3), (2, 0), (3, 1)]
for p in r['pairs']:
    assert p['messages_verified'] == 3000, p
for k in r['ranks']:
    for f in k['results'][0]['flows']:
        assert f['reliability']['kind'] == 'software', f"

# The ring's pushes (above).
if [ -n "$gw_ok" ]; then
	if wait "$pushes_pid"; then
		cat "$work/pushes.out"; echo "ok: the ring's pushes, through the Pushgateway into Prometheus"
	else
		cat "$work/pushes.out"; echo "FAIL: the ring's pushes"; tail -n 5 "$work/gw.log" "$work/prom.log"; fails=$((fails + 1))
	fi
fi

# All to all: 12 pairs of RDMA WRITEs, and a loopback flow of each rank's own beside them.
pattern all_to_all 4 12 "
assert len({(p['from'], p['to']) for p in r['pairs']}) == 12
for k in r['ranks']:
    names = [f['name'] for f in k['results'][0]['flows']]
    assert 'local' in names and len(names) == 7, names
    assert all(f['result'] == 'PASS' for f in k['results'][0]['flows'])"

# Incast into rank 1, a size sweep of two steps: a pair row per step.
steps=2 pattern incast 4 3 "
assert sorted({p['step'] for p in r['pairs']}) == ['64B', '8192B'], r['pairs']
assert all(p['to'] == 1 and p['messages_verified'] == 2000 for p in r['pairs']), r['pairs']
assert all(len(k['results']) == 2 for k in r['ranks'])"

# A list of pairs, each a ping-pong: latency percentiles per pair. A rank no pair names
# (the list's pairs among ranks 0..3, a job of 5) is idle, and the job still passes.
pattern list 5 2 "
assert sorted((p['from'], p['to']) for p in r['pairs']) == [(0, 3), (2, 1)]
for p in r['pairs']:
    assert p['latency_us']['p50'] > 0 and p['latency_us']['p99'] >= p['latency_us']['p50'], p
assert r['ranks'][4]['reported'] and r['ranks'][4]['results'] == [], r['ranks'][4]"
expect_grep "$out" "rank 4: rdmapipe: no pair of the pattern names this rank, and it has no flow of its own: idle$"

# Flagged pairs confirmed alone (pattern.confirm): netem caps the wire out of rxeA at
# 10 Mbit/s and delays it 20 ms each way. Rank 0's bulk to rank 1 across it is flagged
# on rate, its ping-pong to rank 1 on latency (20 ms a half round trip, against a few
# ms within rxeA), and re-run alone each stays so against the loaded run's best pair (0
# to 2, within rxeA): bad alone. (A pair slow only under load is not made reliably on
# rxe: test_job covers that verdict.)
[ $netem_cleared_on_exit -eq 1 ] || { on_exit netem_clear; netem_cleared_on_exit=1; }
tc qdisc add dev vA root netem delay 20ms rate 10mbit
tc qdisc add dev vB root netem delay 20ms
job 3 "$(conf confirm)" --output "$work/confirm.json" --csv "$work/confirm.csv" ${gw_ok:+--push http://127.0.0.1:19091}
expect_eq "confirm: mpirun exit" "$rc" 0
expect_grep "$out" "^rank 0: rdmapipe: re-running 2 flagged pair\\(s\\) alone, one at a time"
expect_grep "$out" "^  bulk 0->1 .* PASS  FLAGGED: rate -> bad alone \\(alone: [0-9.]+ msg/s"
expect_grep "$out" "^  pp 0->1 .* PASS  FLAGGED: (rate\\+)?latency -> bad alone \\(alone: [0-9.]+ msg/s, p50 [0-9.]+ us\\)"
expect_grep "$out" "^  re-run alone \\(at most pattern.confirm = 8\\): 2, 2 bad alone, 0 slow only under load$"
json_check "$work/confirm.json" "
p = {x['name']: x for x in r['pairs']}
assert r['job']['flagged'] == 2 and r['job']['confirm'] == 8, r['job']
assert r['job']['bad_alone'] == 2 and r['job']['slow_only_under_load'] == 0, r['job']
assert 'confirmed' not in p['bulk_0to2'] and 'confirmed' not in p['pp_0to2'], p
b, q = p['bulk_0to1'], p['pp_0to1']
assert b['flags'] == ['rate'] and b['confirmed'] == 'bad alone', b
assert b['alone']['result'] == 'PASS' and b['alone']['flags'] == ['rate'] and b['alone']['messages_verified'] > 0, b
assert b['alone']['message_rate'] < 0.5 * p['bulk_0to2']['message_rate'], b
assert 'latency' in q['flags'] and q['confirmed'] == 'bad alone', q
assert q['alone']['result'] == 'PASS' and 'latency' in q['alone']['flags'] and q['alone']['messages_verified'] == 30, q
assert q['alone']['latency_us']['p50'] > 3.0 * p['pp_0to2']['latency_us']['p50'], q
for k in r['ranks']:
    assert len(k['results']) == 1, k   # the re-runs are the pairs', not the ranks' results" \
	"each flagged pair confirmed alone" job-results.schema.json
expect_grep "$work/confirm.csv" ",bulk,0,1,4096,.*,PASS,rate,bad alone$"
# Rank 0's pushes: the loaded run's every flow in its group, each re-run alone in a group
# of its own (confirm=PAIR), none replacing another's families (a re-run's push once
# left rank 0 with its last re-run's flow alone). Counts as the results file has them.
if [ -n "$gw_ok" ]; then
	if python3 - "$work/confirm.json" >"$work/confirm-push.out" 2>&1 <<-'PY'; then
		import json, sys, time, urllib.parse, urllib.request
		r = json.load(open(sys.argv[1]))
		# the bulk clients' counts as the results file has them; the pings' (30 a run) there
		want = {('', p['name']): float(p['messages_completed']) for p in r['pairs']}
		want.update({(p['name'], p['name']): float(p['alone']['messages_sent']) for p in r['pairs'] if 'alone' in p})
		assert len(want) == 6, want
		expr = 'rdmapipe_flow_messages_completed_total{job="rdmapipe",role=~"client|ping",rank="0"}'
		url = 'http://127.0.0.1:19092/api/v1/query?' + urllib.parse.urlencode({'query': expr})
		end = time.monotonic() + 60
		while True:
		    try:
		        res = json.load(urllib.request.urlopen(url, timeout=10))['data']['result']
		        got = {(s['metric'].get('confirm', ''), s['metric']['flow']): float(s['value'][1]) for s in res}
		    except OSError:
		        got = {}
		    if got.keys() == want.keys() and all(got[k] == v or (k[1].startswith('pp') and got[k] > 0) for k, v in want.items()):
		        break
		    assert time.monotonic() < end, f'60 s and Prometheus has {got}, not {want}'
		    time.sleep(0.5)
		print('rank 0 from the gateway (confirm, flow):', got)
	PY
		cat "$work/confirm-push.out"; echo "ok: confirm: the loaded run's pushes kept beside the re-runs'"
	else
		cat "$work/confirm-push.out"; echo "FAIL: confirm: the loaded run's pushes beside the re-runs'"; fails=$((fails + 1))
	fi
fi
# confirm = 0: the same flags, nothing re-run.
sed -e 's/pattern = { kind/pattern = { confirm = 0; kind/' "$(conf confirm)" >"$work/noconfirm.conf"
job 3 "$work/noconfirm.conf" --output "$work/noconfirm.json"
expect_eq "confirm = 0: mpirun exit" "$rc" 0
expect_no_grep "$out" "re-run"
json_check "$work/noconfirm.json" "
assert r['job']['flagged'] == 2 and r['job']['confirm'] == 0, r['job']
assert not any('confirmed' in p or 'alone' in p for p in r['pairs']), r['pairs']" "nothing confirmed" job-results.schema.json
netem_clear

# The examples in conf/, as they are (they name rxeA and rxeB).
for f in "$here"/../../conf/job-*.conf; do
	job 4 "$f"
	expect_eq "$(basename "$f"): mpirun exit" "$rc" 0
	expect_grep "$out" "^job result: PASS$"
done

# A rank whose device does not exist: every rank ends, rank 0 names the ones that
# cannot take part, and nothing ran. Nothing crosses the wire, and the job runs beside
# the next one's, which waits out its connect timeouts with the wire cut: its ranks
# take EAL file prefixes and ports of their own (rdmapipe-bad-rankN, 18715 on).
sed -e "s/devices = \[\"$A\", \"$B\"\]/devices = [\"$A\", \"nosuch9\"]/" \
	-e 's/pattern = { kind = "ring";/pattern = { kind = "ring"; port = 18715;/' "$(conf ring)" >"$work/bad.conf"
(
	runs=1000   # its output file, out.1001, none of the next job's
	job_prefix=rdmapipe-bad-rank job 4 "$work/bad.conf" >"$work/bad.log"
	echo "$rc $secs $out" >"$work/bad.rc"
) &
bad_pid=$!

# Ranks that cannot reach each other (the wire between rxeA and rxeB cut before the
# start): every pair of the ring crosses it, each fails to connect (within its connect
# timeout, 3 s here), named with its rank; the job ends with status 3 (its flows could
# not be set up), and no rank waits on. Two ranks, one on each side: 0->1 and 1->0
# (four cost 2-3 s more of Open MPI's start-up in the guest, and cross the same wire).
netem_loss 100%
job 2 "$(conf ring)" --stall-timeout 5 --connect-timeout 3 --output "$work/cut.json"
netem_off
expect_eq "cut wire: mpirun exit" "$rc" 3
expect_grep "$out" "^job result: FAIL$"
expect_grep "$out" "^  bw 0->1 .* FAIL \(rank [01] \((sender|receiver)\) (failed it|did not run it): .*(connect|listen|stall)"
json_check "$work/cut.json" "
assert r['job']['result'] == 'FAIL' and all(p['result'] == 'FAIL' and 'rank ' in p['reason'] for p in r['pairs']), r['pairs']
assert all(k['reported'] for k in r['ranks'])" "every pair failed, named" job-results.schema.json
within "cut wire" "$secs" 45

# The missing device's job (above).
wait "$bad_pid"
read -r rc secs out <"$work/bad.rc" || { rc=none; secs=999; out=$work/bad.log; }
cat "$work/bad.log"
expect_eq "missing device: mpirun exit" "$rc" 3
expect_grep "$out" "rank 0: rdmapipe: rank 1 \(host [^)]+\), 3 \(host [^)]+\) cannot take part: .*nosuch9"
expect_no_grep "$out" "^job result"
within "missing device" "$secs" 30

# rank2_moving: rank 2's data moves: the send PSNs of its QPs in RTS (those rdma resource
# shows with its pid: a connection's active side, its client's, bw_2to3's) differ from
# the first ones seen. (A job's ranks print no stats lines: they refuse --stats-period.
# Rank 2's telemetry, rdmapipe-rank2, took 6-14 s a query with four ranks on the guest's
# two CPUs, and in one run did not answer within 60 s; the kernel's view needs no socket.)
rank2_moving() {
	local now= l rts=" state RTS .* pid $victim " psn=' sq-psn ([0-9]+)'
	rdma resource show qp >"$work/qps" 2>&1
	# Bash's own reading: a grep, sed and tr started each look cost the guest's busy
	# CPUs 0.3 s.
	while IFS= read -r l; do
		[[ $l =~ $rts ]] && [[ $l =~ $psn ]] && now+="${BASH_REMATCH[1]} "
	done <"$work/qps"
	[ -n "$now" ] || return 1
	[ -n "$psn0" ] || { psn0=$now; return 1; }
	[ "$now" != "$psn0" ] && psn1=$now
}

# hit_start SIGNAL CONF [PREFIX]: a ring from CONF in the background, and rank 2 given
# SIGNAL once its data moves; hit_end SIGNAL waits for that ring's mpirun and sets $rc,
# $out, $victim, $killed (when) and $end (when mpirun ended). PREFIX: the ranks' EAL
# file prefixes (rank_cmd).
declare -A hit_mpid=() hit_victim=() hit_started=() hit_killed=()
hit_start() {
	local sig=$1 file=$2 p environ
	out=$work/hit.$sig
	hit_started[$sig]=$(date +%s)
	rank_cmd "${3:-}"
	# mpirun's end, when it comes, written in $out.end: hit_end may come later.
	# shellcheck disable=SC2016
	run_bg "$out" bash -c '"${@:2}"; s=$?; date +%s >"$1"; exit $s' - "$out.end" \
		timeout -k 5 300 mpirun --oversubscribe -np 4 "${rank_cmd[@]}" \
		--lcores '0@(0,1),1@(0,1)' --no-huge -m 192 --no-pci --log-level=lib.eal:error -- -f "$file" --stall-timeout 5
	hit_mpid[$sig]=$bg_pid
	victim=
	# Rank 2's process, once its client is set up, and once it has sent data.
	if await_line "$out" "^rank 2: .*flow 'bw_2to3': client" "$bg_pid"; then
		for p in $(pgrep -f "rdmapipe.*${file##*/}"); do
			environ=()
			mapfile -d '' -t environ 2>/dev/null <"/proc/$p/environ"
			[[ " ${environ[*]} " == *" OMPI_COMM_WORLD_RANK=2 "* ]] && victim=$p
		done
		psn0=
		await "rank 2's QPs' send PSNs moving (rdma resource show qp)" "$work/qps" rank2_moving &&
			echo "rank 2's send PSNs moved: $psn0-> $psn1"
	fi
	hit_killed[$sig]=$(date +%s) hit_victim[$sig]=$victim
	[ -n "$victim" ] && kill "-$sig" "$victim"
}
hit_end() {
	local sig=$1
	out=$work/hit.$sig victim=${hit_victim[$sig]} killed=${hit_killed[$sig]}
	wait "${hit_mpid[$sig]}"
	rc=$?
	end=$(cat "$out.end" 2>/dev/null || date +%s)
	[ -n "$victim" ] && kill -CONT "$victim" 2>/dev/null
	echo "--- ring, rank 2 (pid ${victim:-none}) given SIG$sig after $((killed - hit_started[$sig])) s (mpirun exit $rc)"
	cat "$out"
	expect_eq "SIG$sig: found rank 2's process" "$([ -n "$victim" ] && echo yes)" yes
	expect_eq "SIG$sig: mpirun failed" "$([ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && echo yes)" yes
}

# A rank that hangs (stopped, not dead): its peers' flows stall and fail (5 s), the
# others end, and rank 0, having waited pattern.timeout for its results, names it and
# ends the job. 10 s of data, counted from each flow's start: the stop lands once rank
# 2's send PSNs move, about a second after its flow started (rdma resource show qp read
# by bash alone; it was 20 s while a tr, grep and sed each look made that up to 10 s),
# while the flows run, not after rank 2 has sent its results (which the checks below
# would fail on). The timeout, 15 s, counts from the last healthy end (rank 0's own, at
# the end of its 10 s, or a later one's): ranks 1 and 3 end a stall timeout (5 s) after
# the stop, so at most about 5 s after rank 0 (a stop at its very end), a third of it.
# Once the other ranks are done, the job idles through that timeout: the cases after
# run then, beside it, not beside its healthy ranks' data.
sed -e 's/messages = 4000;/duration = 10;/' -e 's/pattern = { kind = "ring";/pattern = { kind = "ring"; timeout = 15;/' \
	"$(conf ring)" >"$work/stopped.conf"
hit_start STOP "$work/stopped.conf"
# Until the stopped ring's ranks but rank 2 hold no QP (rdma resource show qp, looked at
# every 0.5 s: each look a process, which its busy ranks would feel): their runs are
# over, and rank 0 waits out its timeout for rank 2's results. 60 s at most.
others=" "
for p in $(pgrep -f "rdmapipe.*stopped\.conf"); do
	[ "$p" = "${hit_victim[STOP]}" ] || others+="$p "
done
others_end=$((SECONDS + 60))
while :; do
	rdma resource show qp >"$work/qps" 2>&1
	left=
	while IFS= read -r l; do
		[[ $l =~ \ pid\ ([0-9]+)\  ]] && [[ $others == *" ${BASH_REMATCH[1]} "* ]] && left=${BASH_REMATCH[1]}
	done <"$work/qps"
	if [ -z "$left" ]; then
		echo "the stopped ring's ranks 0, 1 and 3 are done, $(($(date +%s) - hit_killed[STOP])) s after the stop"
		break
	fi
	if [ "$SECONDS" -gt "$others_end" ]; then
		echo "FAIL: the stopped ring's ranks 0, 1 and 3 not done within 60 s (pid $left holds QPs):"; cat "$work/qps"
		fails=$((fails + 1))
		break
	fi
	nap 0.5
done

# The results files of the jobs above, checked now (finish would have), beside the ring.
json_checks_run

# A rank killed mid-run: mpirun ends every rank and names it; the others do not hang.
# Beside the stopped ring, whose ranks hold rdmapipe-rankN and their ports (18515 on),
# its ranks take EAL file prefixes and ports of their own (rdmapipe-kill-rankN, 18615 on).
sed -e 's/messages = 4000;/duration = 60;/' -e 's/pattern = { kind = "ring";/pattern = { kind = "ring"; port = 18615;/' \
	"$(conf ring)" >"$work/long.conf"
hit_start KILL "$work/long.conf" rdmapipe-kill-rank
hit_end KILL
expect_grep "$out" "rank 2 .*exited on signal 9"
within "killed rank: the job ended" "$((end - killed))" 15

hit_end STOP
expect_grep "$out" "rank 0: rdmapipe: rank\\(s\\) 2 sent no results within 15 s of the others' ends: ending the job$"
expect_grep "$out" "^  2 .* NO RESULTS"
expect_grep "$out" "^job result: FAIL$"
within "stopped rank: the job ended" "$((end - killed))" 60

finish
