#!/usr/bin/env bash
# The perftest front end beside real perftest (Debian's 4.5), in one VM run, server on
# rxeB and client on rxeA across the veth wire: for each test, perftest's pair and then
# rdmapipe's under the same command line (a link named after the test); one parser, as
# a user's script would have, reads both clients' tables: the same columns and rows
# (sizes, iterations), figures above 0, their ratio printed (a report, not a bound: rxe
# under TCG is noise). rdmapipe's --out_json is valid JSON with the field names of
# perftest's file (read by a parser that takes perftest 4.5's unquoted keys and trailing
# commas too), and every message verified. Flags that cannot take effect are refused,
# named.
. "$(dirname "$0")/lib.sh"
A=${RXE_A_DEV:-} B=${RXE_B_DEV:-} B_ADDR=${RXE_B_ADDR:-}
if [ -z "$A" ] || [ -z "$B" ] || [ -z "$B_ADDR" ]; then
	skip_or_fail "no rxeA/rxeB pair (run under tools/softroce)"
fi
command -v ib_write_bw >/dev/null || skip_or_fail "no perftest (Debian package perftest)"
work=$(mktemp -d)
on_exit 'rm -rf "$work"'
for t in write_bw write_lat read_bw read_lat send_bw send_lat atomic_bw atomic_lat; do
	ln -s "$(readlink -f "$RDMAPIPE")" "$work/ib_$t"
done
export RDMAPIPE_EAL
RDMAPIPE_EAL="--lcores 0@(0,1),1@(0,1) $(eal_args | sed 's/-l 0-1 //')"
port=18600

# side_by_side TEST ARGS...: perftest's server and client, then rdmapipe's, each pair
# bounded; the clients' tables in $work/perftest.TEST and $work/rdmapipe.TEST (with
# --reversed the server sends, and its tables are compared).
side_by_side() {
	local t=$1 who bin spid rc src sender=
	shift
	case " $* " in *" --reversed "*) sender=.server ;; esac
	for who in perftest rdmapipe; do
		bin=(stdbuf -oL "ib_$t")   # perftest's banner as it prints it, not at its exit
		[ $who = rdmapipe ] && bin=("$work/ib_$t")
		port=$((port + 1))
		run_bg "$work/$who.$t.server" timeout -k 5 120 "${bin[@]}" -d "$B" -p $port "$@"
		spid=$bg_pid
		# perftest's server must listen before its client starts (with --reversed it prints
		# no banner: its TCP port listening says it); rdmapipe's client asks again until
		# its server listens (its connect timeout).
		if [ $who = perftest ] && [ -n "$sender" ]; then
			await "perftest's --reversed server listening on $port" "$work/$who.$t.server" tcp_listening $port
		elif [ $who = perftest ]; then
			await_line "$work/$who.$t.server" "Waiting for client" $spid 60
		fi
		timeout -k 5 120 "${bin[@]}" -d "$A" -p $port "$@" "$B_ADDR" >"$work/$who.$t" 2>"$work/$who.$t.err"
		rc=$?
		wait $spid
		src=$?
		expect_eq "$who ib_$t $*: client exit" "$rc" 0
		expect_eq "$who ib_$t $*: server exit" "$src" 0
		[ $rc = 0 ] || { tail -n 20 "$work/$who.$t.err" "$work/$who.$t.server"; }
	done
	python3 "$TESTDIR/perftest_table.py" compare "$work/perftest.$t$sender" "$work/rdmapipe.$t$sender" "ib_$t $*" &&
		echo "ok: ib_$t $*: the same table" ||
		{ echo "FAIL: ib_$t $*: the tables differ"; cat "$work/perftest.$t$sender" "$work/rdmapipe.$t$sender"; fails=$((fails + 1)); }
}
TESTDIR=$(cd "$(dirname "$0")" && pwd)
tcp_listening() { ss -Hltn "sport = :$1" | grep -q .; }

side_by_side write_bw -s 4096 -n 2000
side_by_side send_bw -s 1024 -n 2000 -q 2
side_by_side read_bw -s 4096 -n 1000
side_by_side send_lat -n 500
side_by_side write_lat -n 500
side_by_side read_lat -s 64 -n 300
side_by_side atomic_lat -n 300
side_by_side atomic_bw -n 1000 -A CMP_AND_SWAP
# Common flags: QPs, post lists, CQ moderation, send queue depth, Gb/s; UC; inline; SRQ.
side_by_side write_bw -s 64 -n 3200 -q 4 -l 16 -Q 8 -t 64 --report_gbits
side_by_side write_bw -c UC -s 1024 -n 2000
side_by_side send_lat -s 64 -I 64 -n 300 -H
side_by_side write_lat -s 4096 -n 300 -H
side_by_side send_bw -s 256 -n 2000 --use-srq
# --reversed: the server sends (rdmapipe: a listening end with the flow's rdma_tx stage).
side_by_side write_bw -s 4096 -n 2000 --reversed
# -b: both ends send at once (rdmapipe: a second flow the other way, on the port after).
side_by_side write_bw -s 4096 -n 2000 -b
side_by_side send_bw -s 1024 -n 2000 -b

# --output: the one figure, as perftest prints it (its %lf), nothing else on stdout.
port=$((port + 1))
run_bg "$work/out.server" timeout -k 5 120 "$work/ib_write_bw" -d "$B" -p $port -s 1024 -n 1000 --output bandwidth
spid=$bg_pid
timeout -k 5 120 "$work/ib_write_bw" -d "$A" -p $port -s 1024 -n 1000 --output bandwidth "$B_ADDR" >"$work/out.client" 2>/dev/null
expect_eq "ib_write_bw --output bandwidth: client exit" "$?" 0
wait $spid
expect_eq "ib_write_bw --output bandwidth: its stdout" "$(grep -cvE '^[0-9]+\.[0-9]{6}$' "$work/out.client")/$(wc -l <"$work/out.client")" "0/1"

# -w: perftest's bandwidth floor: a run below it fails with perftest's words, one above
# it passes.
for floor in 0.001 1000000; do
	port=$((port + 1))
	run_bg "$work/floor.server" timeout -k 5 120 "$work/ib_write_bw" -d "$B" -p $port -s 1024 -n 1000
	spid=$bg_pid
	timeout -k 5 120 "$work/ib_write_bw" -d "$A" -p $port -s 1024 -n 1000 -w $floor "$B_ADDR" >"$work/floor.client" 2>&1
	rc=$?
	wait $spid
	if [ $floor = 0.001 ]; then
		expect_eq "ib_write_bw -w $floor: exit" "$rc" 0
	else
		expect_eq "ib_write_bw -w $floor: exit" "$rc" 1
		expect_grep "$work/floor.client" "^Error: BW result is below bw limit$"
	fi
done

# --out_json: valid JSON, perftest's fields, every message verified at the server
# (which for a send test is where the checks are: its own file).
port=$((port + 1))
run_bg "$work/js.server" timeout -k 5 120 "$work/ib_send_bw" -d "$B" -p $port -s 512 -n 3000 --out_json --out_json_file "$work/server.json"
spid=$bg_pid
timeout -k 5 120 "$work/ib_send_bw" -d "$A" -p $port -s 512 -n 3000 --out_json --out_json_file "$work/client.json" "$B_ADDR" \
	>"$work/js.client" 2>&1
expect_eq "ib_send_bw --out_json: client exit" "$?" 0
wait $spid
expect_eq "ib_send_bw --out_json: server exit" "$?" 0
port=$((port + 1))
run_bg "$work/pj.server" timeout -k 5 120 stdbuf -oL ib_send_bw -d "$B" -p $port -s 512 -n 3000 --out_json --out_json_file "$work/perftest.json"
spid=$bg_pid
await_line "$work/pj.server" "Waiting for client" $spid 60
timeout -k 5 120 ib_send_bw -d "$A" -p $port -s 512 -n 3000 "$B_ADDR" >"$work/pj.client" 2>&1
wait $spid
python3 "$TESTDIR/perftest_table.py" json "$work/perftest.json" "$work/server.json" "$work/client.json" &&
	echo "ok: --out_json: valid, perftest's fields, every message verified" || { echo "FAIL: --out_json"; cat "$work/server.json" "$work/perftest.json"; fails=$((fails + 1)); }

# Nothing silently ignored: a flag that cannot take effect is refused, named, before
# anything starts; so is a combination the pipeline cannot run (the validator's words).
"$work/ib_write_lat" -d "$A" --write_with_imm "$B_ADDR" >"$work/refused" 2>&1
expect_eq "ib_write_lat --write_with_imm: exit status" "$?" 2
expect_grep "$work/refused" "a ping-pong \(an echo stage\) echoes send, send_imm or write"
"$work/ib_write_bw" -d "$A" -m 1024 "$B_ADDR" >"$work/refused" 2>&1
expect_eq "ib_write_bw -m: exit status" "$?" 2
expect_grep "$work/refused" "^ib_write_bw: -m \(--mtu\) is refused: the path MTU is the port's active MTU"
"$work/ib_write_bw" -d "$A" --size=64 --no-such-flag "$B_ADDR" >"$work/refused" 2>&1
expect_eq "ib_write_bw --no-such-flag: exit status" "$?" 2
expect_grep "$work/refused" "^ib_write_bw: '--no-such-flag': not a perftest flag"
finish
