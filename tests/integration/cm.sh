#!/usr/bin/env bash
# rdma_cm between two "hosts": the client on rxeA (RXE_A_ADDR), the server on rxeB
# (RXE_B_ADDR), across the veth wire. 1 and 8 QPs connect, exchange private data and
# move verified data both ways; then what must fail does, with a clear message and
# within its bound: a corrupted window, a port without a server, an address nobody
# answers for, a server killed while the client waits, a server dying mid-handshake,
# and private data the server must refuse; against rdmapipe itself, a client that
# writes outside the windows it was given.
#   cm.sh PATH/TO/cm_pair PATH/TO/rdmapipe
. "$(dirname "$0")/lib.sh"
CM_PAIR=$RDMAPIPE   # lib.sh names its argument for rdmapipe; here it is cm_pair
RDMAPIPE=${2:?usage: $0 PATH/TO/cm_pair PATH/TO/rdmapipe}

# Both ends of the wire, or nothing to test: skip on a user's box, fail in CI.
need_pair() {
	if [ -z "${RXE_A_DEV:-}" ] || [ -z "${RXE_B_DEV:-}" ] || [ -z "${RXE_A_ADDR:-}" ] ||
		[ -z "${RXE_B_ADDR:-}" ] || [ ! -e "/sys/class/infiniband/$RXE_A_DEV" ] ||
		[ ! -e "/sys/class/infiniband/$RXE_B_DEV" ]; then
		skip_or_fail "no rxeA/rxeB pair (RXE_A_DEV, RXE_B_DEV: run under tools/softroce)"
	fi
}
need_device
need_pair
A=$RXE_A_ADDR
B=$RXE_B_ADDR
tmp=$(mktemp -d)
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
on_exit cleanup

ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }

# Bounds catch hangs, not slowness: a failure must come within the run's timeout plus
# this much for process start-up on a slow (emulated) machine.
slack_ms=5000

expect_lt() {   # what got bound
	if [ "$2" -lt "$3" ]; then
		echo "ok: $1: $2 < $3"
	else
		echo "FAIL: $1: $2, want < $3"
		fails=$((fails + 1))
	fi
}

start_server() {   # PORT N [args]: in the background, once it listens; sets spid, sout
	local port=$1
	shift
	sout=$tmp/server.$port
	run_bg "$sout" timeout -k 5 120 "$CM_PAIR" --server "$B" "$port" "$@"
	spid=$bg_pid
	pids+=("$spid")
	await_line "$sout" "listening on" "$spid"
}

server_pid() {   # cm_pair's own pid (spid is timeout's), from its "listening" line
	sed -n 's/^cm_pair server: listening on .*, pid \([0-9]*\)$/\1/p' "$sout"
}

wait_server() {   # sets src
	wait "$spid"
	src=$?
	echo "--- server on $B (exit $src)"
	cat "$sout"
}

run_client() {   # OUT PORT N [args]: sets rc, elapsed (ms)
	local out=$1 port=$2 n=$3 t0
	shift 3
	t0=$(date +%s%N)
	timeout -k 5 120 "$CM_PAIR" --client "$B" "$port" "$n" --local "$A" "$@" >"$out" 2>&1
	rc=$?
	elapsed=$(ms_since "$t0")
	echo "--- client $A -> $B:$port, $n QPs $* (exit $rc, $elapsed ms)"
	cat "$out"
}

cout=$tmp/client
conn_re="connection [0-9]+ \(flow 0 QP [0-9]+\)"

# Data across the wire: the client on rxeA, the server on rxeB, windows verified,
# verdicts back, the client's disconnect seen by the server.
for n in 1 8; do
	port=$((18510 + n))
	qps="$n QPs" conns="$n connections"
	[ "$n" = 1 ] && qps="1 QP" conns="1 connection"
	start_server "$port" "$n" || continue
	run_client "$cout" "$port" "$n"
	wait_server
	expect_eq "$qps: client exit" "$rc" 0
	expect_eq "$qps: server exit" "$src" 0
	expect_grep "$sout" "^cm_pair server: listening on $B:$port \($RXE_B_DEV\)"
	expect_grep "$cout" "^cm_pair client: $conns established from $A \($RXE_A_DEV\) to $B:$port "
	expect_grep "$cout" "^cm_pair client: PASS: $qps connected to $B:$port, windows written, the server verified all $n$"
	expect_grep "$sout" "^cm_pair server: PASS: $qps, each window of 4 x 1024 B verified; the client disconnected all $n$"
done

# A corrupted window is caught, named, and fails both sides.
start_server 18520 8 &&
	run_client "$cout" 18520 8 --corrupt-qp 5 &&
	wait_server
expect_eq "corrupt QP 5: client exit" "$rc" 1
expect_eq "corrupt QP 5: server exit" "$src" 1
expect_grep "$cout" "^cm_pair client: FAIL: 1 of 8 QPs failed; the server found QP 5's window corrupt$"
expect_grep "$sout" "^cm_pair server: FAIL: 1 of 8 QPs' windows corrupt, the first: QP 5: byte 517 is 0x[0-9a-f]{2}, want 0x[0-9a-f]{2}$"

# No server on the port: the peer's CM refuses at once.
run_client "$cout" 18599 4 --timeout-ms 5000
expect_eq "no server: client exit" "$rc" 1
expect_grep "$cout" "^cm_pair client: FAIL: rdma_cm: connect to $B:18599, $conn_re: no server listening on port 18599 \(RDMA_CM_EVENT_REJECTED: IB CM reason 8, invalid service ID\)$"
expect_lt "no server: ms to fail" "$elapsed" $((5000 + slack_ms))

# The QP's PD and CQs must be on the context rdma_cm resolved to: the other device,
# or the right device opened apart from librdmacm, is refused before anything is sent.
run_client "$cout" 18560 2 --wrong-device "cm:$RXE_B_DEV"
expect_eq "PD on the other device: client exit" "$rc" 1
expect_grep "$cout" "^cm_pair client: FAIL: rdma_cm: connect to $B:18560, connection 0 \(flow 0 QP 0\): rdma_cm put the connection on $RXE_A_DEV, but its PD is on $RXE_B_DEV$"
run_client "$cout" 18560 2 --wrong-device "ibv:$RXE_A_DEV"
expect_eq "PD on another context: client exit" "$rc" 1
expect_grep "$cout" "^cm_pair client: FAIL: rdma_cm: connect to $B:18560, connection 0 \(flow 0 QP 0\): its PD is on another context of $RXE_A_DEV \(opened with ibv_open_device\?\): open the device with cm_device_open"

# Nobody answers for 10.2.0.9 on the wire: resolution fails within its bound.
t0=$(date +%s%N)
timeout -k 5 60 "$CM_PAIR" --client 10.2.0.9 18515 2 --local "$A" --timeout-ms 2000 >"$cout" 2>&1
rc=$?
elapsed=$(ms_since "$t0")
echo "--- client $A -> 10.2.0.9:18515 (exit $rc, $elapsed ms)"
cat "$cout"
expect_eq "no host: client exit" "$rc" 1
expect_grep "$cout" "^cm_pair client: FAIL: rdma_cm: connect to 10.2.0.9:18515: (address not resolved|no route) \(RDMA_CM_EVENT_ADDR_ERROR: .*\)$|^cm_pair client: FAIL: rdma_cm: connect to 10.2.0.9:18515: timed out after 2 s resolving"
expect_lt "no host: ms to fail" "$elapsed" $((2000 + slack_ms))

# The server is killed while the client waits for its verdicts: the client hears
# of it from the CM (the kernel disconnects a dead process's ids), within its bound.
if start_server 18530 8 --stall; then
	run_bg "$cout" timeout -k 5 120 "$CM_PAIR" --client "$B" 18530 8 --local "$A" --timeout-ms 10000
	cpid=$bg_pid
	pids+=("$cpid")
	await_line "$cout" "waiting for the server's verdicts" "$cpid"
	# Killed whatever the client did: a stalled server would otherwise sit for a minute.
	kill -9 "$(server_pid)"
	tk=$(date +%s%N)
	wait "$cpid"
	rc=$?
	after_kill=$(ms_since "$tk")
	echo "--- client $A -> $B:18530, server killed (exit $rc, $after_kill ms after the kill)"
	cat "$cout"
	wait_server
	expect_eq "server killed: server exit" "$src" 137
	expect_eq "server killed: client exit" "$rc" 1
	expect_grep "$cout" "^cm_pair client: FAIL: rdma_cm: connect to $B:18530, $conn_re: disconnected by the peer \(RDMA_CM_EVENT_DISCONNECTED\).* while waiting for the server's verdicts \([0-7] of 8 verdicts in\)$"
	expect_lt "server killed: ms to notice" "$after_kill" $((10000 + slack_ms))
fi

# The server dies at the 4th of 8 connection requests: the client's connect fails
# with the cause, not a hang.
start_server 18540 8 --die-at 3 &&
	run_client "$cout" 18540 8 --timeout-ms 5000 &&
	wait_server
expect_eq "server dies mid-handshake: server exit" "$src" 137
expect_eq "server dies mid-handshake: client exit" "$rc" 1
expect_grep "$cout" "^cm_pair client: FAIL: rdma_cm: connect to $B:18540, $conn_re: (disconnected by the peer before all 8 connections were established|no server listening on port 18540|rejected by the peer|no answer from the server|the handshake failed)"
expect_lt "server dies mid-handshake: ms to fail" "$elapsed" $((5000 + slack_ms))

# Private data from the wire is checked: four bad requests, four reasons back, and
# the server, still waiting for a good one, gives up within its bound and says why.
if start_server 18550 1 --timeout-ms 4000; then
	timeout -k 5 60 "$CM_PAIR" --bad-client "$B" 18550 --local "$A" >"$cout" 2>&1
	rc=$?
	echo "--- bad client $A -> $B:18550 (exit $rc)"
	cat "$cout"
	wait_server
	expect_eq "bad private data: bad client exit" "$rc" 0
	expect_grep "$cout" "^cm_pair bad-client: ok: bad magic: rejected: bad private data: wrong magic 0xdeadbeef \(want 0x5250434d: not an rdmapipe peer\)$"
	expect_grep "$cout" "^cm_pair bad-client: ok: bad version: rejected: bad private data: private data version 9 \(this build speaks 7\)$"
	expect_grep "$cout" "^cm_pair bad-client: ok: bad length: rejected: bad private data: private data length field 20, want 56$"
	expect_grep "$cout" "^cm_pair bad-client: ok: bad window: rejected: bad private data: window of 1048575 x 4294967295 B"
	expect_eq "bad private data: server exit" "$src" 1
	expect_grep "$sout" "^cm_pair server: FAIL: rdma_cm: listen on $B:18550: timed out after 4 s waiting for 1 connection \(0 accepted, 0 established; rejected 4 requests, the last: connection from $A:[0-9]+: bad private data: window .* wraps around the address space\)$"
fi

# A hostile client of an rdmapipe server of RDMA WRITE: it connects as rdmapipe's own
# client would, then writes once inside a window (which arrives) and three times
# outside: past the highest window, before the lowest, and inside with a wrong rkey.
# Each of those must fail at the server's NIC (so the server registered exactly its
# windows for this peer, nothing around them), and the server must end on its own,
# within its bounds, saying that its client went away before its end.
sout=$tmp/rdmapipe-server
# shellcheck disable=SC2046
run_bg "$sout" timeout -k 5 60 "$RDMAPIPE" -l 1 $(eal_args | sed 's/-l 0-1 //') -- --listen "$B:18570" -d "$RXE_B_DEV" \
	-v write -s 64 --slots 32 -Q 4 -n 400 --stall-timeout 5
spid=$bg_pid
pids+=("$spid")
if await_line "$sout" "waiting for" "$spid"; then
	t0=$(date +%s%N)
	timeout -k 5 60 "$CM_PAIR" --hostile-writer "$B" 18570 --local "$A" --size 64 --slots 32 --messages 100 >"$cout" 2>&1
	rc=$?
	echo "--- hostile writer $A -> $B:18570 (exit $rc)"
	cat "$cout"
	wait "$spid"
	src=$?
	echo "--- rdmapipe server on $B (exit $src)"
	cat "$sout"
	expect_eq "hostile writer: exit" "$rc" 0
	expect_grep "$cout" "^cm_pair hostile-writer: ok: QP 0, a write inside its window: success$"
	expect_grep "$cout" "^cm_pair hostile-writer: ok: QP 1, a write just past the highest window: remote access error$"
	expect_grep "$cout" "^cm_pair hostile-writer: ok: QP 2, a write just before the lowest window: remote access error$"
	expect_grep "$cout" "^cm_pair hostile-writer: ok: QP 3, a write inside its window with a wrong rkey: remote access error$"
	expect_eq "hostile writer: rdmapipe server exit" "$src" 1
	expect_grep "$sout" "^  final counts: +0 of 4 told by the client \(it went away before its end\)$"
	expect_grep "$sout" "^result: FAIL$"
	expect_lt "hostile writer: ms until the server ended" "$(ms_since "$t0")" $((20000 + slack_ms))
fi
finish
