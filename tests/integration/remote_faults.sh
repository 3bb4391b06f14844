#!/usr/bin/env bash
# Faults between two rdmapipe processes (rxeA and rxeB over the veth wire; the list is
# docs/reliability.md's): the peer process killed mid-run, in each role, for every
# verb (write, write_imm, read, send, send_imm, fetch_add, cmp_swap: a flow of each in
# one pair of processes); the wire cut (netem
# drops every packet) under RC, where the transport's retries run out and are named,
# and under UC made reliable in software, where the flow gives up at its stall timeout
# and says so. Every case: the exit status, the reason, and a bounded time.
. "$(dirname "$0")/lib.sh"
port=18700
. "$(dirname "$0")/remote_lib.sh"

# cut_wire ARGS...: a server and a client with ARGS; once the client's data moves, netem
# drops every packet both ways until both have ended. Sets $rc, $src and $t0 (the cut).
# (A fixed 4 s from the client's start cut the wire before a loaded guest under the
# sanitizers had connected: both ends then timed out in rdma_cm instead.)
cut_wire() { pair_bg flowing 100% "$@" --stats-period 0.2; }

# The peer process dies (SIGKILL, as a crash would) once the client's data moves: a
# flow of every verb in one pair of processes, each flow its own connection and port,
# so that one kill tests every verb (and a verb that does not notice stands out by name).
verbs=(write write_imm read send send_imm fetch_add cmp_swap)
sconf=$(mktemp --suffix=.conf) cconf=$(mktemp --suffix=.conf)
on_exit 'rm -f "$sconf" "$cconf"'
# every_verb PORT: $sconf (the server: each verb's flow listening on PORT + its index,
# received on lcore 1) and $cconf (the client of each, posted from lcore 0).
every_verb() {
	local i v s_flows=() c_flows=() s_stages=() c_stages=()
	for i in "${!verbs[@]}"; do
		v=${verbs[$i]}
		s_flows+=("{ name = \"$v\"; listen = \"$B_ADDR:$(($1 + i))\"; verb = \"$v\"; messages = 100000000; }")
		c_flows+=("{ name = \"$v\"; peer = \"$B_ADDR:$(($1 + i))\"; local = \"$A_ADDR\"; verb = \"$v\"; messages = 100000000; }")
		s_stages+=("{ name = \"rx_$v\"; kind = \"rdma_rx\"; lcore = 1; flow = \"$v\"; }")
		c_stages+=("{ name = \"tx_$v\"; kind = \"rdma_tx\"; lcore = 0; flow = \"$v\"; }")
	done
	local IFS=,
	printf 'version = 1;\ndevices = ( { name = "%s"; } );\nflows = ( %s );\nstages = ( %s );\n' \
		"$B" "${s_flows[*]}" "${s_stages[*]}" >"$sconf"
	printf 'version = 1;\ndevices = ( { name = "%s"; } );\nflows = ( %s );\nstages = ( %s );\n' \
		"$A" "${c_flows[*]}" "${c_stages[*]}" >"$cconf"
}
# killed_pair PORT CLIENT_ARGS...: the server of every verb (stall timeout 5 s), its
# client in the background, until every flow's data moves.
killed_pair() {
	every_verb "$1"
	shift
	start_server 1 -f "$sconf" --stall-timeout 5
	listening
	# shellcheck disable=SC2086
	run_bg "$cout" timeout -k 5 120 "$RDMAPIPE" -l 0 $base -- -f "$cconf" --stats-period 0.2 "$@"
	cpid=$bg_pid
	for v in "${verbs[@]}"; do flowing "$cout" "$v" || break; done
}

# The server dies: the client hears the disconnect (or its QPs fail) on every flow, and ends.
killed_pair 18720 --stall-timeout 5
pkill -9 -P "$spid"
t0=$SECONDS
wait "$cpid"
rc=$?
wait "$spid" 2>/dev/null
echo "--- server killed: client (exit $rc)"; cat "$cout"
expect_eq "server killed: client exit" "$rc" 1
for v in "${verbs[@]}"; do
	expect_grep "$cout" "^  (connection lost: +flow $v: |flow $v requester failed: )"
done
expect_grep "$cout" "^result: FAIL$"
within "server killed" $((SECONDS - t0)) 40

# The client dies: the server sees it go on every flow and ends, counting what came.
killed_pair 18730
pkill -9 -P "$cpid"
t0=$SECONDS
wait "$spid"
src=$?
wait "$cpid" 2>/dev/null
echo "--- client killed: server (exit $src)"; cat "$sout"
expect_eq "client killed: server exit" "$src" 1
for v in "${verbs[@]}"; do
	expect_grep "$sout" "^  disconnected: +flow $v: (1 of 1 connection|.*the client stopped answering)"
done
expect_grep "$sout" "^result: FAIL$"
within "client killed" $((SECONDS - t0)) 30

# From 6.12 on, rxe ends a QP when its own stack drops one of its packets (the wire
# cut: netem loss 100%): the WRs outstanding then complete as flushed at once, where
# 6.1 sends again (README, "On Debian's 6.1 or 6.12 kernel"). A QP with no packet in
# its stack at the cut retries as on 6.1; on 6.12 either end may name either outcome.
case $(uname -r) in
[1-5].* | 6.[0-9].* | 6.1[01].*) flushed= ;;
*) flushed="|requester completion errors: [0-9]+ x Work Request Flushed Error" ;;
esac

if wire_ready; then
	# RC, the wire cut: the transport retries (every 67 ms; 6 of them: rxe retries
	# forever at 7) run out on whatever each end has outstanding, and the completion
	# error is named, well inside the stall timeouts. Neither hangs.
	cut_wire -v write_imm -n 100000000 --stall-timeout 10 --retry-cnt 6
	expect_eq "RC, wire cut: client exit" "$rc" 1
	# The client has sends outstanding, or is waiting for credit while the server's
	# credit writes are: at least one end names the retries running out.
	if grep -Eq "completion errors: [0-9]+ x transport retry counter exceeded$flushed" "$cout" "$sout"; then
		echo "ok: RC, wire cut: transport retry counter exceeded${flushed:+ (or the flush)}, named"
	else
		echo "FAIL: RC, wire cut: neither end names the transport retries running out${flushed:+ (or the flush)}"
		fails=$((fails + 1))
	fi
	# An end with nothing outstanding at the cut (all its WRs answered) hears nothing
	# more and ends at its stall timeout instead, named as such.
	expect_grep "$cout" "transport retry counter exceeded|requester failed: +stalled: no credit or completion$flushed"
	expect_grep "$sout" "transport retry counter exceeded|responder failed: +stalled: no message from the requester"
	expect_grep "$cout" "^result: FAIL$"
	expect_eq "RC, wire cut: server exit" "$src" 1
	expect_grep "$sout" "^result: FAIL$"
	within "RC, wire cut" $((SECONDS - t0)) 45

	# UC made reliable, the wire cut: retransmissions go unanswered; the client's flow
	# gives up once nothing is acknowledged for its stall timeout, and says so.
	# (On 6.12 a QP flushed at the cut fails the flow at once, naming the flush.)
	cut_wire --transport uc -v write_imm -n 100000000 --stall-timeout 6
	expect_eq "reliable UC, wire cut: client exit" "$rc" 1
	if has_line "$cout" "gave up: nothing acknowledged within the stall timeout while retransmitting"; then
		echo "ok: reliable UC, wire cut: gave up, named"
		expect_grep "$cout" "^  retransmissions: +[1-9]"
	elif [ -n "$flushed" ] && has_line "$cout" "${flushed#|}"; then
		echo "ok: reliable UC, wire cut: the QP flushed at the cut (this kernel), named"
	else
		echo "FAIL: reliable UC, wire cut: the client neither gave up${flushed:+ nor named the flush}"; fails=$((fails + 1))
	fi
	expect_grep "$cout" "^result: FAIL$"
	expect_eq "reliable UC, wire cut: server exit" "$src" 1
	within "reliable UC, wire cut" $((SECONDS - t0)) 40
fi
finish
