#!/usr/bin/env bash
# Every verb on rxe with its data verified end to end: SEND and SEND_WITH_IMM into SRQ
# buffers, RDMA_WRITE by the window's final state, WRITE_WITH_IMM at each immediate,
# RDMA_READ against the responder's pattern, atomics by their return values and final
# words. One QP and sixty-four QPs sharing one context per lcore.
. "$(dirname "$0")/lib.sh"
need_device
out=$(mktemp)

check_verb() {   # verb messages qps [more args]
	local verb=$1 n=$2 qps=$3
	shift 3
	run_rdmapipe "$out" -d "$DEV" -v "$verb" -n "$n" -Q "$qps" "$@"
	expect_eq "$verb x$qps: exit status" "$rc" 0
	expect_eq "$verb x$qps: sent" "$(field "$out" 'messages sent')" "$n"
	expect_eq "$verb x$qps: completed" "$(field "$out" 'messages completed')" "$n"
	expect_eq "$verb x$qps: verified" "$(field "$out" 'messages verified' | cut -d' ' -f1)" "$n"
	expect_eq "$verb x$qps: payload errors" "$(field "$out" 'payload errors')" 0
	expect_eq "$verb x$qps: completion errors" "$(field "$out" 'completion errors')" 0
	expect_grep "$out" "^result: PASS$"
}

check_verb send 5000 1
expect_grep "$out" "^  verb: +SEND, 64 B, 1 QP,"
expect_eq "send: received" "$(field "$out" 'messages received')" 5000
check_verb send_imm 5000 1 -s 1000
check_verb write 5000 1
expect_eq "write: window slots checked" "$(field "$out" 'window slots checked')" 1024
check_verb write_imm 5000 1
check_verb read 5000 1 -s 256
expect_grep "$out" "messages verified: +5000 \(read results\)"
check_verb fetch_add 3000 1
expect_eq "fetch_add: final words" "$(field "$out" 'final words checked')" 1
check_verb cmp_swap 3000 1

# Sixty-four QPs share one send CQ on the requester, one receive CQ and one SRQ on
# the responder; completions are told apart by qp_num.
check_verb write_imm 20000 64
expect_grep "$out" "^  verb: +RDMA_WRITE_WITH_IMM, 64 B, 64 QPs,"
check_verb send 20000 64
check_verb read 6400 64
check_verb fetch_add 6400 64
expect_eq "fetch_add x64: final words" "$(field "$out" 'final words checked')" 64
rm -f "$out"
finish
