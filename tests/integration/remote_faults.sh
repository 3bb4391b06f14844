#!/usr/bin/env bash
# Faults between two rdmapipe processes (rxeA and rxeB over the veth wire; the list is
# docs/reliability.md's): the peer process killed mid-run, in each role, for every
# verb (write, write_imm, read, send, send_imm, fetch_add, cmp_swap); the wire cut (netem
# drops every packet) under RC, where the transport's retries run out and are named,
# and under UC made reliable in software, where the flow gives up at its stall timeout
# and says so. Every case: the exit status, the reason, and a bounded time.
. "$(dirname "$0")/lib.sh"
port=18700
. "$(dirname "$0")/remote_lib.sh"

# cut_wire WHAT ARGS...: a server and a client with ARGS; once the client's data moves,
# netem drops every packet both ways until both have ended. Sets $rc, $src and $t0 (the
# cut). (A fixed 4 s from the client's start cut the wire before a loaded guest under
# the sanitizers had connected: both ends then timed out in rdma_cm instead.)
cut_wire() {
	local what=$1
	shift
	server "$@"
	client_bg "$@" --stats-period 0.2
	flowing "$cout"
	netem_loss 100%
	t0=$SECONDS
	wait "$cpid"
	rc=$?
	wait "$spid"
	src=$?
	netem_off
	echo "--- $what, wire cut: client (exit $rc)"; cat "$cout"; echo "--- server (exit $src)"; cat "$sout"
}

# The peer process dies (SIGKILL, as a crash would) once the client's data moves.
for v in write write_imm read send send_imm fetch_add cmp_swap; do
	# The server dies: the client hears the disconnect (or its QPs fail) and ends.
	server -v "$v" -n 100000000 --stall-timeout 5
	client_bg -v "$v" -n 100000000 --stall-timeout 5 --stats-period 0.2
	flowing "$cout"
	pkill -9 -P "$spid"
	t0=$SECONDS
	wait "$cpid"
	rc=$?
	wait "$spid" 2>/dev/null
	echo "--- $v, server killed: client (exit $rc)"; cat "$cout"
	expect_eq "$v, server killed: client exit" "$rc" 1
	expect_grep "$cout" "^  (connection lost|requester failed): "
	expect_grep "$cout" "^result: FAIL$"
	within "$v, server killed" $((SECONDS - t0)) 40

	# The client dies: the server sees it go and ends, counting what came.
	server -v "$v" -n 100000000 --stall-timeout 5
	client_bg -v "$v" -n 100000000 --stats-period 0.2
	flowing "$cout"
	pkill -9 -P "$cpid"
	t0=$SECONDS
	wait "$spid"
	src=$?
	wait "$cpid" 2>/dev/null
	echo "--- $v, client killed: server (exit $src)"; cat "$sout"
	expect_eq "$v, client killed: server exit" "$src" 1
	expect_grep "$sout" "^  disconnected: +1 of 1 connection|the client stopped answering"
	expect_grep "$sout" "^result: FAIL$"
	within "$v, client killed" $((SECONDS - t0)) 30
done

if wire_ready; then
	# RC, the wire cut: the transport retries (every 67 ms; 6 of them: rxe retries
	# forever at 7) run out on whatever each end has outstanding, and the completion
	# error is named, well inside the stall timeouts. Neither hangs.
	cut_wire "RC" -v write_imm -n 100000000 --stall-timeout 30 --retry-cnt 6
	expect_eq "RC, wire cut: client exit" "$rc" 1
	# The client has sends outstanding, or is waiting for credit while the server's
	# credit writes are: at least one end names the retries running out.
	if grep -Eq "completion errors: [0-9]+ x transport retry counter exceeded" "$cout" "$sout"; then
		echo "ok: RC, wire cut: transport retry counter exceeded, named"
	else
		echo "FAIL: RC, wire cut: neither end names the transport retries running out"; fails=$((fails + 1))
	fi
	# An end with nothing outstanding at the cut (all its WRs answered) hears nothing
	# more and ends at its stall timeout instead, named as such.
	expect_grep "$cout" "transport retry counter exceeded|requester failed: +stalled: no credit or completion"
	expect_grep "$sout" "transport retry counter exceeded|responder failed: +stalled: no message from the requester"
	expect_grep "$cout" "^result: FAIL$"
	expect_eq "RC, wire cut: server exit" "$src" 1
	expect_grep "$sout" "^result: FAIL$"
	within "RC, wire cut" $((SECONDS - t0)) 45

	# UC made reliable, the wire cut: retransmissions go unanswered; the client's flow
	# gives up once nothing is acknowledged for its stall timeout, and says so.
	cut_wire "reliable UC" --transport uc -v write_imm -n 100000000 --stall-timeout 6
	expect_eq "reliable UC, wire cut: client exit" "$rc" 1
	expect_grep "$cout" "gave up: nothing acknowledged within the stall timeout while retransmitting"
	expect_grep "$cout" "^  retransmissions: +[1-9]"
	expect_grep "$cout" "^result: FAIL$"
	expect_eq "reliable UC, wire cut: server exit" "$src" 1
	within "reliable UC, wire cut" $((SECONDS - t0)) 40
fi
finish
