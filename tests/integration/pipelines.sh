#!/usr/bin/env bash
# Every pipeline in conf/ runs as it is on rxe, with its data verified (the two-host
# ones run in remote.sh, the jobs of N ranks in mpi.sh); the verify stage after rdma_rx catches a corrupted payload,
# in the relay too; QP sharing's corners; UC from a file; a gen stage into a sink.
. "$(dirname "$0")/lib.sh"
need_device
out=$(mktemp)
conf_dir=$(cd "$(dirname "$0")/../../conf" && pwd)

for f in "$conf_dir"/*.conf; do
	name=$(basename "$f")
	# Two-host pipelines need both halves: remote.sh runs them.
	grep -qE '^[^#]*(listen = |peer = "[^l])' "$f" && continue
	# Jobs of N ranks need mpirun: mpi.sh runs them.
	grep -qE '^pattern = ' "$f" && continue
	# rdmapipe-explore's space files are not pipelines (explore_app checks them).
	[[ $name == explore-* ]] && continue
	# The examples name rxe0: point them at this machine's device.
	conf=$f
	if [ "$DEV" != rxe0 ]; then
		conf=$(mktemp --suffix=.conf)
		sed "s/\"rxe0\"/\"$DEV\"/g" "$f" >"$conf"
	fi
	# Examples for three lcores say so in their usage line.
	EAL_LCORES=
	grep -q -- '-l 0-2 ' "$f" && EAL_LCORES='--lcores (0-2)@(0-1)'
	run_rdmapipe "$out" -f "$conf"
	EAL_LCORES=
	expect_eq "$name: exit status" "$rc" 0
	expect_grep "$out" "^result: PASS$"
	got=$(field "$out" 'messages verified' | cut -d' ' -f1) want=$(field "$out" 'messages sent')
	# Both counts must be there, and above zero: an empty match proves nothing.
	[ -n "$want" ] && [ "${want:-0}" -gt 0 ] || want="(missing)"
	expect_eq "$name: verified = sent" "$got" "$want"
	[ "$conf" != "$f" ] && rm -f "$conf"
done

# The verify stage after rdma_rx catches a payload the NIC delivered intact but the
# sender corrupted.
run_rdmapipe "$out" -f "$conf_dir/rx-verify-sink.conf" --inject-corruption 500
expect_eq "rx-verify-sink, corrupted: exit status" "$rc" 1
expect_grep "$out" "^  stage verify: +verify on lcore 0: 100000 messages in [0-9]+ bursts, checked 100000 \(payload errors 1, sequence errors 0\)"
expect_grep "$out" "^  stage sink: +sink on lcore 0: 100000 messages"
expect_eq "rx-verify-sink, corrupted: verified" "$(field "$out" 'messages verified')" 99999
expect_grep "$out" "^result: FAIL$"

# The relay: a payload corrupted by flow in's sender is caught by the verify stage in
# the middle, passed on (nothing is dropped), and caught again at flow out's receiver;
# every buffer still comes back to its pool.
EAL_LCORES='--lcores (0-2)@(0-1)'
run_rdmapipe "$out" -f "$conf_dir/relay.conf" --inject-corruption 500
EAL_LCORES=
expect_eq "relay, corrupted: exit status" "$rc" 1
expect_grep "$out" "^  stage verify: +verify on lcore 0: 40000 messages in [0-9]+ bursts, checked 40000 \(payload errors 1, "
expect_grep "$out" "^  flow in: +SEND_WITH_IMM, 256 B, 4 QPs, lcore 1 -> lcore 2: sent 40000, completed 40000, received 40000, verified 39999$"
expect_grep "$out" "^  flow out: +SEND_WITH_IMM, 256 B, 4 QPs, lcore 0 -> lcore 1: sent 40000, completed 40000, received 40000, verified 39999 \(sends what its ring brings\)$"
expect_eq "relay, corrupted: payload errors" "$(field "$out" 'payload errors')" 2
expect_eq "relay, corrupted: buffers not returned" "$(field "$out" 'buffers not returned')" 0
expect_grep "$out" "^result: FAIL$"

# Seed 002's QP sharing, the other three corners of conf/qp-share.conf (which ran above:
# shared QPs, every WR signalled): every read result is checked by the lane that posted
# it, whichever lane polled its completion; only shared QPs hand completions over.
for variant in "true 8" "false 1" "false 8"; do
	set -- $variant
	c=$(mktemp --suffix=.conf)
	sed -e "s/share_qps = true/share_qps = $1/" -e "s/signal_every = 1;/signal_every = $2;/" -e "s/\"rxe0\"/\"$DEV\"/g" \
		"$conf_dir/qp-share.conf" >"$c"
	run_rdmapipe "$out" -f "$c"
	expect_eq "qp-share shared=$1 signal_every=$2: exit status" "$rc" 0
	expect_eq "qp-share shared=$1 signal_every=$2: verified" "$(field "$out" 'messages verified')" "40000 (read results)"
	handed=$(field "$out" 'completions handed between lanes')
	if [ "$1" = true ]; then
		[ "${handed:-0}" -gt 0 ] && ok=yes || ok="no ($handed)"
		expect_eq "qp-share shared: completions handed between lanes" "$ok" yes
	else
		expect_eq "qp-share split: completions handed between lanes" "$handed" 0
	fi
	rm -f "$c"
done

# transport = "uc" in a pipeline file: the default example over UC QPs, and a
# message count the default file lowers for a quicker run.
c=$(mktemp --suffix=.conf)
sed -e 's/transport = "rc";/transport = "uc";/' -e 's/messages = 200000;/messages = 40000;/' -e "s/\"rxe0\"/\"$DEV\"/g" \
	"$conf_dir/default.conf" >"$c"
run_rdmapipe "$out" -f "$c"
expect_eq "default.conf over UC: exit status" "$rc" 0
expect_eq "default.conf over UC: verified" "$(field "$out" 'messages verified')" 40000
expect_grep "$out" "^  connected: +UC, directly"
rm -f "$c"

# A gen stage that feeds a sink rather than rdma_tx runs beside the flow's own
# requester: the gen makes the flow's count into the sink, the requester its own.
g=$(mktemp --suffix=.conf)
sed -e 's/rings = ( );/rings = ( { name = "r"; size = 64; } );/' -e 's/messages = 200000;/messages = 20000;/' -e "s/\"rxe0\"/\"$DEV\"/g" \
	-e 's/{ name = "rx"; kind = "rdma_rx"; lcore = 0; flow = "bw"; }/{ name = "rx"; kind = "rdma_rx"; lcore = 0; flow = "bw"; },\n  { name = "g"; kind = "gen"; lcore = 1; flow = "bw"; output = "r"; },\n  { name = "k"; kind = "sink"; lcore = 0; input = "r"; }/' \
	"$conf_dir/default.conf" >"$g"
run_rdmapipe "$out" -f "$g"
expect_eq "gen -> sink: exit status" "$rc" 0
expect_grep "$out" "^  stage g: +gen on lcore 1: 20000 messages in [0-9]+ bursts, made 20000 of 20000"
expect_grep "$out" "^  stage k: +sink on lcore 0: 20000 messages"
expect_eq "gen -> sink: verified" "$(field "$out" 'messages verified')" 20000
rm -f "$g" "$out"
finish
