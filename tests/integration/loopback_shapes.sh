#!/usr/bin/env bash
# Message sizes, chain lengths and signalling ratios other than the defaults, on rxe:
# 1-byte and multi-MTU messages, unchained posts, signalling more rarely than per
# chain, a window that wraps many times, SRQ refills at odd thresholds; QP pairs
# connected through rdma_cm on the device's own address (the default) and directly.
. "$(dirname "$0")/lib.sh"
need_device
out=$(mktemp)

check_pass() {   # messages, then app args
	local n=$1
	shift
	run_rdmapipe "$out" -d "$DEV" -n "$n" "$@"
	expect_eq "exit status ($*)" "$rc" 0
	expect_eq "verified ($*)" "$(field "$out" 'messages verified' | cut -d' ' -f1)" "$n"
	expect_eq "lost ($*)" "$(field "$out" 'lost messages')" 0
	expect_grep "$out" "^result: PASS$"
}

check_pass 3000 -s 1
check_pass 2000 -s 4097 -b 8                        # 5 MTU-sized packets per message
check_pass 400 -s 64K -b 4 --slots 16              # 64 KiB, window of 16 slots
check_pass 2000 -b 1 -S 1                          # one WR per post, all signalled
expect_eq "send posts, unchained" "$(field "$out" 'send posts')" "2000 (1.0 WRs per ibv_post_send)"
check_pass 5000 -b 7 -S 50 --slots 40 --srq-refill 9   # signalled every 50 WRs across chains of 7
check_pass 3000 --no-verify
expect_grep "$out" "messages verified: +3000 \(sequence only: --no-verify\)"
# A pace of 20000 msg/s: 40000 messages cannot take less than (40000 - 32) / 20000 s.
check_pass 40000 --rate 20000
expect_grep "$out" "^  rate limit: +20000 msg/s per flow \(paced by the requester\)$"
secs=$(field "$out" elapsed | sed 's/ s$//')
awk -v s="$secs" 'BEGIN { exit !(s >= 1.99) }' && echo "ok: paced run took $secs s" || { echo "FAIL: paced run took $secs s (< 1.99)"; fails=$((fails + 1)); }
# Unreliable connected QPs: sends and writes, the credit window keeping a receive
# posted for every message (UC has no RNR: a SEND with none would be dropped).
for v in send_imm write_imm write; do
	check_pass 4000 -Q 2 -v $v --transport uc $([ $v = write ] && echo --reliability none)
	expect_grep "$out" "^  connected: +UC, directly \(rdma_cm connects RC QPs only\)$"
done
check_pass 4000 -Q 4 -v send
expect_grep "$out" "^  connected: +RC, rdma_cm to [0-9.]+:[0-9]+, 4 connections$"
check_pass 4000 -Q 4 -v send --connect direct
expect_grep "$out" "^  connected: +directly \(each QP given the other's number and GID\)$"
rm -f "$out"
finish
