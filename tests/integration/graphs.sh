#!/usr/bin/env bash
# The pipeline builder runs shapes no run kind had: every file in graphs/ on rxe, with
# its data verified and the counters that show the shape ran as written (gens split a
# flow, a ring crosses lcores, stages forward and fan in and out, lcores idle); a
# corrupted payload in a fed flow is caught downstream.
. "$(dirname "$0")/lib.sh"
need_device
out=$(mktemp)
dir=$(cd "$(dirname "$0")/graphs" && pwd)

# run NAME [args]: the file graphs/NAME.conf pointed at this machine's device.
run() {
	local name=$1
	shift
	conf=$(mktemp --suffix=.conf)
	sed "s/\"rxe0\"/\"$DEV\"/g" "$dir/$name.conf" >"$conf"
	run_rdmapipe "$out" -f "$conf" "$@"
	rm -f "$conf"
}

# stage_msgs NAME: the messages a stage handled, from its summary line.
stage_msgs() {
	sed -n "s/^  stage $1: .* on lcore [0-9]*: \([0-9]*\) messages.*/\1/p" "$out"
}

# flow_count FLOW N: the Nth of a flow's summary counts (1 sent, 2 completed, 3 received,
# 4 verified).
flow_count() {
	sed -n "s/^  flow $1: .* sent \([0-9]*\), completed \([0-9]*\), received \([0-9]*\), verified \([0-9]*\).*/\\$2/p" "$out"
}

# expect_count WHAT GOT WANT: as expect_eq, and GOT must be a count at all: two counts
# missing from the summary would otherwise compare equal.
expect_count() {
	if [[ $2 =~ ^[0-9]+$ ]]; then expect_eq "$1" "$2" "$3"; else echo "FAIL: $1: no count ('$2')"; fails=$((fails + 1)); fi
}

# about_2s: the run of a 2 s duration took at least 2 s, and not what a run ignoring its
# duration would take (these make thousands a second unpaced, without end). The upper
# bound is wide because the guest's speed varies 2x and the run's drain counts too.
about_2s() {
	local secs
	secs=$(field "$out" elapsed | cut -d' ' -f1)
	awk -v s="${secs:-0}" 'BEGIN { exit !(s >= 2 && s < 8) }' && ok=yes || ok="no (${secs:-none} s)"
	expect_eq "$name: elapsed 2 s and not far past it" "$ok" yes
}

# lcores_of FILE: three or four lcores where the file has them, mapped onto the guest's two CPUs.
lcores_of() {
	if grep -q 'lcore = 3;' "$1"; then echo '--lcores (0-3)@(0-1)'
	elif grep -q 'lcore = 2;' "$1"; then echo '--lcores (0-2)@(0-1)'
	fi
}

for name in gen-across-lcores two-gens-mp-ring crossing-flows forward-and-sinks mc-ring-adaptive duration pingpong-beside-flows duration-relay lanes-beside-flows lanes-default-sizes lanes-writes gen-duration gen-duration-unpaced; do
	EAL_LCORES=$(lcores_of "$dir/$name.conf")
	run "$name"
	EAL_LCORES=
	expect_eq "$name: exit status" "$rc" 0
	expect_grep "$out" "^result: PASS$"
	sent=$(field "$out" 'messages sent')
	[ -n "$sent" ] && [ "$sent" -gt 0 ] || sent="(missing)"
	expect_eq "$name: verified = sent" "$(field "$out" 'messages verified' | cut -d' ' -f1)" "$sent"
	expect_eq "$name: buffers not returned" "$(field "$out" 'buffers not returned')" 0
	case $name in
	gen-across-lcores)
		expect_grep "$out" "^  stage g: +gen on lcore 0: 30000 messages"
		expect_grep "$out" "^  stage v: +verify on lcore 1: 30000 messages .*checked 30000 \(payload errors 0"
		expect_grep "$out" "^  flow f: +SEND, 128 B, 2 QPs, lcore 1 -> lcore 0: sent 30000, completed 30000, received 30000, verified 30000 \(sends what its ring brings\)$" ;;
	two-gens-mp-ring)
		expect_eq "$name: g0 made" "$(stage_msgs g0)" 20001
		expect_eq "$name: g1 made" "$(stage_msgs g1)" 20000
		expect_eq "$name: sent" "$sent" 40001 ;;
	crossing-flows)
		expect_grep "$out" "^  flow reads: +RDMA_READ, 4096 B, 2 QPs, lcore 0 -> lcore 1: sent 20000, completed 20000, received 20000, verified 20000$"
		expect_grep "$out" "^  flow sends: +SEND_WITH_IMM, 64 B, 3 QPs, lcore 1 -> lcore 0: sent 30000, completed 30000, received 30000, verified 30000$"
		expect_grep "$out" "^  flow writes: +RDMA_WRITE_WITH_IMM, 64 B, 2 QPs, lcore 1 -> lcore 0: sent 30000, completed 30000, received 30000, verified 30000$"
		expect_grep "$out" "^  flow adds: +ATOMIC_FETCH_AND_ADD, 8 B, 2 QPs, lcore 0 -> lcore 1: sent 10000, completed 10000, received 10000, verified 10000$" ;;
	forward-and-sinks)
		expect_eq "$name: forwarded" "$(stage_msgs fw)" 20000
		expect_eq "$name: verified by v" "$(stage_msgs v)" 20000
		expect_eq "$name: sunk by k" "$(stage_msgs k)" 20000
		expect_eq "$name: gen made" "$(stage_msgs g)" 5000
		expect_eq "$name: sunk by gk" "$(stage_msgs gk)" 5000 ;;
	mc-ring-adaptive)
		v0=$(stage_msgs v0) v1=$(stage_msgs v1)
		expect_eq "$name: v0 + v1" "$(( ${v0:-0} + ${v1:-0} ))" 2000
		# Paced flows leave both lcores idle most of the time: each slept.
		for lc in 0 1; do
			slept=$(sed -n "s/^  lcore $lc .*, slept \([0-9]*\) times.*/\1/p" "$out")
			[ "${slept:-0}" -gt 0 ] && ok=yes || ok="no (${slept:-none})"
			expect_eq "$name: lcore $lc slept when idle" "$ok" yes
		done ;;
	duration)
		about_2s ;;
	gen-duration | gen-duration-unpaced)
		# Gens that run for 2 s: the flow sends, delivers and verifies exactly what they
		# made (nothing made is lost at their end), in about the duration.
		expect_grep "$out" "^  flow g: .* \(sends what its ring brings\)$"
		made=0
		for gs in gen g0 g1; do
			m=$(stage_msgs "$gs")
			made=$(( made + ${m:-0} ))
		done
		expect_count "$name: sent = made" "$(flow_count g 1)" "$made"
		expect_count "$name: completed = made" "$(flow_count g 2)" "$made"
		expect_count "$name: received = made" "$(flow_count g 3)" "$made"
		expect_count "$name: verified = made" "$(flow_count g 4)" "$made"
		for k in 'payload errors' 'completion errors' 'failed QPs' 'lost messages' 'sequence errors'; do
			expect_eq "$name: $k" "$(field "$out" "$k")" 0
		done
		about_2s ;;&
	gen-duration)
		# Paced at 2000 msg/s by its gen alone: the flow's rate, sent over elapsed, and the
		# gen's own (made over its 2 s) at most 15% above the pace (one burst early at each
		# end), which is the pace's promise. Below it only half: a starved gen catches up
		# one burst at most, so a guest loaded 2x loses up to half (a loaded host lost 8%
		# in one run), and an unpaced gen makes thousands more (gen-duration-unpaced).
		expect_grep "$out" "^  rate limit: +2000 msg/s per flow \(paced by its gen stages\)$"
		# Its one gen, timed, feeds the verify: the verify checks their order too.
		expect_grep "$out" "^  stage v: +verify on lcore 1: [0-9]+ messages .*checked [0-9]+ in order \(payload errors 0, sequence errors 0\)"
		expect_grep "$out" "^  stage gen: +gen on lcore 1: [0-9]+ messages in [0-9]+ bursts, made [0-9]+ in 2\.[0-9]+ s \([0-9]+ msg/s, paced at 2000\)"
		secs=$(field "$out" elapsed | cut -d' ' -f1)
		rate=$(awk -v n="$sent" -v s="${secs:-0}" 'BEGIN { if (s > 0) printf "%d", n / s; else print 0 }')
		[ "$rate" -ge 1000 ] && [ "$rate" -le 2300 ] && ok=yes || ok="no ($rate msg/s from $sent in ${secs:-?} s)"
		expect_eq "$name: rate paced at 2000 msg/s (1000..2300)" "$ok" yes
		grate=$(sed -n 's/^  stage gen: .* made [0-9]* in [0-9.]* s (\([0-9]*\) msg\/s.*/\1/p' "$out")
		[ "${grate:-0}" -ge 1000 ] && [ "${grate:-0}" -le 2300 ] && ok=yes || ok="no (${grate:-none})"
		expect_eq "$name: the gen's measured rate paced at 2000 msg/s (1000..2300)" "$ok" yes ;;
	gen-duration-unpaced)
		# Unpaced, both gens made some, far more than a paced run's.
		for gs in g0 g1; do
			m=$(stage_msgs "$gs")
			[ "${m:-0}" -gt 0 ] && ok=yes || ok="no (${m:-none})"
			expect_eq "$name: $gs made some" "$ok" yes
		done
		[ "$made" -gt 4000 ] && ok=yes || ok="no ($made)"
		expect_eq "$name: made more than 4000" "$ok" yes
		expect_grep "$out" "^  stage g0: +gen on lcore 0: [0-9]+ messages in [0-9]+ bursts, made [0-9]+ in 2\.[0-9]+ s \([0-9]+ msg/s\)" ;;
	duration-relay)
		# Each relayed flow sends exactly what the one before it received, until its input ends.
		in_rx=$(flow_count in 3)
		[ "${in_rx:-0}" -gt 1000 ] && ok=yes || ok="no (${in_rx:-none})"
		expect_eq "$name: the 2 s flow delivered" "$ok" yes
		expect_count "$name: out sent = in received" "$(flow_count out 1)" "$in_rx"
		expect_count "$name: back sent = out received" "$(flow_count back 1)" "$(flow_count out 3)"
		expect_count "$name: back verified" "$(flow_count back 4)" "$in_rx"
		expect_eq "$name: verify stage checked" "$(stage_msgs v)" "$in_rx"
		expect_grep "$out" "^  stage v: +verify on lcore 0: [0-9]+ messages .*\(payload errors 0, "
		expect_grep "$out" "^  flow back: .* \(sends what its ring brings\)$" ;;
	lanes-beside-flows)
		expect_grep "$out" "^  flow reads: +RDMA_READ, 64 B, 4 QPs, lanes on lcores 0,1 -> a passive far end: sent 20001, completed 20001, received 20001, verified 20001$"
		expect_grep "$out" "^  QP sharing: +4 QPs shared by 2 lcores"
		expect_grep "$out" "^  lane on lcore 0 +sent 10001, completed 10001, verified 10001, "
		expect_grep "$out" "^  lane on lcore 1 +sent 10000, completed 10000, verified 10000, "
		expect_grep "$out" "^  flow sends: +SEND, 256 B, 2 QPs, lcore 0 -> lcore 1: sent 20000, completed 20000, received 20000, verified 20000$"
		expect_grep "$out" "^  flow writes: +RDMA_WRITE_WITH_IMM, 128 B, 2 QPs, lcore 1 -> lcore 0: sent 20000, completed 20000, received 20000, verified 20000$" ;;
	lanes-default-sizes)
		expect_grep "$out" "^  flow reads: +RDMA_READ, 1024 B, 6 QPs, lanes on lcores 0,1,2 -> a passive far end: sent 30000, completed 30000, received 30000, verified 30000$"
		expect_grep "$out" "^  lane on lcore 2 +sent 10000, completed 10000, verified 10000, " ;;
	lanes-writes)
		expect_grep "$out" "^  flow writes: +RDMA_WRITE, 256 B, 6 QPs, lanes on lcores 0,1,2 -> a passive far end, checked by lcore 3: sent 30000, completed 30000, received 30000, verified 30000$"
		expect_grep "$out" "^  QP sharing: +6 QPs shared by 3 lcores"
		expect_grep "$out" "^  lane on lcore 1 +sent 10000, completed 10000, verified 10000, "
		# Each lane's window in each QP (1024 / 6 = 170 slots) holds its last writes.
		expect_eq "$name: window slots checked" "$(field "$out" 'window slots checked')" $((3 * 6 * 170))
		expect_eq "$name: payload errors" "$(field "$out" 'payload errors')" 0 ;;
	pingpong-beside-flows)
		expect_grep "$out" "^  flow lat: +SEND_WITH_IMM, 64 B, 2 QPs, lcore 0 -> lcore 1: sent 6000, completed 6000, received 6000, verified 6000$"
		expect_grep "$out" "^  flow bw: +RDMA_WRITE_WITH_IMM, 256 B, 2 QPs, lcore 1 -> lcore 0: sent 30000, completed 30000, received 30000, verified 30000$"
		expect_grep "$out" "^  flow sends: +SEND, 512 B, 2 QPs, lcore 0 -> lcore 1: sent 20000, completed 20000, received 20000, verified 20000$"
		expect_eq "$name: echoes verified" "$(field "$out" 'echoes verified')" 6000
		expect_eq "$name: latency samples" "$(field "$out" 'latency samples' | cut -d' ' -f1)" 6000
		expect_eq "$name: unknown QPs" "$(field "$out" 'unknown QPs')" 0 ;;
	esac
done

# Lanes of every one-sided verb, from the two files above: writes over QPs each lane
# owns (every third), atomics on shared QPs and on owned ones (a word per lane per QP),
# and the 6-QP 3-lane READ flow with no sizes given on QPs not shared. Every message
# checked: the far end's memory by its rdma_rx stage, atomics' returns by each lane.
EAL_LCORES='--lcores (0-3)@(0-1)'
lanes_variant() {   # lanes_variant FILE NAME SED: graphs/FILE.conf changed by SED, run
	conf=$(mktemp --suffix=.conf)
	sed -e "s/\"rxe0\"/\"$DEV\"/g" -e "$3" "$dir/$1.conf" >"$conf"
	run_rdmapipe "$out" -f "$conf"
	rm -f "$conf"
	expect_eq "$2: exit status" "$rc" 0
	expect_grep "$out" "^result: PASS$"
	expect_eq "$2: payload errors" "$(field "$out" 'payload errors')" 0
	expect_eq "$2: buffers not returned" "$(field "$out" 'buffers not returned')" 0
}
lanes_variant lanes-writes "write lanes, QPs owned" 's/share_qps = true;/share_qps = false;/'
expect_grep "$out" "^  flow writes: +RDMA_WRITE, 256 B, 6 QPs, lanes on lcores 0,1,2 -> a passive far end, checked by lcore 3: sent 30000, completed 30000, received 30000, verified 30000$"
expect_grep "$out" "^  QP sharing: +none: 6 QPs split over 3 lcores \(2 each, a send CQ each\)"
expect_eq "write lanes, QPs owned: window slots checked" "$(field "$out" 'window slots checked')" $((6 * 170))
for share in true false; do
	for verb in fetch_add cmp_swap; do
		lanes_variant lanes-writes "$verb lanes, share_qps $share" "s/verb = \"write\"; size = 256;/verb = \"$verb\"; size = 8;/; s/share_qps = true;/share_qps = $share;/"
		expect_grep "$out" "^  flow writes: +ATOMIC_[A-Z_]+, 8 B, 6 QPs, lanes on lcores 0,1,2 -> a passive far end, checked by lcore 3: sent 30000, completed 30000, received 30000, verified 30000$"
		[ "$share" = true ] && words=18 || words=6
		expect_eq "$verb lanes, share_qps $share: final words checked" "$(field "$out" 'final words checked')" "$words"
	done
done
lanes_variant lanes-default-sizes "6-QP 3-lane reads, no sizes, QPs owned" 's/share_qps = true;/share_qps = false;/'
expect_grep "$out" "^  flow reads: +RDMA_READ, 1024 B, 6 QPs, lanes on lcores 0,1,2 -> a passive far end: sent 30000, completed 30000, received 30000, verified 30000$"

# A byte flipped in a message of lane 0's QP 0 in its last window (170 slots), so that
# no later write covers it: shared, lane 0 writes 1667 messages into QP 0 (10000 over 6
# QPs), owning its QPs 5000 into each of its two. The far end's final check names it
# (slice 0: lane 0's of QP 0, or the flow's QP 0) and the run fails.
for variant in "true 1600" "false 4900"; do
	set -- $variant
	share=$1
	conf=$(mktemp --suffix=.conf)
	sed -e "s/\"rxe0\"/\"$DEV\"/g" -e "s/share_qps = true;/share_qps = $share;/" "$dir/lanes-writes.conf" >"$conf"
	run_rdmapipe "$out" -f "$conf" --inject-corruption "$2"
	rm -f "$conf"
	expect_eq "write lanes share_qps $share, corrupted: exit status" "$rc" 1
	expect_eq "write lanes share_qps $share, corrupted: payload errors" "$(field "$out" 'payload errors')" 1
	expect_eq "write lanes share_qps $share, corrupted: first bad message" "$(field "$out" 'first bad message')" \
		"QP 0 seq $2, byte 128 differs from the pattern"
	expect_grep "$out" "^result: FAIL$"
done
EAL_LCORES=

# Per-stage costs (rte_graph's node stats): with --stage-cycles every stage's line
# says its calls and TSC cycles per message, and the results file has them.
json=$(mktemp --suffix=.json)
run forward-and-sinks --stage-cycles --output "$json"
expect_eq "stage cycles: exit status" "$rc" 0
expect_grep "$out" "^  stage fw: +forward on lcore 1: 20000 messages in [0-9]+ bursts.*; [0-9]+ calls, [0-9.]+ cycles per message$"
expect_grep "$out" "^  stage tx: +rdma_tx on lcore 1: 20000 messages in [0-9]+ bursts; [0-9]+ calls, [0-9.]+ cycles per message$"
python3 - "$json" <<'PY' && echo "ok: results have the stages" || { echo "FAIL: results stages"; fails=$((fails + 1)); }
import json, sys
r = json.load(open(sys.argv[1]))
st = {s['name']: s for s in r['stages']}
assert set(st) == {'tx', 'rx', 'fw', 'v', 'k', 'stx', 'srx', 'g', 'gk'}, st
assert st['fw']['kind'] == 'forward' and st['fw']['lcore'] == 1 and st['fw']['objects'] == 20000, st['fw']
assert st['fw']['calls'] >= 1 and st['fw']['busy_cycles'] > 0 and st['fw']['cycles_per_object'] > 0, st['fw']
assert st['g']['objects'] == 5000 and st['gk']['objects'] == 5000, st
PY
rm -f "$json"

# A byte flipped in flow f's message 100 (QP 0): the fed flow sends what the gen made,
# the receiver hands it on, and the verify stage on the other lcore catches it.
run gen-across-lcores --inject-corruption 100
expect_eq "gen-across-lcores, corrupted: exit status" "$rc" 1
expect_grep "$out" "^  stage v: +verify on lcore 1: 30000 messages .*checked 30000 \(payload errors 1, "
expect_eq "gen-across-lcores, corrupted: verified" "$(field "$out" 'messages verified')" 29999
expect_eq "gen-across-lcores, corrupted: payload errors" "$(field "$out" 'payload errors')" 1
expect_grep "$out" "^result: FAIL$"
# The command line is a pipeline: the file --dump-conf prints for it runs the same run
# through the same builder (two flows of 3 and 5 QPs, extended CQs, the wr post API).
dump=$(mktemp --suffix=.conf)
# shellcheck disable=SC2046
"$RDMAPIPE" $(eal_args) -- -d "$DEV" -v send_imm -Q 3,5 -n 9000 --cq-api ex --post-api wr --dump-conf >"$dump"
expect_eq "--dump-conf: exit status" "$?" 0
run_rdmapipe "$out" -f "$dump"
expect_eq "dumped pipeline: exit status" "$rc" 0
expect_grep "$out" "^  verb: +SEND_WITH_IMM, 64 B, 8 QPs in 2 flows,"
expect_grep "$out" "^  completions: +extended CQs"
expect_grep "$out" "^  posting: +ibv_qp_ex"
expect_eq "dumped pipeline: verified" "$(field "$out" 'messages verified')" 18000

# A size sweep: three steps, each a whole run with its own summary and results file,
# then one line per step; every message of every step verified.
sweep=$(mktemp -d)
run size-sweep --output "$sweep/sweep.json"
expect_eq "size sweep: exit status" "$rc" 0
expect_eq "size sweep: steps" "$(grep -c "^rdmapipe: size sweep, step [1-3] of 3: " "$out")" 3
expect_eq "size sweep: passed steps" "$(grep -c "^result: PASS$" "$out")" 4   # three steps and the sweep
for step in "64B+64B 3000 4000" "4096B+512B 3000 4000" "65536B+2048B 3000 4000"; do
	set -- $step
	expect_grep "$out" "^  ${1//+/\\+}: +[0-9.]+ Mmsg/s, [0-9.]+ Gbit/s, PASS$"
	python3 - "$sweep/sweep.$1.json" "$1" <<'PY' && echo "ok: step $1: results file" || { echo "FAIL: step $1: results file"; fails=$((fails + 1)); }
import json, sys
r = json.load(open(sys.argv[1]))
f = {x['name']: x for x in r['flows']}
bw, chain = (int(x[:-1]) for x in sys.argv[2].split('+'))
assert r['run']['result'] == 'PASS', r['run']
assert f['bw']['messages_verified'] == 3000 and f['bw']['bytes'] == 3000 * bw, f['bw']
assert f['chain']['messages_verified'] == 4000 and f['chain']['bytes'] == 4000 * chain, f['chain']
assert f['reads']['bytes'] == 2000 * 4096, f['reads']
PY
done
expect_grep "$out" "^  flow chain: +SEND, 2048 B, 2 QPs, lcore 1 -> lcore 0: sent 4000, completed 4000, received 4000, verified 4000 \(sends what its ring brings\)$"
rm -rf "$sweep"

# Two devices in one process (rxeA on lcore 0, rxeB on lcore 1), across their wire:
# each flow's QPs on the devices of its two ends, the relayed buffers (received into
# rxeB's pool) sent from rxeA; through rdma_cm and connected directly.
if [ -n "${RXE_A_DEV:-}" ] && [ -n "${RXE_B_DEV:-}" ] && [ -e "/sys/class/infiniband/${RXE_A_DEV}" ]; then
	for connect in cm direct; do
		conf=$(mktemp --suffix=.conf)
		sed -e "s/\"rxeA\"/\"$RXE_A_DEV\"/g; s/\"rxeB\"/\"$RXE_B_DEV\"/g" "$dir/two-devices.conf" >"$conf"
		echo "run = { connect = \"$connect\"; };" >>"$conf"
		run_rdmapipe "$out" -f "$conf"
		rm -f "$conf"
		expect_eq "two devices ($connect): exit status" "$rc" 0
		expect_grep "$out" "^result: PASS$"
		expect_grep "$out" "^  device: +$RXE_A_DEV port 1"
		expect_grep "$out" "^  device: +$RXE_B_DEV port 1"
		expect_grep "$out" "^  flow there: +SEND, 256 B, 2 QPs, lcore 0 -> lcore 1: sent 20000, completed 20000, received 20000, verified 20000$"
		expect_grep "$out" "^  flow back: +SEND, 256 B, 2 QPs, lcore 0 -> lcore 1: sent 20000, completed 20000, received 20000, verified 20000 \(sends what its ring brings\)$"
		expect_grep "$out" "^  flow reads: +RDMA_READ, 4096 B, 2 QPs, lcore 1 -> lcore 0: sent 10000, completed 10000, received 10000, verified 10000$"
		expect_eq "two devices ($connect): buffers not returned" "$(field "$out" 'buffers not returned')" 0
		# The packets crossed the wire: both ports counted them.
		expect_grep "$out" "^  port counters: .*$RXE_A_DEV:sent_pkts [1-9]"
		expect_grep "$out" "^  port counters: .*$RXE_B_DEV:sent_pkts [1-9]"
	done
	# Lanes owning their QPs, one on each device: reads (each lane's far end its own) run;
	# writes, whose far end is checked in one memory, are refused, naming why.
	for verb in read write; do
		conf=$(mktemp --suffix=.conf)
		cat >"$conf" <<-EOF
		version = 1;
		devices = ( { name = "$RXE_A_DEV"; }, { name = "$RXE_B_DEV"; } );
		io_contexts = ( { lcore = 0; device = "$RXE_A_DEV"; }, { lcore = 1; device = "$RXE_B_DEV"; }, { lcore = 2; device = "$RXE_A_DEV"; } );
		flows = ( { name = "f"; verb = "$verb"; size = 256; qps = 4; messages = 20000; } );
		stages = ( { name = "l0"; kind = "rdma_tx"; lcore = 0; flow = "f"; }, { name = "l1"; kind = "rdma_tx"; lcore = 1; flow = "f"; }
		EOF
		[ $verb = write ] && echo ', { name = "far"; kind = "rdma_rx"; lcore = 2; flow = "f"; }' >>"$conf"
		echo ');' >>"$conf"
		EAL_LCORES='--lcores (0-2)@(0-1)'
		run_rdmapipe "$out" -f "$conf"
		EAL_LCORES=
		rm -f "$conf"
		if [ $verb = read ]; then
			expect_eq "read lanes on two devices: exit status" "$rc" 0
			expect_grep "$out" "^  flow f: +RDMA_READ, 256 B, 4 QPs, lanes on lcores 0,1 -> a passive far end: sent 20000, completed 20000, received 20000, verified 20000$"
		else
			expect_eq "write lanes on two devices: refused" "$rc" 3
			expect_grep "$out" "flow 'f': its lanes' far end is checked in one memory \\(rdma_rx stage\\): lcore 1 is on $RXE_B_DEV, lcore 0 on $RXE_A_DEV"
		fi
	done
else
	part_skipped "two devices (no rxeA/rxeB pair, RXE_A_DEV and RXE_B_DEV; run under tools/softroce)"
fi
rm -f "$out" "$dump"
finish
