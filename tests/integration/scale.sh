#!/usr/bin/env bash
# 1024 QPs on one lcore with the defaults: the builder fits the send CQ (a budget of
# outstanding WRs over the flow's QPs), the receive windows and the SRQ to the device's
# limits, says so in a line per lcore, and every message is verified. What the user set
# and cannot fit is an error naming the limit; a QP failing under the budget flushes
# into the shared CQ without overflowing it.
. "$(dirname "$0")/lib.sh"
need_device
scratch_files
max_cqe=$(dev_attr max_cqe)
echo "$DEV: max_cqe $max_cqe"

for verb in write_imm send write; do
	run_rdmapipe "$out" -d "$DEV" -v $verb -Q 1024 -n 102400
	expect_eq "$verb -Q 1024: exit status" "$rc" 0
	expect_grep "$out" "^rdmapipe: lcore [01] fitted to $DEV: flow 'flow0': at most [0-9]+ WRs outstanding over its 1024 QPs \(their send queues of 128 would need 131072 CQ entries\) \(send CQ [0-9]+ entries, $DEV allows $max_cqe\)$"
	expect_eq "$verb -Q 1024: verified" "$(field "$out" 'messages verified' | cut -d' ' -f1)" 102400
	expect_grep "$out" "^result: PASS$"
done
# Consuming verbs: the flow's 1024 QPs share its window of 1024 messages, so the SRQ
# and the receive pool are the same as for one QP, and credit comes back for the flow
# (one write per 256 messages), not per QP. Nothing on the receive side needs fitting.
for q in 1 1024; do
	EAL_LCORES="-l 0-1 --log-level=rdmapipe.pipeline:debug" run_rdmapipe "$out" -d "$DEV" -v send -Q $q -n 20480
	expect_eq "send -Q $q: exit status" "$rc" 0
	expect_eq "send -Q $q: verified" "$(field "$out" 'messages verified' | cut -d' ' -f1)" 20480
	expect_grep "$out" "^rdmapipe: lcore 0: SRQ of 1152 receives \(refilled 128 at a time\), receive pool 1217 buffers of 64 B$"
	expect_no_grep "$out" "fitted to $DEV: flow 'flow0': window"
done
expect_grep "$out" "^  verb: .*, window 1024 over the flow's QPs$"
writes=$(field "$out" 'credit writes')
[ -n "$writes" ] && [ "$writes" -le $((20480 / 200)) ] && echo "ok: $writes credit writes for 1024 QPs" ||
	{ echo "FAIL: '$writes' credit writes for 1024 QPs (want about 20480 / 256)"; fails=$((fails + 1)); }
# write_imm keeps its slots per QP (the writes land there) and their credit, under the flow's window.
EAL_LCORES="-l 0-1 --log-level=rdmapipe.pipeline:debug" run_rdmapipe "$out" -d "$DEV" -v write_imm -Q 1024 -n 20480
expect_eq "write_imm -Q 1024: verified" "$(field "$out" 'messages verified' | cut -d' ' -f1)" 20480
expect_grep "$out" "^rdmapipe: lcore 0: SRQ of 1152 receives"
expect_grep "$out" "^  verb: .*, window 1024 over the flow's QPs, 32 per QP$"
# Without the flow window (--flow-window 0) each QP keeps its own window: they shrink
# so that the SRQ and its CQ fit.
run_rdmapipe "$out" -d "$DEV" -v send -Q 1024 -n 20000 --flow-window 0
expect_grep "$out" "^rdmapipe: lcore [01] fitted to $DEV: flow 'flow0': window [0-9]+ messages per QP \(default 32\), batch [0-9]+ \(SRQ [0-9]+ receives, $DEV allows $max_cqe\)$"
srq=$(sed -nE "s/.*\(SRQ ([0-9]+) receives.*/\1/p" "$out")
if [ -n "$srq" ] && [ "$srq" -le "$max_cqe" ]; then echo "ok: SRQ $srq fits"; else echo "FAIL: SRQ '$srq'"; fails=$((fails + 1)); fi

# A file with 1024 QPs in two flows on the same two lcores, as written: defaults. The
# send CQ is fitted; the SRQ holds the two flows' windows (2 x 1024 and a refill).
cat >"$conf" <<EOC
version = 1;
devices = ( { name = "$DEV"; } );
io_contexts = ( { lcore = 0; device = "$DEV"; }, { lcore = 1; device = "$DEV"; } );
flows = ( { name = "a"; verb = "write_imm"; qps = 512; messages = 51200; },
          { name = "b"; verb = "send"; size = 256; qps = 512; messages = 51200; } );
stages = ( { name = "atx"; kind = "rdma_tx"; flow = "a"; lcore = 1; }, { name = "arx"; kind = "rdma_rx"; flow = "a"; lcore = 0; },
           { name = "btx"; kind = "rdma_tx"; flow = "b"; lcore = 1; }, { name = "brx"; kind = "rdma_rx"; flow = "b"; lcore = 0; } );
EOC
EAL_LCORES="-l 0-1 --log-level=rdmapipe.pipeline:debug" run_rdmapipe "$out" -f "$conf"
expect_eq "a file of 1024 QPs: exit status" "$rc" 0
expect_grep "$out" "^rdmapipe: lcore 1 fitted to $DEV: flow 'a': at most [0-9]+ WRs outstanding over its 512 QPs .*; flow 'b': at most [0-9]+ WRs outstanding over its 512 QPs"
expect_grep "$out" "^rdmapipe: lcore 0: SRQ of 2304 receives"
expect_eq "a file of 1024 QPs: flows verified" "$(grep -cE "^  flow [ab]: .* verified 51200$" "$out")" 2

# The command line's pipeline, written out, runs the same way (sizes left to the builder).
# shellcheck disable=SC2046
"$RDMAPIPE" $(eal_args) -- -d "$DEV" -v write_imm -Q 1024 -n 20480 --dump-conf >"$conf"
run_rdmapipe "$out" -f "$conf"
expect_eq "-Q 1024 --dump-conf, run: exit status" "$rc" 0
expect_eq "-Q 1024 --dump-conf, run: verified" "$(field "$out" 'messages verified' | cut -d' ' -f1)" 20480

# What the user set and the device cannot hold: refused before anything runs.
run_rdmapipe "$out" -d "$DEV" -v send -Q 1024 --slots 64 -n 1000
expect_eq "--slots 64 x 1024 QPs: exit status" "$rc" 3
expect_grep "$out" "^rdmapipe: lcore 0's io context: its flows' receive windows need an SRQ of [0-9]+ receives and a receive CQ as large; $DEV allows $max_cqe \(max_srq_wr [0-9]+, max_cqe $max_cqe\): smaller windows or fewer QPs on this lcore$"
run_rdmapipe "$out" -d "$DEV" -v send -Q 1024 -b 32 --flow-window 0 -n 1000
expect_eq "-b 32 x 1024 QPs: exit status" "$rc" 3
expect_grep "$out" "^rdmapipe: flow 'flow0': its window, fitted to $DEV's SRQ and CQ limit of $max_cqe receives, is [0-9]+ messages per QP, below its batch of 32 \(a smaller batch, or fewer QPs\)$"
cat >"$conf" <<EOC
version = 1;
devices = ( { name = "$DEV"; } );
io_contexts = ( { lcore = 0; device = "$DEV"; }, { lcore = 1; device = "$DEV"; send_cq = 1000000; } );
flows = ( { name = "a"; verb = "write"; qps = 4; messages = 1000; } );
stages = ( { name = "atx"; kind = "rdma_tx"; flow = "a"; lcore = 1; }, { name = "arx"; kind = "rdma_rx"; flow = "a"; lcore = 0; } );
EOC
run_rdmapipe "$out" -f "$conf"
expect_eq "send_cq 1000000: exit status" "$rc" 3
expect_grep "$out" "^rdmapipe: $conf:3: io_contexts: lcore 1's io context: send_cq 1000000 is above $DEV's max_cqe $max_cqe$"

# A QP that fails under the budget: every WR it held comes back flushed into the
# shared send CQ, which the budget keeps from overflowing; the other 1023 deliver.
# It is QP 0, which carries the flow window's credit: that moves to QP 1.
run_rdmapipe "$out" -d "$DEV" -v write_imm -Q 1024 -n 102400 --inject-bad-rkey 0
expect_eq "a bad rkey on QP 0 of 1024: exit status" "$rc" 1
expect_eq "a bad rkey on QP 0 of 1024: failed QPs" "$(field "$out" 'failed QPs')" 1
expect_eq "a bad rkey on QP 0 of 1024: verified" "$(field "$out" 'messages verified' | cut -d' ' -f1)" 102300
expect_no_grep "$out" "async event: .*CQ error"
finish
