#!/usr/bin/env bash
# The posting and polling variants chosen at setup, on rxe: ibv_qp_ex (ibv_wr_start ..
# ibv_wr_complete) for every verb, inline payloads through both APIs, fenced chains,
# RNR settings, extended-CQ polling, adaptive polling; and the capability probe's findings (rxe: no CQ moderation, no
# completion timestamps, both degraded with a note rather than failing).
. "$(dirname "$0")/lib.sh"
need_device
out=$(mktemp)

check() {   # label messages [args]
	local label=$1 n=$2
	shift 2
	run_rdmapipe "$out" -d "$DEV" -n "$n" "$@"
	expect_eq "$label: exit status" "$rc" 0
	expect_eq "$label: verified" "$(field "$out" 'messages verified' | cut -d' ' -f1)" "$n"
	expect_grep "$out" "^result: PASS$"
}

for v in send send_imm write write_imm read fetch_add cmp_swap; do
	check "wr $v" 3000 -v "$v" -Q 2 --post-api wr
	expect_grep "$out" "^  posting: +ibv_qp_ex \(ibv_wr_start .. ibv_wr_complete\)$"
done
check "inline send" 3000 -v send --inline
expect_grep "$out" "^  posting: +chained ibv_post_send, inline$"
check "inline write_imm, wr" 3000 -v write_imm --inline --post-api wr
check "fenced" 3000 -v write_imm --fence -b 8
expect_grep "$out" "^  posting: +chained ibv_post_send, fenced chains$"
check "rnr settings" 3000 -v send --rnr-retry 7 --min-rnr-timer 1

# Completions through the extended CQ API (ibv_start_poll / ibv_next_poll), for the
# receive side (write_imm, send) and the requester's result checks (read, atomics).
for v in send write_imm read cmp_swap; do
	check "cq ex $v" 5000 -v "$v" -Q 4 --cq-api ex
	expect_grep "$out" "^  completions: +extended CQs \(ibv_start_poll .. ibv_end_poll\)$"
done
check "cq ex, adaptive, wr" 5000 -v send_imm --cq-api ex --poll adaptive --post-api wr

# A passive responder (READ leaves it nothing to do per message) sleeps on the run's
# bell instead of polling, busy or adaptive, and wakes for the end: a few loop
# iterations for the whole run, data still verified.
for poll in adaptive busy; do
	check "$poll read" 10000 -v read --poll $poll
	expect_grep "$out" "^  polling: +$poll"
	line=$(grep -E "^  lcore [0-9]+ +flow0_rx; " "$out")
	rsp_sleeps=$(sed -n 's/.*passive: slept \([0-9]*\) times.*/\1/p' <<<"$line")
	rsp_iters=$(sed -n 's/.*; [0-9]* of \([0-9]*\) iterations busy.*/\1/p' <<<"$line")
	if [ "${rsp_sleeps:-0}" -gt 0 ] && [ "${rsp_iters:-999999}" -lt 100 ]; then
		echo "ok: $poll read: responder slept $rsp_sleeps times in $rsp_iters loop iterations"
	else
		echo "FAIL: $poll read: the responder polled: '$line'"; fails=$((fails + 1))
	fi
done
check "adaptive write_imm" 10000 -v write_imm --poll adaptive -Q 4
check "adaptive send, wr" 10000 -v send --poll adaptive --post-api wr

# What the probe found, and the notes for what rxe lacks.
expect_grep "$out" "^rdmapipe: $DEV capabilities: cq_ex yes, timestamps no, cq moderation no, qp_ex yes, uc yes, max inline [0-9]+,"
expect_grep "$out" "^rdmapipe: $DEV: no CQ moderation \(ibv_modify_cq: Operation not supported\)"
expect_grep "$out" "^rdmapipe: $DEV: no completion timestamps"

# Inline above the device's maximum is refused before anything starts.
run_rdmapipe "$out" -d "$DEV" -n 10 -s 64K --inline
expect_eq "inline too big: exit status" "$rc" 2
expect_grep "$out" "^rdmapipe: --inline with 65536 B messages: $DEV inlines at most [0-9]+ B$"
rm -f "$out"
finish
