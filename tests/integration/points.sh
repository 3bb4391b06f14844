#!/usr/bin/env bash
# --points: one rdmapipe process, EAL started once, runs the pipeline files named on its
# stdin in turn. Different verbs, QP counts (1, 64) and sizes, a file that does not
# load, a planted corruption that fails its run, a good one again, a ping-pong, a job's
# pattern, command lines (a run, a bad argument, -i) and a malformed request: each
# answered with the exit status of -f (or of the command line), each results
# file checked. A slow plant halves (at least) its corner's rate. Then 30 points in one
# child: none fails, and its file descriptors and hugepages do not grow.
. "$(dirname "$0")/lib.sh"
need_device
dir=$(mktemp -d)
on_exit 'rm -rf "$dir"'
conf_dir=$(cd "$(dirname "$0")/../../conf" && pwd)

# mkconf NAME OPTIONS...: the pipeline those options mean, its results in NAME.json.
mkconf() {
	local name=$1
	shift
	"$RDMAPIPE" -l 0-1 -- --dump-conf -d "$DEV" "$@" |
		sed "s|^run = {|run = {\n  output = { json = \"$dir/$name.json\"; };|" >"$dir/$name.conf"
}

# start_child ARGS...: rdmapipe --points as a coprocess (CHILD, CHILD_PID), its own
# stderr (EAL's, malformed requests') in child.err.
start_child() {
	# shellcheck disable=SC2046
	coproc CHILD { exec "$RDMAPIPE" $(eal_args) -- --points "$@" 2>>"$dir/child.err"; }
	on_exit "kill $CHILD_PID 2>/dev/null"
}

# resources: how many QPs, CQs, MRs, PDs and cm_ids (in that order, as in $kinds) rdma
# resource shows of the child, "N N N N N ".
kinds=(qp cq mr pd cm_id)
resources() {
	local r
	for r in "${kinds[@]}"; do rdma resource show "$r" 2>/dev/null | grep -c "pid $CHILD_PID "; done | tr '\n' ' '
}

# ask LINE: one request; $answer gets the reply line ("" when none came in 120 s), its
# "alive" lines passed over and the counters that moved cut off (in $moved).
reply() {
	local end=$((SECONDS + $1)) line
	answer= moved=
	while [ $SECONDS -lt $end ] && IFS= read -r -t $((end - SECONDS)) line <&"${CHILD[0]}"; do
		[ "$line" = alive ] && continue
		answer=${line%%$'\t'[a-z]*}
		moved=${line#"$answer"}
		return
	done
}
ask() {
	printf '%s\n' "$1" >&"${CHILD[1]}"
	reply 120
}

# point NAME WANT: runs NAME.conf, its output in NAME.log; the answer must be done WANT.
point() {
	ask "$dir/$1.conf	$dir/$1.log"
	expect_eq "point $1: answer" "$answer" "done	$2"
}

# verified NAME N: NAME's results say PASS with N messages verified in each flow.
verified() {
	json_check "$dir/$1.json" "
assert r['run']['result'] == 'PASS', r['run']
for f in r['flows']:
    assert f['messages_verified'] == f['messages_sent'] == $2, f
" "$1: PASS, $2 messages verified"
}

mkconf a -v write_imm -Q 1 -s 64 -n 3000
mkconf b -v send -Q 64 -s 4K -n 2000
mkconf c -v write_imm -Q 3 -s 1K -n 3000        # the corrupt plant's corner: qps = 3
mkconf d -v read -Q 2 -s 256 -n 2000
mkconf pp -v send --pingpong -Q 1 -n 1000
mkconf fast -v write_imm -s 1K -n 2000
mkconf slow -v write_imm -s 2K -n 2000           # the slow plant's corner: size = 2K
printf 'version = 1;\nflows = ( { name = "x"; qps = oops; } );\n' >"$dir/bad.conf"
sed "s/\"rxe0\"/\"$DEV\"/g" "$conf_dir/job-all-to-all.conf" >"$dir/job.conf"

start_child -q --plant 'corrupt:qps=3' --plant 'slow:size=2K'
point a 0
verified a 3000
point b 0
verified b 2000
json_check "$dir/b.json" "assert r['flows'][0]['qps'] == 64" "b: 64 QPs"
point bad 2
expect_grep "$dir/bad.log" "bad\.conf:2: syntax error"
point c 1
expect_grep "$dir/c.log" "flow 'flow0': --plant 'corrupt:qps=3': message 0 of its first QP has a byte flipped"
json_check "$dir/c.json" "
assert r['run']['result'] == 'FAIL'
assert r['flows'][0]['messages_verified'] == 2999, r['flows'][0]
" "c: planted corruption caught, 2999 of 3000 verified"
rm -f "$dir/a.json"
point a 0                                           # the same file again, after a failed run
verified a 3000
point d 0
verified d 2000
point pp 0
json_check "$dir/pp.json" "assert r['run']['result'] == 'PASS' and r['run']['mode'] == 'pingpong'" "pp: ping-pong PASS"
point job 2
expect_grep "$dir/job.log" "job\.conf: --points: a pattern's job runs under mpirun"
# A command line's arguments (--<TAB>LOG<TAB>ARG...), answered as the command would
# exit: in the corrupt plant's corner, which the request does not take from the child's
# own options (--plant, -q), so it passes.
ask "--	$dir/cl.log	-d	$DEV	-v	write_imm	-Q	3	-s	1K	-n	3000	--output	$dir/cl.json"
expect_eq "command line: answer" "$answer" "done	0"
verified cl 3000
expect_no_grep "$dir/cl.log" "corrupt:qps=3"
expect_grep "$dir/cl.log" "^result: PASS$"
ask "--	$dir/clbad.log	-d	$DEV	-n	lots"
expect_eq "command line, a bad argument: answer" "$answer" "done	2"
expect_grep "$dir/clbad.log" "^rdmapipe: --messages: 'lots' is not an integer"
expect_grep "$dir/clbad.log" "^Usage: rdmapipe"
ask "--	$dir/cli.log	-d	$DEV	-i"
expect_eq "command line with -i: answer" "$answer" "done	2"
expect_grep "$dir/cli.log" "^rdmapipe: --points: a request runs a pipeline: -i \\(the console wants a terminal\\) has no place in one$"
ask "no tab here"
expect_eq "malformed request: answer" "$answer" "done	2"
expect_grep "$dir/child.err" "rdmapipe: --points: request 'no tab here': not CONF<TAB>LOG"
ask "$dir/a.conf	/nonexistent/dir/a.log"
expect_eq "unwritable log: answer" "$answer" "done	2"
sed "s/\"$DEV\"/\"nosuchdev0\"/g" "$dir/a.conf" >"$dir/nodev.conf"
point nodev 3                                       # a setup error, then the next point runs
expect_grep "$dir/nodev.log" "nosuchdev0"
point fast 0
# The device's hw_counters that moved during the point, read by the child beside it.
[[ $moved =~ $'\t'sent_pkts=[1-9][0-9]*($'\t'|$) ]] && echo "ok: fast: its answer has the packets sent ($moved)" ||
	{ echo "FAIL: fast: no sent_pkts=N in its answer's counters ('$moved')"; fails=$((fails + 1)); }
point slow 0
expect_grep "$dir/slow.log" "flow 'flow0': --plant 'slow:size=2K': paced at 1000 msg/s"
if grep -q -- "--plant" "$dir/fast.log" "$dir/a.log" "$dir/b.log" "$dir/d.log"; then
	echo "FAIL: a plant fired outside its corner"
	fails=$((fails + 1))
fi
json_check "$dir/slow.json" "
import json
fast = json.load(open('$dir/fast.json'))['flows'][0]['message_rate']
slow = r['flows'][0]['message_rate']
assert r['run']['result'] == 'PASS' and slow < 0.5 * fast, (slow, fast)
print('  slow %.0f msg/s, fast %.0f msg/s' % (slow, fast))
" "slow plant: under half the rate of the same flow outside its corner"
eval "exec ${CHILD[1]}>&-"   # end of input: the child ends, status 0
wait "$CHILD_PID"
expect_eq "end of input: exit status" "$?" 0

# A signal: the current run stops as any run does, is answered 128 + 15, and the
# child exits so.
mkconf long -v write_imm -t 60
: >"$dir/long.log"
start_child
printf '%s\t%s\n' "$dir/long.conf" "$dir/long.log" >&"${CHILD[1]}"
await_line "$dir/long.log" "^rdmapipe: running" "$CHILD_PID"
# The leak check below counts what rdma resource shows of the child between points,
# kind by kind: a count that stays 0 there is an absence only if that kind of the
# child's shows while it runs. (On rxe each does; the passive side's QP of a loopback
# connection shows without its pid, the active side's with it. A cm_id goes with its
# event channel's fd: its count moves when both are kept, as the fds do.)
read -ra live <<<"$(resources)"
for k in 0 1 2 3 4; do
	[ "${live[k]:-0}" -gt 0 ] && echo "ok: rdma resource shows the running child's ${live[k]} ${kinds[k]}(s)" ||
		{ echo "FAIL: rdma resource shows no ${kinds[k]} of the running child"; fails=$((fails + 1)); }
done
# While a point runs the child says so each second (the explorer tells a hung point
# from a host that stopped answering by it).
# The first is the child's "ready"; a second comes a second into the point.
n=0
while [ $n -lt 2 ] && IFS= read -r -t 30 line <&"${CHILD[0]}" && [ "$line" = alive ]; do n=$((n + 1)); done
expect_eq "long: 'alive' lines, ready and while the point runs" "$n" 2
kill -TERM "$CHILD_PID"
reply 60
expect_eq "SIGTERM: answer" "$answer" "done	143"
wait "$CHILD_PID"
expect_eq "SIGTERM: exit status" "$?" 143
json_check "$dir/long.json" "assert r['run']['result'] == 'INTERRUPTED', r['run']" "long: its results say INTERRUPTED"

# 30 points in one child: every one passes; no descriptor, QP or hugepage leaks.
: >"$dir/child.err"
start_child -q
fds_at=() free_at=() res_at=()
for i in $(seq 1 30); do
	n=$(((i - 1) % 3))
	name=$(echo a b d | cut -d' ' -f$((n + 1)))
	ask "$dir/$name.conf	$dir/loop.log"
	if [ "$answer" != "done	0" ]; then
		echo "FAIL: loop point $i ($name): answer '$answer'"
		cat "$dir/loop.log"
		fails=$((fails + 1))
		break
	fi
	if [ "$i" = 6 ] || [ "$i" = 30 ]; then
		fds_at+=("$(ls /proc/"$CHILD_PID"/fd | wc -l)")
		free_at+=("$(awk '/HugePages_Free/ {print $2}' /proc/meminfo)")
		res_at+=("$(resources)")
	fi
done
echo "fds after points 6 and 30: ${fds_at[*]}; free hugepages: ${free_at[*]}"
expect_eq "loop: file descriptors after 30 points as after 6" "${fds_at[1]:-?}" "${fds_at[0]:-!}"
echo "the child's QPs, CQs, MRs, PDs, cm_ids between points 6 and 7: ${res_at[0]:-?}; 30 and 31: ${res_at[1]:-?}"
expect_eq "loop: RDMA resources between points (qp cq mr pd cm_id)" "${res_at[1]:-?}" "0 0 0 0 0 "
[ "${free_at[1]:-0}" -ge "${free_at[0]:-1}" ] && echo "ok: loop: no hugepage kept" ||
	{ echo "FAIL: loop: free hugepages went from ${free_at[0]:-?} to ${free_at[1]:-?}"; fails=$((fails + 1)); }
eval "exec ${CHILD[1]}>&-"
wait "$CHILD_PID"
expect_eq "loop: exit status" "$?" 0
finish
