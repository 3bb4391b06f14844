# Two rdmapipe processes across the veth wire (sourced after lib.sh, with $port set):
# the server (--listen) on rxeB's lcore 1, the client (--peer) on rxeA's lcore 0;
# $sout and $cout hold what each printed.
A=${RXE_A_DEV:-} B=${RXE_B_DEV:-} A_ADDR=${RXE_A_ADDR:-} B_ADDR=${RXE_B_ADDR:-}
if [ -z "$A" ] || [ -z "$B" ] || [ -z "$A_ADDR" ] || [ -z "$B_ADDR" ]; then
	skip_or_fail "no rxeA/rxeB pair (run under tools/softroce)"
fi
sout=$(mktemp) cout=$(mktemp)
on_exit 'rm -f "$sout" "$cout"'
base=$(eal_args | sed 's/-l 0-1 //')

start_server() {   # LCORES ARGS...: the server's rdmapipe in the background ($spid)
	# shellcheck disable=SC2086
	run_bg "$sout" timeout -k 5 120 "$RDMAPIPE" -l "$1" $base -- "${@:2}"
	spid=$bg_pid
}
# listening: until the server says it waits for its clients (bounded; cut short if it ends).
listening() { await_line "$sout" "waiting for" "$spid"; }
# flowing FILE [FLOW]: until FILE, the output of an end run with --stats-period, has a
# stats line of FLOW (flow0) with messages completed: connected, and the data moves.
flowing() {
	await "no stats line of ${2:-flow0} with messages completed" "$1" \
		has_line "$1" "^  ${2:-flow0} +[0-9.]+ Mmsg/s .*  [1-9][0-9]* (of|done)"
}
# until_running FILE: until FILE, an end's output, says it runs (its connections made).
until_running() { await "no 'rdmapipe: running' line" "$1" has_line "$1" "^rdmapipe: running"; }
# run_for FILE SECS: until FILE, as for flowing, has a stats block at SECS or more into
# the run (the run's own clock).
run_for() {
	await "no stats block at $2 s or later" "$1" \
		awk -v s="$2" '/^stats at [0-9.]+ s:$/ && $3 + 0 >= s { found = 1 } END { exit !found }' "$1"
}
# pair_bg WAIT LOSS ARGS...: a server and a client (in the background) with ARGS; once
# WAIT (a function of the client's output: until_running, flowing) holds, netem drops
# LOSS of the packets both ways until both have ended (heal=1: until the client has).
# Sets $rc, $src and $t0 (when the loss began); prints both outputs.
pair_bg() {
	local wait=$1 loss=$2
	shift 2
	server "$@"
	client_bg "$@"
	"$wait" "$cout"
	netem_loss "$loss"
	t0=$SECONDS
	wait "$cpid"
	rc=$?
	[ "${heal:-0}" = 1 ] && netem_off
	wait "$spid"
	src=$?
	netem_off
	echo "--- client (exit $rc), $loss lost from the start of its run"; cat "$cout"; echo "--- server (exit $src)"; cat "$sout"
}
run_client() {   # LCORES ARGS...: the client's rdmapipe, to its end (rdmapipe_to); sets $rc
	EAL_LCORES="-l $1" rdmapipe_to "$cout" "${@:2}"
}
client_bg() {   # ARGS...: the client of the last server, on lcore 0, in the background ($cpid)
	# shellcheck disable=SC2086
	run_bg "$cout" timeout -k 5 120 "$RDMAPIPE" -l 0 $base -- --peer "$B_ADDR:$port" --local "$A_ADDR" "$@"
	cpid=$bg_pid
}
# A server that refuses its client waits out its connect timeout for a right one: the
# tests of refusals give it 4 s (their client connects within about a second of the
# server's listen line, in the guest) rather than wait the default's 10.
server() {   # ARGS...: a server on the next port, on lcore 1, once it listens
	port=$((port + 1))
	start_server 1 --listen "$B_ADDR:$port" -d "$B" "$@"
	listening
}
client() {   # ARGS...: the client of that server, on lcore 0; sets $rc
	run_client 0 --peer "$B_ADDR:$port" --local "$A_ADDR" "$@"
}
server_wait() {   # sets $src
	wait "$spid"
	src=$?
	echo "--- server (exit $src)"; cat "$sout"; echo "--- client (exit $rc)"; cat "$cout"
}
both_pass() {   # WHAT: after server_wait, both processes passed
	expect_eq "$1: client exit" "$rc" 0
	expect_eq "$1: server exit" "$src" 0
}
pair() {   # WHAT ARGS...: a server and a client with the same ARGS, both expected to pass
	local what=$1
	shift
	server "$@"
	client "$@"
	server_wait
	both_pass "$what"
}
