#!/bin/bash
# The part of tools/bench that runs beside the rxe devices (inside the soft-RoCE
# VM, or on a host with rdma_rxe): every run of tools/bench.d/plan, round after
# round, then the callgrind runs. It only runs things and records them; the host
# side (tools/bench.d/report.py) parses the logs and writes the report.
#
#   inner.sh RUN_DIR      (called by tools/bench through tools/softroce)
#
# Environment: BENCH_ROUNDS, BENCH_QUICK (0/1), BENCH_CALLGRIND (0/1),
# BENCH_BUDGET (seconds this script may take; runs that would not fit are recorded
# as skipped), and tools/softroce's RXE_LOOP_DEV, RXE_LOOP_ADDR, RXE_LOOP_GID and, for
# the callgrind runs of one end per process, its pair RXE_A_DEV/RXE_A_ADDR and
# RXE_B_DEV/RXE_B_ADDR (without them those runs are recorded as skipped).
#
# RUN_DIR/manifest.tsv gets one line per run, written as soon as the run ends, so
# a session cut short still leaves every finished run readable:
#   round case id tool count rc wall_s cpu(user nice system idle iowait irq softirq steal) log cmd timeout_s
# Output on stdout is one short progress line per run: the serial console that
# carries it to the host is slow.
set -uo pipefail

dir=${1:?usage: inner.sh RUN_DIR}
rounds=${BENCH_ROUNDS:-3}
quick=${BENCH_QUICK:-0}
callgrind=${BENCH_CALLGRIND:-1}
budget=${BENCH_BUDGET:-1000}
dev=${RXE_LOOP_DEV:?RXE_LOOP_DEV unset: run me through tools/softroce}
gid=${RXE_LOOP_GID:?RXE_LOOP_GID unset: run me through tools/softroce}
rdmapipe=build/app/rdmapipe/rdmapipe
bare=build/tools/bare-verbs/bare-verbs
plan=tools/bench.d/plan
manifest=$dir/manifest.tsv
logs=$dir/logs

[[ -x $rdmapipe ]] || { echo "bench: $rdmapipe is missing" >&2; exit 3; }
[[ -x $bare ]] || { echo "bench: $bare is missing" >&2; exit 3; }
[[ -r $plan ]] || { echo "bench: $plan is missing" >&2; exit 3; }
mkdir -p "$logs" || exit 3
: >"$manifest" || exit 3

# cg_need: the guest time a callgrind run of 64 B writes normally takes (s), with some
# margin, for fits(); cg_more_need: the same for the runs of both ends, per process
# (the bare loops, unverified and --verify, for cg_more_verbs; rdmapipe's server
# under callgrind for cg_more_verbs and its client under callgrind for cg_end_verbs,
# each against a native peer). Under TCG, rdmapipe's EAL start-up and teardown under
# valgrind alone take about 60 s; then --poll adaptive costs about 0.2 ms per message
# and busy polling about 3.5 ms (valgrind serialises the lcores, and the responder
# spins through its time slices). ib_write_bw takes 10-15 s. Measured: quick 61/60 s
# adaptive, 78/95 s busy; full (write_imm, busy) 137-146 s at 20000, 197-207 s at
# 40000; the bare loops 7-11 s (quick), 8-17 s (full, --verify included). One end
# per process (full counts, its peer's start-up included): a server 29-40 s, a client
# 24-34 s; EAL start-up and teardown under valgrind are most of it.
cg_polls=(adaptive busy)
cg_more_verbs=(write_imm send)
cg_end_verbs=(write write_imm send)
if ((quick)); then
	declare -A count=([msg64]=12000 [big]=250 [atomic]=10000 [lat]=25000)
	run_tmo=40 typical=4
	cg_counts=(2000 4000)
	declare -A cg_need=([pt-2000]=20 [pt-4000]=20 [bare-2000]=15 [bare-4000]=15 [adaptive-2000]=90 [busy-2000]=90
		[adaptive-4000]=100 [busy-4000]=100)
	declare -A cg_more_need=([bare-2000]=15 [bare-4000]=15 [srv-2000]=50 [srv-4000]=50 [cli-2000]=50 [cli-4000]=50)
else
	declare -A count=([msg64]=100000 [big]=2000 [atomic]=100000 [lat]=200000)
	run_tmo=90 typical=10
	cg_counts=(20000 40000)
	declare -A cg_need=([pt-20000]=30 [pt-40000]=30 [bare-20000]=20 [bare-40000]=20 [adaptive-20000]=100 [busy-20000]=160
		[adaptive-40000]=120 [busy-40000]=230)
	declare -A cg_more_need=([bare-20000]=20 [bare-40000]=25 [srv-20000]=60 [srv-40000]=60 [cli-20000]=60 [cli-40000]=60)
fi
# The rounds leave this much of the budget to the callgrind runs of writes, which come
# last; the receive-side verbs' runs come after them and run only if they still fit.
cg_reserve=0
if ((callgrind)); then
	for k in "${!cg_need[@]}"; do cg_reserve=$((cg_reserve + cg_need[$k])); done
fi
eal_run=(-l 0-1 --in-memory --no-pci --log-level=lib.eal:error)
# valgrind cannot follow hugepage mappings; EAL then needs its own memory and no
# shared config.
eal_valgrind=(-l 0-1 --no-huge -m 512 --no-shconf --no-pci --log-level=lib.eal:error)
port=18515
failed=0
tmo=

# ---- facts about this machine, for the report ------------------------------
{
	echo "softroce_mode=${SOFTROCE:-unknown}"
	echo "device=$dev"
	echo "gid_index=$gid"
	echo "addr=${RXE_LOOP_ADDR:-}"
	echo "guest_kernel=$(uname -r)"
	echo "guest_cpus=$(nproc)"
	echo "guest_cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
	echo "guest_mem_kb=$(sed -n 's/^MemTotal:[[:space:]]*\([0-9]*\).*/\1/p' /proc/meminfo)"
	echo "rdmapipe_version=$("$rdmapipe" --version 2>/dev/null | head -1)"
	echo "device_mtu=$(ibv_devinfo -d "$dev" 2>/dev/null | sed -n 's/^[[:space:]]*active_mtu:[[:space:]]*\([0-9]*\).*/\1/p' | head -1)"
	echo "rounds=$rounds"
	echo "quick=$quick"
	for c in "${!count[@]}"; do echo "count_$c=${count[$c]}"; done
	echo "callgrind_counts=${cg_counts[*]}"
	echo "callgrind_polls=${cg_polls[*]}"
	echo "callgrind_more_verbs=${cg_more_verbs[*]}"
	echo "callgrind_end_verbs=${cg_end_verbs[*]}"
	echo "pair=${RXE_A_DEV:-}/${RXE_B_DEV:-}"
	echo "run_timeout=$run_tmo"
} >"$dir/facts.guest" 2>/dev/null

# ---- helpers ----------------------------------------------------------------
cpu_now() { # -> cpu array: user nice system idle iowait irq softirq steal (jiffies)
	local _ c
	read -r _ c </proc/stat
	read -r -a cpu <<<"$c"
	cpu=("${cpu[@]:0:8}")
}
now() { t=${EPOCHREALTIME/,/.}; }

# listening PORT: is a TCP socket listening on PORT? (reads /proc, no forks)
listening() {
	local hex f _ l st
	printf -v hex '%04X' "$1"
	for f in /proc/net/tcp /proc/net/tcp6; do
		[[ -r $f ]] || continue
		while read -r _ l _ st _; do
			[[ $l == *:"$hex" && $st == 0A ]] && return 0
		done <"$f"
	done
	return 1
}

# Waits (bounded, 10 s) for a perftest server's TCP listener on PORT, or for the
# server PID to die; a fixed sleep is too short when the guest is slow.
wait_listening() {
	local i
	for ((i = 0; i < 100; i++)); do
		listening "$1" && break
		kill -0 "$2" 2>/dev/null || break
		sleep 0.1
	done
	sleep 0.2
}

# stop PID GRACE: wait up to GRACE seconds for PID to end, then kill it.
stop() {
	local pid=$1 i
	for ((i = 0; i < $2 * 10; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -TERM "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}

# fits NEED: does a run that normally takes about NEED seconds fit the budget?
fits() { ((SECONDS + $1 <= budget)); }
# bound MAX: a run's timeout, MAX or less so that the run is over (and recorded)
# before the session's own bound cuts everything short.
bound() {
	local left=$((budget - SECONDS))
	((left < 5)) && left=5
	echo $(($1 < left ? $1 : left))
}

# record ROUND CASE ID TOOL COUNT RC WALL LOG CMD...
record() {
	local r=$1 c=$2 id=$3 tool=$4 n=$5 rc=$6 wall=$7 log=$8
	shift 8
	local j d=()
	for j in 0 1 2 3 4 5 6 7; do d+=($((cpu[j] - cpu0[j]))); done
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$c" "$id" "$tool" "$n" "$rc" \
		"$wall" "${d[*]}" "$log" "$*" "${tmo:-}" >>"$manifest"
	tmo=
}

# progress LINE-PREFIX LOG: one line with the figure the report will use.
progress() {
	local fig
	fig=$(awk '
		/message rate:/ {mr=$3} /throughput:/ {tp=$2}
		/^result:/ {res=$2}
		/MsgRate\[Mpps\]/ {bw=1; next}
		bw && NF>=5 && $1 ~ /^[0-9]+$/ {printf "%s Mpps, %s MiB/s", $5, $4; bw=0; found=1}
		/t_typical/ {lat=1; next}
		lat && NF>=9 && $1 ~ /^[0-9]+$/ {printf "typical %s us p99 %s us", $5, $8; lat=0; found=1}
		$1 == "latency" && $2 == "median:" {lm=$3}
		$1 == "latency" && $2 == "p99:" {l99=$3}
		END {
			if (found) exit
			if (lm != "") printf "median %s us p99 %s us, %s", lm, l99, res
			else if (mr != "") printf "%s Mmsg/s, %s Gbit/s, %s", mr, tp, res
		}' "$1" 2>/dev/null)
	echo "$2 ${fig:-no figure}"
}

# perftest ROUND CASE ID COUNT BIN ARGS...: server, then client, both bounded.
perftest() {
	local r=$1 c=$2 id=$3 n=$4 bin=$5
	shift 5
	local args=("$@" -n "$n" -F -d "$dev" -x "$gid")
	local log=$logs/r$r-$id t t0 srv rc i
	tmo=$(bound "$run_tmo") # global: record() reports it
	port=$((port + 1))
	args+=(-p "$port")
	cpu_now
	cpu0=("${cpu[@]}")
	now
	t0=$t
	# Line-buffered, so a run killed by its timeout still shows how far it got.
	timeout -k 5 "$tmo" stdbuf -oL "$bin" "${args[@]}" >"$log.srv" 2>&1 &
	srv=$!
	wait_listening "$port" "$srv"
	timeout -k 5 "$tmo" stdbuf -oL "$bin" "${args[@]}" 127.0.0.1 >"$log.cli" 2>&1
	rc=$?
	# The server ends by itself after a good run; after a failed client it
	# would wait forever.
	stop "$srv" 10
	now
	cpu_now
	record "$r" "$c" "$id" perftest "$n" "$rc" "$(awk -v a="$t0" -v b="$t" 'BEGIN{printf "%.2f", b-a}')" \
		"$log.cli" "$bin ${args[*]} 127.0.0.1"
	((rc == 0)) || failed=$((failed + 1))
	progress "$log.cli" "r$r $id rc=$rc:"
}

# timed ROUND CASE ID TOOL COUNT CMD...: runs one client-side command alone, timed, its
# CPU counted, recorded in the manifest (its log: logs/rROUND-ID.out).
timed() {
	local r=$1 c=$2 id=$3 tool=$4 n=$5
	shift 5
	local log=$logs/r$r-$id.out t t0 rc
	cpu_now
	cpu0=("${cpu[@]}")
	now
	t0=$t
	tmo=$(bound "$run_tmo")
	timeout -k 5 "$tmo" stdbuf -oL "$@" >"$log" 2>&1
	rc=$?
	now
	cpu_now
	record "$r" "$c" "$id" "$tool" "$n" "$rc" "$(awk -v a="$t0" -v b="$t" 'BEGIN{printf "%.2f", b-a}')" \
		"$log" "$*"
	((rc == 0)) || failed=$((failed + 1))
	progress "$log" "r$r $id rc=$rc:"
}

# rdmapipe ROUND CASE ID COUNT ARGS...
rdmapipe() {
	local r=$1 c=$2 id=$3 n=$4
	shift 4
	timed "$r" "$c" "$id" rdmapipe "$n" "$rdmapipe" "${eal_run[@]}" -- "$@" -d "$dev" -n "$n" -q
}

# bare ROUND CASE ID COUNT ARGS...: the bare verbs loop (tools/bare-verbs), the limit.
bare() {
	local r=$1 c=$2 id=$3 n=$4
	shift 4
	timed "$r" "$c" "$id" bare "$n" "$bare" "$@" -d "$dev" -x "$gid" -n "$n"
}

skip() { # ROUND CASE ID TOOL COUNT [WHY]: WHY nopair, else the time budget
	local why="time budget used up" rc=skipped
	[[ ${6:-} == nopair ]] && why="no rxeA/rxeB pair" rc=nopair
	cpu_now
	cpu0=("${cpu[@]}")
	record "$1" "$2" "$3" "$4" "$5" "$rc" 0 - "(not run: $why)"
	failed=$((failed + 1))
	echo "r$1 $3: skipped ($why)"
}

# wait_for_text FILE TEXT PID SEC: until FILE holds TEXT, PID is gone or SEC have passed.
wait_for_text() {
	local i
	for ((i = 0; i < $4 * 10; i++)); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		kill -0 "$3" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# ---- warm-up, not recorded ------------------------------------------------------
# The first DPDK and perftest start-up in a fresh guest reads every library over
# 9p and faults in the first hugepages (one first rdmapipe run took 26 s where
# the later ones took 2-5 s). Pay for that here, so that round 1 is like the others.
warm=$logs/warmup
timeout -k 5 120 "$rdmapipe" "${eal_run[@]}" -- -d "$dev" -n 1000 -q >"$warm-rdmapipe.out" 2>&1 ||
	echo "bench: warm-up rdmapipe run failed (status $?, log $warm-rdmapipe.out)"
port=$((port + 1))
timeout -k 5 60 ib_write_bw -n 1000 -F -d "$dev" -x "$gid" -p "$port" >"$warm-perftest.srv" 2>&1 &
srv=$!
wait_listening "$port" "$srv"
timeout -k 5 60 ib_write_bw -n 1000 -F -d "$dev" -x "$gid" -p "$port" 127.0.0.1 >"$warm-perftest.cli" 2>&1 ||
	echo "bench: warm-up ib_write_bw run failed (log $warm-perftest.cli)"
stop "$srv" 10
echo "bench: warm-up done at $SECONDS s"

# ---- the rounds ---------------------------------------------------------------
mapfile -t lines < <(grep -v '^[[:space:]]*\(#\|$\)' "$plan")
for ((r = 1; r <= rounds; r++)); do
	for line in "${lines[@]}"; do
		read -r -a f <<<"$line"
		c=${f[0]} id=${f[1]} tool=${f[2]} n=${count[${f[3]}]:-}
		[[ -n $n ]] || { echo "bench: $plan: unknown count class ${f[3]}" >&2; exit 3; }
		# Leave room for the callgrind runs: they come last and take longest.
		if ! fits $((typical + cg_reserve)); then
			skip "$r" "$c" "$id" "$tool" "$n"
			continue
		fi
		case $tool in
		perftest) perftest "$r" "$c" "$id" "$n" "${f[@]:4}" ;;
		rdmapipe) rdmapipe "$r" "$c" "$id" "$n" "${f[@]:4}" ;;
		bare) bare "$r" "$c" "$id" "$n" "${f[@]:4}" ;;
		*) echo "bench: $plan: unknown tool $tool" >&2; exit 3 ;;
		esac
	done
done

# ---- callgrind: user-space instructions per message ---------------------------
# Two message counts per program: Ir(n) / n is the figure asked for (startup
# included); (Ir(2n) - Ir(n)) / n is the per-message cost without startup.
# rdmapipe runs the same workload as the ib_write_bw client (plain RDMA WRITE of
# 64 B), once polling without pause (busy) and once with --poll adaptive (an
# lcore sleeps on a completion channel after a run of empty polls). valgrind runs
# one thread at a time, so a busy-polling lcore spends its time slices spinning;
# --separate-threads=yes writes one profile per thread (LOG.callgrind-01, -02, ...;
# LOG.callgrind itself stays empty), so the report can tell the requester lcore's
# instructions from the responder's and from EAL's threads.
cg_rdmapipe() { # VERB POLL N
	local verb=$1 poll=$2 n=$3 id=cg-rp-$1-$2 log=$logs/cg-rp-$1-$2-$3 t t0 rc f nf
	local app=(-v "$verb" -s 64)
	[[ $poll == busy ]] || app+=(--poll "$poll")
	local cmd=(valgrind --tool=callgrind --fair-sched=yes --separate-threads=yes --callgrind-out-file="$log.callgrind"
		"$rdmapipe" "${eal_valgrind[@]}" -- "${app[@]}" -d "$dev" -n "$n" -q)
	cpu_now
	cpu0=("${cpu[@]}")
	now
	t0=$t
	tmo=$(bound $((quick ? 400 : 600)))
	timeout -k 10 "$tmo" "${cmd[@]}" >"$log.out" 2>&1
	rc=$?
	now
	cpu_now
	record cg callgrind "$id" rdmapipe "$n" "$rc" "$(awk -v a="$t0" -v b="$t" 'BEGIN{printf "%.2f", b-a}')" \
		"$log.out" "${cmd[*]}"
	((rc == 0)) || failed=$((failed + 1))
	[[ -s $log.callgrind ]] || rm -f "$log.callgrind"
	nf=0
	for f in "$log".callgrind-*; do [[ -f $f ]] && nf=$((nf + 1)); done
	echo "callgrind rdmapipe -v $verb $poll -n $n rc=$rc: $(sed -n 's/.*Collected : //p' "$log.out") Ir, $nf thread profile(s), $(awk -v a="$t0" -v b="$t" 'BEGIN{printf "%.0f", b-a}') s"
}
cg_perftest() { # N
	local n=$1 log=$logs/cg-ib_write_bw-$1 t t0 rc srv i
	port=$((port + 1))
	local args=(-s 64 -n "$n" -F -d "$dev" -x "$gid" -p "$port")
	local cmd=(valgrind --tool=callgrind --fair-sched=yes --callgrind-out-file="$log.callgrind"
		ib_write_bw "${args[@]}" 127.0.0.1)
	cpu_now
	cpu0=("${cpu[@]}")
	now
	t0=$t
	timeout -k 5 "$(bound 400)" ib_write_bw "${args[@]}" >"$log.srv" 2>&1 &
	srv=$!
	wait_listening "$port" "$srv"
	tmo=$(bound 300)
	timeout -k 10 "$tmo" "${cmd[@]}" >"$log.out" 2>&1
	rc=$?
	stop "$srv" 10
	now
	cpu_now
	record cg callgrind cg-ib_write_bw perftest "$n" "$rc" "$(awk -v a="$t0" -v b="$t" 'BEGIN{printf "%.2f", b-a}')" \
		"$log.out" "${cmd[*]}"
	((rc == 0)) || failed=$((failed + 1))
	echo "callgrind ib_write_bw -n $n rc=$rc: $(sed -n 's/.*Collected : //p' "$log.out") Ir, $(awk -v a="$t0" -v b="$t" 'BEGIN{printf "%.0f", b-a}') s"
}

# One end per process: rdmapipe's server (END srv: the responder) or client (END cli:
# the requester) under callgrind on rxeB or rxeA, its peer native on the other device
# of the pair (rdma_cm over the veth wire). valgrind runs one thread at a time, so in
# one process an lcore spins through its time slices while the other works; here the
# end measured is the slow one and always has work. With -l 1 (server) or -l 0
# (client) the end is the main thread. Its log: logs/cg-rp-VERB-END-N.out, the peer's
# LOG.peer.
cg_end() { # END VERB N
	local end=$1 verb=$2 n=$3 id=cg-rp-$2-$1 log=$logs/cg-rp-$2-$1-$3 t t0 rc prc pid f nf
	port=$((port + 1))
	# --connect-timeout: how long either side waits to connect (default 10 s); a native
	# server must outwait its client's EAL start-up under valgrind (about a minute).
	local app=(-v "$verb" -s 64 -n "$n" --connect-timeout 240 --stall-timeout 240)
	local srv=(--listen "$RXE_B_ADDR:$port" -d "$RXE_B_DEV" "${app[@]}")
	local cli=(--peer "$RXE_B_ADDR:$port" --local "$RXE_A_ADDR" -d "$RXE_A_DEV" "${app[@]}")
	local vg=(valgrind --tool=callgrind --fair-sched=yes --separate-threads=yes --callgrind-out-file="$log.callgrind")
	local eal_vg=(--no-huge -m 512 --no-shconf --no-pci --log-level=lib.eal:error)
	local eal_nat=(--in-memory --no-pci --log-level=lib.eal:error)
	local first second first_out second_out
	if [[ $end == srv ]]; then
		first=("${vg[@]}" "$rdmapipe" -l 1 "${eal_vg[@]}" -- "${srv[@]}") first_out=$log.out
		second=("$rdmapipe" -l 0 "${eal_nat[@]}" -- "${cli[@]}") second_out=$log.peer
	else
		first=("$rdmapipe" -l 1 "${eal_nat[@]}" -- "${srv[@]}") first_out=$log.peer
		second=("${vg[@]}" "$rdmapipe" -l 0 "${eal_vg[@]}" -- "${cli[@]}") second_out=$log.out
	fi
	cpu_now
	cpu0=("${cpu[@]}")
	now
	t0=$t
	tmo=$(bound $((quick ? 400 : 600)))
	# The server first; the client once it listens (EAL start-up under valgrind takes
	# about a minute: bounded at 3).
	timeout -k 10 "$tmo" "${first[@]}" >"$first_out" 2>&1 &
	pid=$!
	if wait_for_text "$first_out" "waiting for" "$pid" 180; then
		timeout -k 10 "$tmo" "${second[@]}" >"$second_out" 2>&1
		prc=$?
	else
		echo "bench: the server of $id -n $n did not listen (log $first_out)" >"$second_out"
		prc=listen
	fi
	# After a good client the server ends by itself (under valgrind: once its profile is
	# written); after a failed one it would wait for its timeout.
	if [[ $prc == 0 ]]; then
		wait "$pid"
	else
		stop "$pid" 30
	fi
	rc=$?
	[[ $end == cli ]] && { local x=$rc; rc=$prc prc=$x; }
	# rc: the end under callgrind; a peer that failed fails the run too.
	[[ $rc == 0 && $prc != 0 ]] && rc=peer$prc
	now
	cpu_now
	record cg callgrind "$id" rdmapipe "$n" "$rc" "$(awk -v a="$t0" -v b="$t" 'BEGIN{printf "%.2f", b-a}')" \
		"$log.out" "${first[*]} & ${second[*]}"
	[[ $rc == 0 ]] || failed=$((failed + 1))
	[[ -s $log.callgrind ]] || rm -f "$log.callgrind"
	nf=0
	for f in "$log".callgrind-*; do [[ -f $f ]] && nf=$((nf + 1)); done
	echo "callgrind rdmapipe -v $verb $end -n $n rc=$rc: $(sed -n 's/.*Collected : //p' "$log.out") Ir, $nf thread profile(s), $(awk -v a="$t0" -v b="$t" 'BEGIN{printf "%.0f", b-a}') s"
}

# The bare loop at the same counts: the per-message floor, start-up aside. Its ends are
# the inclusive costs of bare_send_side and bare_recv_side, and the receiver's work
# after a non-empty poll that of bare_recv_work (report.py reads them).
# VERIFY --verify: the sender stamps and the receiver checks every message, as
# rdmapipe does (ID cg-bare-VERB-verify).
cg_bare() { # VERB N [--verify]
	local verb=$1 n=$2 v=${3:-} id=cg-bare-$1${3:+-verify} log=$logs/cg-bare-$1${3:+-verify}-$2 t t0 rc
	local cmd=(valgrind --tool=callgrind --fair-sched=yes --callgrind-out-file="$log.callgrind"
		"$bare" -v "$verb" -s 64 -d "$dev" -x "$gid" -n "$n" ${v:+"$v"})
	cpu_now
	cpu0=("${cpu[@]}")
	now
	t0=$t
	tmo=$(bound 300)
	timeout -k 10 "$tmo" "${cmd[@]}" >"$log.out" 2>&1
	rc=$?
	now
	cpu_now
	record cg callgrind "$id" bare "$n" "$rc" "$(awk -v a="$t0" -v b="$t" 'BEGIN{printf "%.2f", b-a}')" \
		"$log.out" "${cmd[*]}"
	((rc == 0)) || failed=$((failed + 1))
	echo "callgrind bare-verbs -v $verb${v:+ $v} -n $n rc=$rc: $(sed -n 's/.*Collected : //p' "$log.out") Ir, $(awk -v a="$t0" -v b="$t" 'BEGIN{printf "%.0f", b-a}') s"
}

if ((callgrind)); then
	if ! command -v valgrind >/dev/null; then
		echo "bench: valgrind is not installed: no callgrind figures" >&2
		for n in "${cg_counts[@]}"; do
			record cg callgrind cg-ib_write_bw perftest "$n" novalgrind 0 - "(valgrind not installed)"
			record cg callgrind cg-bare-write bare "$n" novalgrind 0 - "(valgrind not installed)"
			for poll in "${cg_polls[@]}"; do
				record cg callgrind "cg-rp-write-$poll" rdmapipe "$n" novalgrind 0 - "(valgrind not installed)"
			done
			for verb in "${cg_more_verbs[@]}"; do
				record cg callgrind "cg-bare-$verb" bare "$n" novalgrind 0 - "(valgrind not installed)"
				record cg callgrind "cg-bare-$verb-verify" bare "$n" novalgrind 0 - "(valgrind not installed)"
				record cg callgrind "cg-rp-$verb-srv" rdmapipe "$n" novalgrind 0 - "(valgrind not installed)"
			done
			for verb in "${cg_end_verbs[@]}"; do
				record cg callgrind "cg-rp-$verb-cli" rdmapipe "$n" novalgrind 0 - "(valgrind not installed)"
			done
		done
		failed=$((failed + 1))
	else
		# In order of importance: the target is judged on the adaptive run at the
		# lower count, so when time runs short, the runs skipped are the busy ones
		# and those at the higher count.
		cg_t0=$SECONDS
		for n in "${cg_counts[@]}"; do
			if fits "${cg_need[bare-$n]}"; then cg_bare write "$n"; else skip cg callgrind cg-bare-write bare "$n"; fi
			if fits "${cg_need[pt-$n]}"; then cg_perftest "$n"; else skip cg callgrind cg-ib_write_bw perftest "$n"; fi
			for poll in "${cg_polls[@]}"; do
				if fits "${cg_need[$poll-$n]}"; then
					cg_rdmapipe write "$poll" "$n"
				else
					skip cg callgrind "cg-rp-write-$poll" rdmapipe "$n"
				fi
			done
		done
		# Then both ends, each program at both counts (a steady state needs the pair):
		# the bare loops first, they are cheap, unverified and --verify; then rdmapipe's
		# responder (its server under callgrind), the issue's figure, then its requester
		# (its client under callgrind), each against a native peer on the rxeA/rxeB pair.
		for verb in "${cg_more_verbs[@]}"; do
			for v in "" --verify; do
				for n in "${cg_counts[@]}"; do
					if fits "${cg_more_need[bare-$n]}"; then
						cg_bare "$verb" "$n" $v
					else
						skip cg callgrind "cg-bare-$verb${v:+-verify}" bare "$n"
					fi
				done
			done
		done
		for end in srv cli; do
			if [[ $end == srv ]]; then verbs=("${cg_more_verbs[@]}"); else verbs=("${cg_end_verbs[@]}"); fi
			for verb in "${verbs[@]}"; do
				for n in "${cg_counts[@]}"; do
					if [[ -z ${RXE_A_DEV:-} || -z ${RXE_B_DEV:-} || -z ${RXE_A_ADDR:-} || -z ${RXE_B_ADDR:-} ]]; then
						skip cg callgrind "cg-rp-$verb-$end" rdmapipe "$n" nopair
					elif fits "${cg_more_need[$end-$n]}"; then
						cg_end "$end" "$verb" "$n"
					else
						skip cg callgrind "cg-rp-$verb-$end" rdmapipe "$n"
					fi
				done
			done
		done
		echo "bench: callgrind runs took $((SECONDS - cg_t0)) s"
	fi
fi

echo "bench: guest part done in $SECONDS s, $failed run(s) failed or skipped"
((failed == 0))
