#!/usr/bin/env bash
# UC between two rdmapipe processes: rdma_cm connects an RC service connection per QP
# and the ends name, in its handshake, the UC QP beside it that carries the data (and,
# with software reliability, the control QP the ACKs go to). Plain UC passes without
# loss; UC made reliable in software passes under netem loss on the wire both ways
# (data and ACKs), every message verified, nothing lost, counted or for a duration;
# ends that disagree on the transport or the reliability are refused, both saying why.
. "$(dirname "$0")/lib.sh"
port=18900
. "$(dirname "$0")/remote_lib.sh"

# lossy_pair LOSS WHAT ARGS...: as pair, with netem dropping LOSS of the packets each
# way from the moment the client runs until it has ended. Connected first, and the wire
# healed once the client is done (all it sent acknowledged, or its pings echoed): rdma_cm
# resends a lost REQ, REP, RTU or DREQ only after ~4 s, then longer, and connecting and
# disconnecting are not what these cases test. A server whose client's DREQ was lost
# waited out its stall timeout (10 s) for it, its messages all in: remote_uc took 43 s
# in one run and 72 s in the next (issue 44).
lossy_pair() {
	local loss=$1 what=$2
	shift 2
	heal=1 pair_bg until_running "$loss" "$@"
	both_pass "$what"
}

# reliable_pair WHAT N ARGS...: a reliable UC pair of N messages (0: a duration), both
# passed, the server verified all the client sent, nothing lost, and (under loss) the
# client had to retransmit. With $loss set, the pair runs under that loss (lossy_pair).
loss=
reliable_pair() {
	local what=$1 n=$2 retx
	shift 2
	if [ -n "$loss" ]; then lossy_pair "$loss" "$what" --transport uc "$@"; else pair "$what" --transport uc "$@"; fi
	if [ "$n" = 0 ]; then   # a duration: what the client sent, which must be something
		n=$(field "$cout" 'messages sent')
		[ -n "$n" ] && [ "$n" -gt 0 ] || n="(none)"
	fi
	expect_eq "$what: server verified" "$(field "$sout" 'messages verified')" "$n"
	expect_eq "$what: server lost" "$(field "$sout" 'lost messages')" 0
	expect_eq "$what: client completed" "$(field "$cout" 'messages completed')" "$n"
	expect_grep "$sout" "^  reliability: +software over UC, an ACK every 16 messages or 100 us$"
	retx=$(field "$cout" retransmissions | sed 's/ .*//')
	echo "info: $what: ${retx:-no} retransmissions"
}

# Without loss: plain UC (sends, with credit writes back over UC), reliable UC.
pair "plain UC send" --transport uc --reliability none -v send -Q 2 -n 20000
expect_grep "$cout" "^  connected: +UC beside RC service connections, rdma_cm from $A to $B_ADDR:$port, 2 connections$"
expect_grep "$sout" "^  connected: +UC beside RC service connections, rdma_cm on $B_ADDR:$port \($B\), 2 connections$"
expect_eq "plain UC send: server verified" "$(field "$sout" 'messages verified')" 20000
reliable_pair "reliable UC write_imm" 20000 -v write_imm -Q 4 -n 20000

# Real loss on the wire, both ways: 30000 messages each (hundreds of losses at 1%),
# every one verified.
if wire_ready; then
	for loss in 1% 10%; do
		for v in write_imm send_imm; do
			t0=$SECONDS
			reliable_pair "$v at $loss each way" 30000 -v $v -Q 4 -s 512 -n 30000 --stats-period 1 --stall-timeout 10
			retx=$(field "$cout" retransmissions | sed 's/ .*//')
			[ "${retx:-0}" -gt 0 ] && echo "ok: $v at $loss: retransmitted" || { echo "FAIL: $v at $loss: no retransmission"; fails=$((fails + 1)); }
			expect_grep "$cout" "^  retransmissions: +[1-9][0-9]* \(fast [0-9]+, timeout [0-9]+\)(, [0-9]+ put off by a full send queue)?$"
			echo "info: $v at $loss each way took $((SECONDS - t0)) s"
		done
	done
	# A duration run under loss: the client's final counts come over the RC service
	# connection; the server ends once everything up to them is in and the client is gone.
	loss=1%
	reliable_pair "send_imm for 3 s at 1%" 0 -v send_imm -Q 2 -t 3 --stall-timeout 10
	expect_grep "$sout" "^  final counts: +2 of 2 told by the client$"
	# Writes of 8 packets go as chunks of one packet each (the path MTU less the
	# retransmission header): a loss costs one chunk, no QP breaks, none is restarted.
	reliable_pair "8 KiB write_imm in chunks at 1%" 4000 -v write_imm -Q 4 -s 8192 -n 4000 --stall-timeout 10
	loss=
	expect_grep "$cout" "^flow 'flow0': each 8192 B message goes as 9 chunks of 1012 B \(path MTU 1024 B\), window [0-9]+ messages per QP$"
	expect_no_grep "$sout" "^  qp restarts:"
	# A ping-pong between the two: the server echoes repeated pings again and stays until
	# none has come for twice the largest timeout (it cannot see the client end).
	lossy_pair 10% "ping-pong at 10%" --transport uc --pingpong -n 2000 -s 64 --stall-timeout 10
	expect_grep "$cout" "^  retransmissions: +[1-9][0-9]* \(fast 0, timeout [1-9][0-9]*\)$"
	expect_grep "$sout" "^  repeated pings: +[1-9][0-9]* \(echoed again\)$"
fi

# Ends that disagree: refused by the server, the reason on both sides.
server --transport uc -v write_imm -n 1000 --connect-timeout 4
client -v write_imm -n 1000
server_wait
expect_eq "RC client, UC server: client exit" "$rc" 3
expect_grep "$cout" "rejected by the peer: the client runs RC, this server UC \(give both the same transport\)"
server --transport uc -v send_imm -n 1000 --connect-timeout 4
client --transport uc --reliability none -v send_imm -n 1000
server_wait
expect_eq "reliability mismatch: client exit" "$rc" 3
expect_grep "$cout" "rejected by the peer: the client runs UC without software reliability, this server with \(give both the same reliability\)"
server --transport uc -v write_imm -s 8192 -n 100 --connect-timeout 4
client --transport uc -v write_imm -s 8192 -n 100 --chunk 500
server_wait
expect_eq "chunk mismatch: client exit" "$rc" 3
expect_grep "$cout" "rejected by the peer: the client cuts messages into chunks of 500 B, this server expects 1012 B"
finish
