# Shared by the integration tests: find an rxe device, pick EAL arguments, assert on
# rdmapipe's summary. Sourced; $1 of the test is the rdmapipe binary.
set -u

RDMAPIPE=${1:?usage: $0 PATH/TO/rdmapipe}
fails=0
case ${RDMAPIPE_POINTS:-1} in
0 | 1) ;;
*) echo "FAIL: RDMAPIPE_POINTS='$RDMAPIPE_POINTS': 1 (runs in a points child, the default) or 0 (a process each)"; exit 1 ;;
esac

# on_exit CMD: CMD runs when the test exits, however it exits (an abort too), after
# those given before. Then any process the test left in the background is killed, so
# that an aborted test leaves no rdmapipe, netem rule or file behind for the next one.
exit_cmds=()
run_exit_cmds() {
	local c
	for c in "${exit_cmds[@]}"; do eval "$c"; done
	kill $(jobs -p) 2>/dev/null
}
on_exit() { exit_cmds+=("$1"); trap run_exit_cmds EXIT; }

# skip_or_fail WHY: the test cannot run here. In CI (CI set), where a skip would hide
# that it did not run, a failure; elsewhere "SKIP: WHY" and exit 77, which meson counts
# as skipped (after a failed check, exit 1 all the same).
skip_or_fail() {
	if [ -n "${CI:-}" ]; then
		echo "FAIL: $1 (CI must run this)"
		exit 1
	fi
	echo "SKIP: $1"
	[ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
	exit 77
}

# part_skipped WHY: a part of the test cannot run here; the rest goes on. In CI a
# failure counted; elsewhere "SKIP: WHY", and finish then exits 77 (skipped), not 0: a
# test that left a part out has not passed, and meson must not count it so.
skipped=0
part_skipped() {
	if [ -n "${CI:-}" ]; then
		echo "FAIL: $1 (CI must run this)"
		fails=$((fails + 1))
		return
	fi
	echo "SKIP: $1"
	skipped=$((skipped + 1))
}

# No device: skip on a user's box, fail in CI, where a skip would hide that nothing
# ran on rxe.
need_device() {
	DEV=${RXE_LOOP_DEV:-}
	if [ -z "$DEV" ]; then
		DEV=$(ls /sys/class/infiniband 2>/dev/null | head -n 1)
	fi
	if [ -z "$DEV" ] || [ ! -e "/sys/class/infiniband/$DEV" ]; then
		skip_or_fail "no RDMA device (run under tools/softroce)"
	fi
}

# scratch_files: $out (a run's output) and $conf (a pipeline file), removed on exit.
scratch_files() {
	out=$(mktemp)
	conf=$(mktemp --suffix=.conf)
	on_exit 'rm -f "$out" "$conf"'
}

# dev_attr NAME: the device's attribute NAME (max_cqe, max_qp_wr, ...) from ibv_devinfo -v.
dev_attr() { ibv_devinfo -v -d "$DEV" | awk -v k="$1:" '$1 == k {print $2; exit}'; }

# Hugepages when the machine has them (the VM does), else plain memory. Lcores 0-1,
# or $EAL_LCORES (a run on more lcores than the VM's 2 CPUs maps them onto both).
eal_args() {
	local lcores=${EAL_LCORES:--l 0-1}
	local huge=0
	read -r huge 2>/dev/null </proc/sys/vm/nr_hugepages
	if [ "${huge:-0}" -gt 0 ]; then
		echo "$lcores --in-memory --no-pci --log-level=lib.eal:error"
	else
		echo "$lcores --no-huge -m 512 --no-shconf --no-pci --log-level=lib.eal:error"
	fi
}

# rdmapipe_to OUT ARGS...: rdmapipe $(eal_args) -- ARGS..., its output in OUT, bounded;
# sets $rc, and $how (where it ran). It goes to a points child (below) unless
# RDMAPIPE_POINTS=0 or an argument holds a tab or a newline (which a request line
# cannot carry): then a process of its own.
rdmapipe_to() {
	local out=$1 a own=0
	shift
	[ "${RDMAPIPE_POINTS:-1}" = 1 ] || own=1
	for a in "$@"; do [[ $a == *[$'\t\n']* ]] && own=1; done
	if [ $own -eq 0 ]; then
		points_run "$out" "$@"
		how="; in the points child, pid ${pt_pid[$pt_key]:-gone}"
	else
		# shellcheck disable=SC2046
		timeout -k 5 240 "$RDMAPIPE" $(eal_args) -- "$@" >"$out" 2>&1
		rc=$?
		how=
	fi
}
# run_rdmapipe OUT_FILE [app args...]: rdmapipe_to, then the command and its output.
run_rdmapipe() {
	local out=$1
	shift
	rdmapipe_to "$out" "$@"
	echo "--- rdmapipe $* (exit $rc$how)"
	cat "$out"
}

# Points children: rdmapipe --points (app/rdmapipe/points.h), one per EAL lcore set
# and working folder, EAL started once, each run a command line's arguments given on
# its stdin and answered with the status the command would exit with, its output in
# the file named with it. A process start costs 0.7-1 s in the guest (2-3 s under
# ASan), over the suite's 150 runs (issue 44). RDMAPIPE_POINTS=0: a process each run.
declare -A pt_pid=() pt_w=() pt_r=() pt_err=()
pt_dir= pt_key= pt_n=0
# points_run OUT ARG...: rdmapipe $(eal_args) -- ARG... run by the child, its output in
# OUT; sets rc (124 when no answer came in 240 s, 125 when the child died).
points_run() {
	local out=$1 answer= n w r k a eal line
	shift
	[[ $out == /* ]] || out=$PWD/$out
	eal=$(eal_args)
	pt_key="$eal in $PWD"   # relative paths among the arguments: the child's folder
	if [ -z "${pt_pid[$pt_key]:-}" ]; then
		[ -n "$pt_dir" ] || { pt_dir=$(mktemp -d); on_exit 'points_stop; rm -rf "$pt_dir"'; }
		n=$((pt_n++))
		mkfifo "$pt_dir/in$n" "$pt_dir/out$n"
		# Without the other children's pipes: each must see its own input end.
		(
			for k in "${!pt_w[@]}"; do
				w=${pt_w[$k]} r=${pt_r[$k]}
				exec {w}>&- {r}<&-
			done
			# shellcheck disable=SC2086
			exec "$RDMAPIPE" $eal -- --points <"$pt_dir/in$n" >"$pt_dir/out$n" 2>>"$pt_dir/err$n"
		) &
		pt_pid[$pt_key]=$! pt_err[$pt_key]=$pt_dir/err$n
		exec {w}>"$pt_dir/in$n" {r}<"$pt_dir/out$n"
		pt_w[$pt_key]=$w pt_r[$pt_key]=$r
	fi
	: >"$out"
	line="--"$'\t'"$out"
	for a in "$@"; do line+=$'\t'"$a"; done
	# In a subshell: a child gone gives it, not the test, the SIGPIPE.
	(printf '%s\n' "$line" >&"${pt_w[$pt_key]}") 2>/dev/null
	points_answer 240
	if [ $rc -eq 0 ] && [[ $answer =~ ^done$'\t'([0-9]+)($'\t'.*)?$ ]]; then
		rc=${BASH_REMATCH[1]}
		return
	fi
	if [ $rc -gt 128 ] && kill -0 "${pt_pid[$pt_key]}" 2>/dev/null; then
		rc=124
		echo "FAIL: the points child (pid ${pt_pid[$pt_key]}, $pt_key) gave no answer in 240 s; its stderr:"
	else
		rc=125
		echo "FAIL: the points child (pid ${pt_pid[$pt_key]}, $pt_key) answered '$answer' and ended; its stderr:"
	fi
	cat "${pt_err[$pt_key]}" 2>/dev/null
	fails=$((fails + 1))
	points_stop_one "$pt_key"
}
# points_answer SECONDS: the current child's answer line in $answer, its "alive" lines
# (one a second while a point runs) passed over; rc 0, or read's status when none came.
points_answer() {
	local end=$((SECONDS + $1))
	while [ $SECONDS -lt $end ]; do
		IFS= read -r -t $((end - SECONDS)) answer <&"${pt_r[$pt_key]}" || { rc=$?; return; }
		[ "$answer" = alive ] || { rc=0; return; }
	done
	rc=142   # as read -t's timeout: the time is up, only "alive" came
}
# points_stop_one KEY: that child's input closed: it ends EAL and exits 0. A process the
# test left running may hold a copy of that input (started after the child): after
# 5 s, SIGTERM, which an idle child answers with 143. Any other status (a sanitizer's
# report at exit) is a failure; after 10 more seconds, SIGKILL.
points_stop_one() {
	local pid=${pt_pid[$1]} w=${pt_w[$1]} r=${pt_r[$1]} i st ok=0
	exec {w}>&- {r}<&-
	for ((i = 0; i < 150; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		[ $i -eq 50 ] && { kill -TERM "$pid"; ok=143; }
		nap 0.1
	done
	kill -9 "$pid" 2>/dev/null
	wait "$pid"
	st=$?
	[ $st -eq 0 ] || [ $st -eq $ok ] ||
		{ echo "FAIL: the points child (pid $pid, $1) exited $st"; fails=$((fails + 1)); }
	unset "pt_pid[$1]" "pt_w[$1]" "pt_r[$1]" "pt_err[$1]"
}
points_stop() {
	local k
	for k in "${!pt_pid[@]}"; do points_stop_one "$k"; done
}

# run_bg OUT CMD...: CMD in the background, its stdout and stderr into OUT; sets bg_pid
# (CMD's pid: its arguments, $(eal_args) too, are expanded here first). OUT is emptied
# here, before the start: `CMD >OUT &` truncates it in the child, which can come after a
# wait's first look at OUT, and that wait then sees an earlier run's line.
run_bg() {
	local out=$1
	shift
	: >"$out"
	"$@" >"$out" 2>&1 &
	bg_pid=$!
}

# field OUT_FILE NAME: the value of the first "  NAME:   value" summary line. Bash's own
# read, no sed and head: their starts cost 0.1 s a call in the guest, 189 calls in ten
# of the tests.
field() {
	local line
	while IFS= read -r line || [ -n "$line" ]; do
		[[ $line == "  $2:"* ]] || continue
		line=${line#"  $2:"}
		printf '%s\n' "${line#"${line%%[! ]*}"}"
		return
	done <"$1"
}

expect_eq() {   # what got want
	if [ "$2" != "$3" ]; then
		echo "FAIL: $1: got '$2', want '$3'"
		fails=$((fails + 1))
	else
		echo "ok: $1 = $3"
	fi
}

# json_check FILE PYTHON-ASSERTIONS WHAT [SCHEMA]: the results file is valid by its JSON
# Schema (docs/results.schema.json, or docs/SCHEMA; Debian's python3-jsonschema) and the
# assertions on it, loaded as r, hold. Checked at finish, all of a test's files in one
# Python (its start with jsonschema costs 3 s in the guest: 28 s of mpi.sh's checks),
# on a copy of FILE as it is now: the test may write FILE again.
json_q= json_n=0
json_check() {
	if [ -z "$json_q" ]; then
		json_q=$(mktemp -d)
		on_exit 'rm -rf "$json_q"'
	fi
	json_n=$((json_n + 1))
	local q=$json_q/$json_n
	cp "$1" "$q.json" 2>/dev/null || : >"$q.json"
	printf '%s' "$2" >"$q.py"
	printf '%s\n%s\n%s\n' "$1" "$3" "${4:-results.schema.json}" >"$q.what"
}
# json_checks_run: every queued json_check, one ok or FAIL line each, in their order.
json_checks_run() {
	[ "$json_n" -gt 0 ] || return 0
	local n=
	rm -f "$json_q/failed"
	/usr/bin/python3 -W ignore::DeprecationWarning - "$json_q" "$json_n" \
		"$(dirname "${BASH_SOURCE[0]}")/../../docs" <<'PY'
import json, sys, jsonschema
q, count, docs = sys.argv[1], int(sys.argv[2]), sys.argv[3]
results = json.load(open(f"{docs}/results.schema.json"))
store = {results["$id"]: results}
failed = 0
for i in range(1, count + 1):
    path, what, schema_name = open(f"{q}/{i}.what").read().split("\n")[:3]
    try:
        r = json.load(open(f"{q}/{i}.json"))
        schema = json.load(open(f"{docs}/{schema_name}"))
        resolver = jsonschema.RefResolver.from_schema(schema, store=store)
        jsonschema.Draft202012Validator(schema, resolver=resolver).validate(r)
        exec(open(f"{q}/{i}.py").read(), {"r": r})
        print(f"ok: {path}: {what}")
    except Exception as e:
        where = "/".join(map(str, getattr(e, "absolute_path", [])))
        why = getattr(e, "message", None) or str(e) or repr(e)
        print(f"FAIL: {path}: {what}: {type(e).__name__}{' at ' + where if where else ''}: {why}"[:2000])
        failed += 1
open(f"{q}/failed", "w").write(f"{failed}\n")
PY
	read -r n 2>/dev/null <"$json_q/failed"
	[[ $n =~ ^[0-9]+$ ]] || { echo "FAIL: the JSON checks did not run (above)"; n=1; }
	fails=$((fails + n)) json_n=0
}

# has_line FILE ERE: FILE has a line that ERE matches (grep -E's language, as bash's
# [[ =~ ]] speaks it: glibc's regcomp, GNU's \w \s \b, no back-references); 1 if none,
# 2 if FILE cannot be read or ERE is no regular expression (said on stderr). Read by
# bash itself: a grep's start costs 0.08 s in the guest, 112 of them in graphs.sh. A
# file of over 5,000 lines goes to grep, faster there than bash's loop.
has_line() {
	local l
	local -a lines
	[[ "" =~ $2 ]]
	[ $? -ne 2 ] || { echo "has_line: '$2' is no regular expression" >&2; return 2; }
	[ -r "$1" ] && mapfile -t lines <"$1" || return 2
	if [ ${#lines[@]} -gt 5000 ]; then
		grep -qE -- "$2" "$1"
		return
	fi
	for l in "${lines[@]}"; do [[ $l =~ $2 ]] && return 0; done
	return 1
}

# nap SECS: a pause without a process (a sleep's start costs as much as the pause in
# the guest): read's timeout on a pipe that nobody writes to.
exec {nap_fd}<> <(:)
nap() {
	local x
	read -r -t "$1" -u "$nap_fd" x
	return 0
}

expect_grep() {   # file pattern
	if has_line "$1" "$2"; then
		echo "ok: output has /$2/"
	else
		echo "FAIL: output lacks /$2/"
		fails=$((fails + 1))
	fi
}

# within WHAT SECS LIMIT: a bound on how long WHAT took.
within() {
	if [ "$2" -le "$3" ]; then echo "ok: $1: ended in $2 s"; else echo "FAIL: $1: took $2 s (bound $3 s)"; fails=$((fails + 1)); fi
}

# finish: exit 1 if a check failed; else 77 (skipped) if a part was skipped
# (part_skipped); else 0.
finish() {
	points_stop
	json_checks_run
	if [ "$fails" -ne 0 ]; then
		echo "$fails check(s) failed"
		exit 1
	fi
	if [ "$skipped" -ne 0 ]; then
		echo "$skipped part(s) skipped (the SKIP lines above): not a pass"
		exit 77
	fi
	exit 0
}

# await WHAT FILE CMD...: CMD again every 0.1 s until it succeeds, for 60 s at most;
# then a failure that names WHAT and shows FILE, the output waited on; returns 1.
await() {
	local what=$1 file=$2 end=$((SECONDS + 60))
	shift 2
	until "$@"; do
		if [ "$SECONDS" -gt "$end" ]; then
			echo "FAIL: $what within 60 s: $file:"
			cat "$file" 2>/dev/null || echo "(no $file)"
			fails=$((fails + 1))
			return 1
		fi
		nap 0.1
	done
}

# await_line FILE REGEX [PID] [SECS]: waits until FILE has a line matching REGEX (grep
# -E), for SECS (60) at most; with PID (not ""), no longer than that process lives (FILE
# is read once more after it ended: its last words count). Else a failure, "FAIL: no
# /REGEX/ within N s", with FILE shown; returns 1. A FILE a background command writes
# must be emptied before that command starts: run_bg does.
await_line() {
	local file=$1 re=$2 pid=${3:-} secs=${4:-60} end ended=
	end=$((SECONDS + secs))
	until has_line "$file" "$re" 2>/dev/null; do
		if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
			has_line "$file" "$re" && return 0
			ended=" (process $pid ended first)"
			break
		fi
		[ "$SECONDS" -gt "$end" ] && break
		nap 0.1
	done
	has_line "$file" "$re" && return 0
	echo "FAIL: no /$re/ within $secs s$ended: $file:"
	cat "$file" 2>/dev/null || echo "(no $file)"
	fails=$((fails + 1))
	return 1
}

# pass_with_losses LABEL N: a run of N messages passed, every one verified, and it had
# to retransmit.
pass_with_losses() {
	expect_eq "$1: exit status" "$rc" 0
	expect_grep "$out" "^result: PASS$"
	expect_eq "$1: verified" "$(field "$out" 'messages verified')" "$2"
	expect_eq "$1: lost" "$(field "$out" 'lost messages')" 0
	local retx
	retx=$(field "$out" retransmissions | sed 's/ .*//')
	[ "${retx:-0}" -gt 0 ] && echo "ok: $1: $retx retransmissions" || { echo "FAIL: $1: no retransmission"; fails=$((fails + 1)); }
}

# wire_ready: the rxeA/rxeB wire (veth vA, vB) and netem are there, with no rule left
# on it; if not, returns 1, the part that needs them skipped (part_skipped: in CI a
# failure).
wire_ready() {
	if [ -n "${RXE_A_DEV:-}" ] && ip link show vA >/dev/null 2>&1 && modprobe sch_netem 2>/dev/null; then
		netem_clear
		return 0
	fi
	part_skipped "no rxeA/rxeB wire (vA) or no netem (run under tools/softroce)"
	return 1
}

# wire_conf FILE JSON: graphs/uc-reliable-wire.conf with this guest's device names and
# its results file at JSON, in FILE.
wire_conf() {
	sed -e "s/\"rxeA\"/\"$RXE_A_DEV\"/g; s/\"rxeB\"/\"$RXE_B_DEV\"/g" \
		-e "s|\"/tmp/rdmapipe-uc-wire.json\"|\"$2\"|" "$(dirname "${BASH_SOURCE[0]}")/graphs/uc-reliable-wire.conf" >"$1"
	grep -qF "\"$2\"" "$1" || { echo "FAIL: wire_conf: no results file to replace in uc-reliable-wire.conf"; fails=$((fails + 1)); }
}

# netem_loss LOSS [DEVS]: netem drops LOSS (e.g. 1%) of the packets at both ends of
# the wire (or at DEVS, e.g. vA), data one way and ACKs the other; netem_off: no more.
# The rules go when the test exits, however it exits.
netem_devs= netem_cleared_on_exit=0
netem_loss() {
	netem_devs=${2:-vA vB}
	[ $netem_cleared_on_exit -eq 1 ] || { on_exit netem_clear; netem_cleared_on_exit=1; }
	local d
	for d in $netem_devs; do tc qdisc add dev "$d" root netem loss "$1"; done
}
netem_off() {
	local d
	for d in $netem_devs; do tc qdisc del dev "$d" root; done
	netem_devs=
}
# netem_clear: no netem rule on either end, whatever was there.
netem_clear() { tc qdisc del dev vA root 2>/dev/null; tc qdisc del dev vB root 2>/dev/null; return 0; }

# expect_no_grep FILE REGEX: FILE can be read and no line of it matches.
expect_no_grep() {
	has_line "$1" "$2"
	case $? in
	1) echo "ok: no '$2'" ;;
	0) echo "FAIL: '$2' in $1"; fails=$((fails + 1)) ;;
	*) echo "FAIL: cannot read $1 to look for '$2'"; fails=$((fails + 1)) ;;
	esac
}
