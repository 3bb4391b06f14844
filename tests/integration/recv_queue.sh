#!/usr/bin/env bash
# recv_queue = "qp" (--recv-queue qp): each receiving QP gets a receive queue of its
# own instead of the lcore's SRQ, on rxe. Every verb that consumes receives, ping-pongs,
# 1024 QPs with the defaults (fitted to the receive CQ), a file mixing flows, software
# reliability under loss, RNR on a starved lcore and two processes over rdma_cm: every
# message verified, the receives posted to the QPs (not to an SRQ), no SRQ made.
. "$(dirname "$0")/lib.sh"
need_device
scratch_files
max_cqe=$(dev_attr max_cqe)

# per_qp_posts WHAT: the run posted its receives to the QPs' own queues, none to an SRQ.
per_qp_posts() {
	expect_grep "$out" "^  receive posts: +[1-9][0-9]* to QPs' own receive queues \(0 cut short by an empty receive pool\)$"
	expect_no_grep "$out" "^  srq posts:"
}

for v in send send_imm write_imm; do
	EAL_LCORES="-l 0-1 --log-level=rdmapipe.verbs:debug" run_rdmapipe "$out" -d "$DEV" -v $v -Q 4 -n 20000 --recv-queue qp
	expect_eq "$v, per-QP receive queues: exit status" "$rc" 0
	expect_eq "$v: verified" "$(field "$out" 'messages verified' | cut -d' ' -f1)" 20000
	per_qp_posts
	# The receiving lcore's io context has no SRQ; its QPs each a queue of their own.
	expect_grep "$out" "io context: send CQ [0-9]+, receive CQ [0-9]+, SRQ 0 entries"
	expect_no_grep "$out" "io context: send CQ [0-9]+, receive CQ [0-9]+, SRQ [1-9]"
done
# Larger sends: each receive carries a pool buffer; 8 KiB messages span packets.
run_rdmapipe "$out" -d "$DEV" -v send -s 8192 -Q 2 -n 4000 --recv-queue qp
expect_eq "8 KiB send: verified" "$(field "$out" 'messages verified' | cut -d' ' -f1)" 4000
per_qp_posts

# Ping-pong: both sides receive, each QP one message at a time.
run_rdmapipe "$out" -d "$DEV" -v send --pingpong -Q 2 -n 4000 --recv-queue qp
expect_eq "ping-pong: exit status" "$rc" 0
expect_grep "$out" "^result: PASS$"
per_qp_posts

# 1024 QPs with the defaults: the windows are fitted to the receive CQ that holds every
# QP's queue (there is no SRQ to fit), said in the lcore's line.
run_rdmapipe "$out" -d "$DEV" -v send -Q 1024 -n 20480 --recv-queue qp
expect_eq "send -Q 1024 per-QP: exit status" "$rc" 0
expect_grep "$out" "^rdmapipe: lcore [01] fitted to $DEV: flow 'flow0': window [0-9]+ messages per QP \(default 32\), batch [0-9]+ \(receive queues [0-9]+ receives, $DEV allows $max_cqe\)$"
expect_eq "send -Q 1024 per-QP: verified" "$(field "$out" 'messages verified' | cut -d' ' -f1)" 20480
per_qp_posts
# A window the user set that cannot fit: the error names the receive queues.
run_rdmapipe "$out" -d "$DEV" -v send -Q 1024 --slots 64 -n 1000 --recv-queue qp
expect_eq "--slots 64 x 1024 QPs per-QP: exit status" "$rc" 3
expect_grep "$out" "^rdmapipe: lcore 0's io context: its flows' receive windows need its QPs' receive queues of [0-9]+ receives and a receive CQ as large; $DEV allows $max_cqe"
# No SRQ, so no SRQ refill to set.
run_rdmapipe "$out" -d "$DEV" -v send --recv-queue qp --srq-refill 8 -n 1000
expect_eq "--srq-refill with --recv-queue qp: exit status" "$rc" 2
expect_grep "$out" "srq-refill: there is no SRQ with --recv-queue qp"

# A file: two flows and a ping-pong received on one lcore with per-QP queues, beside a
# flow received on the other lcore through its SRQ.
cat >"$conf" <<EOC
version = 1;
devices = ( { name = "$DEV"; } );
io_contexts = ( { lcore = 0; device = "$DEV"; recv_queue = "qp"; }, { lcore = 1; device = "$DEV"; } );
flows = ( { name = "a"; verb = "send"; size = 256; qps = 8; messages = 20000; },
          { name = "b"; verb = "write_imm"; qps = 8; messages = 20000; },
          { name = "p"; verb = "send_imm"; qps = 2; messages = 2000; },
          { name = "c"; verb = "send"; qps = 2; messages = 20000; } );
stages = ( { name = "atx"; kind = "rdma_tx"; flow = "a"; lcore = 1; }, { name = "arx"; kind = "rdma_rx"; flow = "a"; lcore = 0; },
           { name = "btx"; kind = "rdma_tx"; flow = "b"; lcore = 1; }, { name = "brx"; kind = "rdma_rx"; flow = "b"; lcore = 0; },
           { name = "ptx"; kind = "rdma_tx"; flow = "p"; lcore = 1; }, { name = "pe"; kind = "echo"; flow = "p"; lcore = 0; },
           { name = "ctx"; kind = "rdma_tx"; flow = "c"; lcore = 0; }, { name = "crx"; kind = "rdma_rx"; flow = "c"; lcore = 1; } );
EOC
run_rdmapipe "$out" -f "$conf"
expect_eq "a file mixing per-QP queues and an SRQ: exit status" "$rc" 0
expect_grep "$out" "^result: PASS$"
expect_eq "a file mixing per-QP queues and an SRQ: flows verified" "$(grep -cE "^  flow [abc]: .* verified 20000$" "$out")" 3
expect_grep "$out" "^  receive posts: +[1-9]"
expect_grep "$out" "^  srq posts: +[1-9]"

# Software reliability over UC: losses injected at the sender, retransmitted SENDs and
# writes land in the QPs' own queues.
for v in send_imm write_imm; do
	run_rdmapipe "$out" -d "$DEV" --transport uc -v $v -Q 2 -n 20000 --inject-loss 0.05 --recv-queue qp
	pass_with_losses "UC $v per-QP, 5% injected" 20000
done

# RNR: the starved lcore's QPs never get a receive; their flow fails on RNR, the other
# flow (received through the other lcore's queues) delivers everything.
sed "s/\"rxe0\"/\"$DEV\"/g; s/device = \"$DEV\"; }/device = \"$DEV\"; recv_queue = \"qp\"; }/g" \
	"$(dirname "$0")/graphs/rnr-beside-flow.conf" >"$conf"
grep -q 'recv_queue = "qp"' "$conf" || { echo "FAIL: rnr-beside-flow.conf not rewritten"; fails=$((fails + 1)); }
run_rdmapipe "$out" -f "$conf" --inject-rnr 1
expect_eq "RNR per-QP: exit status" "$rc" 1
expect_grep "$out" "^  flow starved requester completion errors: [0-9]+ x RNR retry counter exceeded"
expect_grep "$out" "^  flow fed: .*: sent 20000, completed 20000, received 20000, verified 20000$"

# Two processes over rdma_cm: the server receives in per-QP queues.
if [ -n "${RXE_A_DEV:-}" ]; then
	port=18760
	. "$(dirname "$0")/remote_lib.sh"
	for v in send write_imm; do
		server -v $v -Q 4 -n 20000 --recv-queue qp
		client -v $v -Q 4 -n 20000
		server_wait
		both_pass "two processes, $v, server per-QP"
		expect_eq "two processes, $v: server verified" "$(field "$sout" 'messages verified')" 20000
		expect_grep "$sout" "^  receive posts: +[1-9]"
	done
else
	part_skipped "two processes: no rxeA/rxeB pair (run under tools/softroce)"
fi
finish
