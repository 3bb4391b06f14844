#!/usr/bin/env bash
# Two flows sharing one context per lcore: a 1-QP flow and a 64-QP flow on the same
# send CQ, receive CQ and SRQ, every verb kind; then a wrong rkey on the 1-QP flow:
# that flow fails with its errors counted under it, the 64-QP flow delivers and
# verifies everything, and the exit status says the run failed.
. "$(dirname "$0")/lib.sh"
need_device
out=$(mktemp)

flow() {   # N: what flow N's line says it did ("sent ..., verified ...[, failed QPs N]")
	sed -n "s/^  flow flow$1: .* lcore [0-9]* -> lcore [0-9]*: //p" "$out" | head -n 1
}

for v in write_imm send read fetch_add write; do
	run_rdmapipe "$out" -d "$DEV" -v "$v" -Q 1,64 -n 6400
	expect_eq "$v: exit status" "$rc" 0
	expect_grep "$out" "^  verb: +[A-Z_]+, [0-9]+ B, 65 QPs in 2 flows,"
	expect_grep "$out" "^  flow flow0: +[A-Z_]+, [0-9]+ B, 1 QP, lcore"
	expect_grep "$out" "^  flow flow1: +[A-Z_]+, [0-9]+ B, 64 QPs, lcore"
	expect_eq "$v: flow 0" "$(flow 0)" "sent 6400, completed 6400, received 6400, verified 6400"
	expect_eq "$v: flow 1" "$(flow 1)" "sent 6400, completed 6400, received 6400, verified 6400"
	expect_eq "$v: completion errors" "$(field "$out" 'completion errors')" 0
	expect_eq "$v: verified" "$(field "$out" 'messages verified' | cut -d' ' -f1)" 12800
	expect_grep "$out" "^result: PASS$"
done

# --bidirectional (perftest's -b): each flow also the other way at once, its lcores
# swapped; every lcore both sends and receives.
run_rdmapipe "$out" -d "$DEV" -v write_imm -Q 1,4 -n 6400 --bidirectional
expect_eq "bidirectional: exit status" "$rc" 0
expect_grep "$out" "^  flow flow1_back: +RDMA_WRITE_WITH_IMM, 64 B, 4 QPs, lcore 0 -> lcore 1: sent 6400, completed 6400, received 6400, verified 6400$"
expect_grep "$out" "^  flow flow1: +RDMA_WRITE_WITH_IMM, 64 B, 4 QPs, lcore 1 -> lcore 0: sent 6400, completed 6400, received 6400, verified 6400$"
expect_eq "bidirectional: verified" "$(field "$out" 'messages verified' | cut -d' ' -f1)" 25600

for v in write_imm read; do
	run_rdmapipe "$out" -d "$DEV" -v "$v" -Q 1,64 -n 6400 --inject-bad-rkey 0
	expect_eq "$v, bad rkey: exit status" "$rc" 1
	expect_grep "$out" "^  flow flow0: +[A-Z_]+, [0-9]+ B, 1 QP, lcore [0-9]+ -> lcore [0-9]+: sent [0-9]+, completed 0, received 0, verified 0, failed QPs 1$"
	expect_grep "$out" "^  flow flow0 requester completion errors: 1 x remote access error$"
	expect_eq "$v, bad rkey: flow 1" "$(flow 1)" "sent 6400, completed 6400, received 6400, verified 6400"
	if grep -qE "^  flow flow1 (requester|responder) completion errors" "$out"; then
		echo "FAIL: $v: flow 1 has completion errors"
		fails=$((fails + 1))
	else
		echo "ok: $v: flow 1 has no completion errors"
	fi
	expect_grep "$out" "^result: FAIL$"
done
rm -f "$out"
finish
