#!/usr/bin/env bash
# Ping-pong latency on rxe, a pipeline of an rdma_tx and an echo stage: every echo
# comes back and checks out, the latency percentiles are there and ordered, the three
# verbs (sends, and writes each end polls in memory, as ib_write_lat) and both
# completion APIs work, N QPs run N ping-pongs side by side, and a corrupted ping is
# caught on both sides of the round trip.
. "$(dirname "$0")/lib.sh"
need_device
out=$(mktemp)

us() { field "$out" "latency $1" | sed 's/ us$//'; }

for case in "write" "write -s 4K -Q 2" "send" "send_imm --cq-api ex" "send -s 4K --poll adaptive"; do
	# shellcheck disable=SC2086
	run_rdmapipe "$out" -d "$DEV" --pingpong -n 3000 -v $case
	expect_eq "$case: exit status" "$rc" 0
	expect_eq "$case: echoes verified" "$(field "$out" 'echoes verified')" 3000
	expect_eq "$case: samples" "$(field "$out" 'latency samples' | cut -d' ' -f1)" 3000
	expect_grep "$out" "^result: PASS$"
	# min <= median <= p90 <= p99 <= p99.9 <= max, all positive.
	if awk -v a="$(us min)" -v b="$(us median)" -v c="$(us p90)" -v d="$(us p99)" -v e="$(us p99.9)" \
		-v f="$(us max)" 'BEGIN { exit !(a > 0 && a <= b && b <= c && c <= d && d <= e && e <= f) }'; then
		echo "ok: $case: percentiles ordered"
	else
		echo "FAIL: $case: percentiles out of order or missing"
		fails=$((fails + 1))
	fi
done
expect_grep "$out" "^  polling: +adaptive"
expect_grep "$out" "^  connected: +RC, rdma_cm to [0-9.]+:[0-9]+, 1 connection$"
run_rdmapipe "$out" -d "$DEV" --pingpong -n 500 --connect direct
expect_eq "--connect direct: exit status" "$rc" 0
expect_grep "$out" "^  connected: +directly"
# 2 B fits inline on rxe: latency runs use it without being asked.
run_rdmapipe "$out" -d "$DEV" --pingpong -n 500
expect_grep "$out" "^  posting: +one ibv_post_send per message, inline$"
expect_grep "$out" "^  mode: +ping-pong, SEND, 2 B,"

# Until stopped (-t 0; send_imm: the echoing side sees each QP's last ping flagged, as
# a two-host send one learns it from its client going: remote.sh; write: the echoing
# side ends with what came once the pinging side has ended): SIGTERM, once the live
# stats show round trips, ends it with each QP's last echo back and timed; every round
# trip checked, exit 0.
for verb in send_imm write; do
	# shellcheck disable=SC2046
	run_bg "$out" timeout -k 5 120 "$RDMAPIPE" $(eal_args) -- -d "$DEV" --pingpong -Q 2 -v $verb -t 0 --stats-period 0.2
	pid=$bg_pid
	await_line "$out" "^  flow0 .* [1-9][0-9]* done$" $pid 60
	kill -TERM $pid
	wait $pid
	expect_eq "$verb until stopped: exit status" "$?" 0
	n=$(field "$out" 'echoes verified')
	expect_grep "$out" "^  iterations: +$n \(round trips over 2 QPs, until stopped\)$"
	expect_eq "$verb until stopped: samples" "$(field "$out" 'latency samples' | cut -d' ' -f1)" "$n"
	expect_eq "$verb until stopped: pings received" "$(field "$out" 'pings received')" "$n (verified $n)"
	expect_grep "$out" "^result: PASS$"
done

# A flipped byte in ping 100: the echoing side sees it, and so does the pinging side
# when the same bytes come back.
run_rdmapipe "$out" -d "$DEV" --pingpong -n 1000 -s 64 --inject-corruption 100
expect_eq "corrupted: exit status" "$rc" 1
expect_eq "corrupted: payload errors" "$(field "$out" 'payload errors')" 2
expect_grep "$out" "^  first bad message: +QP 0 seq 100 at the echoing side, byte 32 differs from the pattern$"
expect_grep "$out" "^result: FAIL$"
# The same in a ping-pong of writes: no receive completes, the slot's bytes are checked
# once its last byte (the mark) shows; nothing was posted to a receive queue.
run_rdmapipe "$out" -d "$DEV" --pingpong -v write -n 1000 -s 64 --inject-corruption 100
expect_eq "write, corrupted: exit status" "$rc" 1
expect_eq "write, corrupted: payload errors" "$(field "$out" 'payload errors')" 2
expect_grep "$out" "^  first bad message: +QP 0 seq 100 at the echoing side, byte 32 differs from the pattern$"
expect_grep "$out" "^  mode: +ping-pong, RDMA_WRITE, 64 B,"

# N QPs: N ping-pongs side by side, one message in flight on each, every echo checked;
# the live stats lines follow the pings as they go.
run_rdmapipe "$out" -d "$DEV" --pingpong -Q 4 -n 40002 -v send_imm -s 64 --stats-period 0.25
expect_eq "four QPs: exit status" "$rc" 0
expect_grep "$out" "^  mode: +ping-pong, SEND_WITH_IMM, 64 B, 4 QPs each way, one message in flight on each,"
expect_eq "four QPs: echoes verified" "$(field "$out" 'echoes verified')" 40002
expect_eq "four QPs: pings received" "$(field "$out" 'pings received')" "40002 (verified 40002)"
expect_eq "four QPs: samples" "$(field "$out" 'latency samples' | cut -d' ' -f1)" 40002
expect_eq "four QPs: buffers not returned" "$(field "$out" 'buffers not returned')" 0
expect_grep "$out" "^  flow0 +[0-9.]+ Mmsg/s +[0-9.]+ Gbit/s  outstanding [0-9]+  errors 0  [0-9]+ of 40002 \\([0-9.]+%\\)$"
expect_grep "$out" "^result: PASS$"
# A size sweep of ping-pongs (-s 2,1K,8K): latency against size, a line per size.
run_rdmapipe "$out" -d "$DEV" --pingpong -s 2,1K,8K -n 2000
expect_eq "sweep: exit status" "$rc" 0
for size in 2B 1024B 8192B; do
	expect_grep "$out" "^  $size: +[0-9.]+ Mmsg/s, [0-9.]+ Gbit/s, latency median [0-9.]+ us, PASS$"
done
expect_eq "sweep: echoes verified in each step" "$(grep -c "^  echoes verified: *2000$" "$out")" 3
rm -f "$out"
finish
