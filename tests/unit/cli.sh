#!/usr/bin/env bash
# The binary's command line on the host, no RDMA needed: help, bad app and EAL arguments
# print usage and exit 2, and a machine without RDMA gets one clear line and exit 3.
set -u
B=${1:?usage: cli.sh PATH/TO/rdmapipe}
EAL="-l 0-1 --no-huge -m 128 --no-shconf --no-pci --log-level=lib.eal:error"
fails=0
t=$(mktemp)
check() {   # name want_rc pattern cmd...
	local name=$1 want=$2 pat=$3
	shift 3
	timeout 60 "$@" >"$t" 2>&1
	local rc=$?
	if [ "$rc" -ne "$want" ] || ! grep -qE -- "$pat" "$t"; then
		echo "FAIL: $name: exit $rc (want $want), output:"
		cat "$t"
		fails=$((fails + 1))
	else
		echo "ok: $name"
	fi
}
check "--help" 0 "^Usage: rdmapipe \[EAL options\] -- \[options\]" "$B" --help
check "-- --help" 0 "--signal-every N" "$B" -- --help
check "--version" 0 "^rdmapipe [0-9]+\.[0-9]+" "$B" --version
# Built and run here: the DPDK it runs with is the one it was built against.
dpdk_v=$(pkg-config --modversion libdpdk | sed 's/\./\\./g')
check "--version: DPDK" 0 "^DPDK $dpdk_v \(built against $dpdk_v\)$" "$B" --version
check "--version: rdma-core" 0 "^rdma-core [0-9]+\.[0-9]+ \(libibverbs\.so\.1\.[0-9.]+; built against libibverbs [0-9.]+\)$" "$B" --version
check "-- --version" 0 "^rdma-core [0-9]+" "$B" -- --version
check "bad app option" 2 "^rdmapipe: unknown option '--bogus'" "$B" $EAL -- --bogus
check "bad app option shows usage" 2 "^Usage: rdmapipe" "$B" $EAL -- --bogus
check "bad app value" 2 "^rdmapipe: --batch: '0' is not an integer in 1..512" "$B" $EAL -- -b 0
# A port that is not one: refused naming the option, before anything runs (it once
# aborted in std::stoul building the two flows' addresses).
check "bad --peer port" 2 "^rdmapipe: --peer: '10.0.0.1:x' is not ADDR:PORT$" "$B" $EAL -- --peer 10.0.0.1:x -Q 1,1 --dump-conf
# --metrics: [IPV4:]PORT, refused naming it otherwise; -t 0: until stopped, as a file
# says it (duration = 0), a ping-pong's too (not another duration).
check "bad --metrics port" 2 "^rdmapipe: --metrics: '70000' is not \[IPV4:\]PORT" "$B" $EAL -- --metrics 70000 --dump-conf
check "bad --metrics address" 2 "^rdmapipe: --metrics: '1.2.3:80' is not \[IPV4:\]PORT" "$B" $EAL -- --metrics 1.2.3:80 --dump-conf
check "--metrics in the file" 0 '^  metrics = "127.0.0.1:9464";$' "$B" $EAL -- --metrics 127.0.0.1:9464 --dump-conf
check "-t 0 in the file" 0 "duration = 0\.0; verify" "$B" $EAL -- -t 0 --dump-conf
check "-t 0 ping-pong" 0 "duration = 0\.0; verify" "$B" $EAL -- -t 0 --pingpong --dump-conf
check "-t 2 ping-pong" 2 "^rdmapipe: --pingpong: give --messages \(iterations\) or -t 0 \(until stopped\), not --duration" "$B" $EAL -- -t 2 --pingpong --dump-conf
check "bad EAL option" 2 "rdmapipe: EAL initialisation failed: .*bad EAL arguments" "$B" --bogus-eal -- -n 1
# Pipeline files: validated before EAL starts, without a device.
conf=$(cd "$(dirname "$0")/../../conf" && pwd)
bad=$(cd "$(dirname "$0")/../conf/bad" && pwd)
check "--check a good file" 0 "default.conf: valid \(schema 1\): 1 device\(s\), 1 pool\(s\), 2 io context\(s\), 1 flow\(s\), 0 ring\(s\), 2 stage\(s\)$" "$B" -l 0-1 --check "$conf/default.conf"
good=$(cd "$(dirname "$0")/../conf/good" && pwd)
check "--check derives io contexts" 0 "^  lcore 0 \(rxe0, io context derived\): send CQ 272, receive CQ 1152, SRQ 1152 \(refill 128\), receive pool 1217 x 1024 B$" "$B" -l 0-1 --check "$good/derived.conf"
check "--check derives pools" 0 "^  flow b: send pool 385 x 4096 B$" "$B" -l 0-1 --check "$good/derived.conf"
check "--check without -l" 0 "lcores not checked \(no -l/-c given\)" "$B" --check "$conf/default.conf"
check "--check a bad file" 2 "^rdmapipe: $bad/batch-zero.conf:10: flows.\[0\].batch: 0 is outside 1..512$" "$B" --check "$bad/batch-zero.conf"
check "--check an lcore outside -l" 2 "default.conf:41: io_contexts.\[0\].lcore: lcore 1 is not in the EAL lcore set \(-l\)$" "$B" -l 0 --check "$conf/default.conf"
check "--check without a file" 2 "^rdmapipe: --check needs a configuration file$" "$B" --check
check "-f with a bad file" 2 "^rdmapipe: $bad/verb-typo.conf:10: flows.\[0\].verb: 'write_imn' is not one of" "$B" -l 0-2 --no-huge -m 128 -- -f "$bad/verb-typo.conf"
# A job of N ranks: checked for the smallest job it takes; run only under a launcher.
check "--check a pattern" 0 "^  pattern all_to_all over the job's ranks: planned for every rank of a job of 2" "$B" -l 0 --check "$conf/job-all-to-all.conf"
check "a pattern without mpirun" 2 "^rdmapipe: .*job-all-to-all.conf:[0-9]+: pattern: a pattern runs on the ranks of a job: launch it with mpirun -np N \(or srun\)$" \
	env -u OMPI_COMM_WORLD_RANK -u PMIX_RANK -u PMI_RANK "$B" $EAL -- -f "$conf/job-all-to-all.conf"
check "a pattern with -i" 2 "pattern runs refuse -i: the ranks of a job have no console each$" "$B" -l 0-1 --no-huge -- -f "$conf/job-all-to-all.conf" -i
check "-f and -v" 2 "^rdmapipe: --config .*: the pipeline file describes the run; '-v' cannot be combined with it$" "$B" $EAL -- -f "$conf/default.conf" -v send
check "-f and --connect (the file's run.connect says it)" 2 "^rdmapipe: --config .*: the pipeline file describes the run; '--connect' cannot be combined with it$" "$B" $EAL -- -f "$conf/default.conf" --connect direct
check "-f missing file" 2 "^rdmapipe: /nonexistent.conf: cannot read the file: No such file or directory$" "$B" $EAL -- -f /nonexistent.conf
# The command line is a pipeline: --dump-conf prints it as a file that --check accepts
# and that says what the options said (here two flows of reads, 8 and 2 QPs, the wr
# post API, adaptive polling on both lcores, a duration).
dump=$(mktemp --suffix=.conf)
check "--dump-conf" 0 "^  \{ name = \"flow1\"; peer = \"loopback\"; transport = \"rc\"; qps = 2; verb = \"read\"; size = 4096;" \
	"$B" -l 0-2 -- -d rxe0 -v read -Q 8,2 -s 4K --post-api wr --poll adaptive -t 2.5 --dump-conf
cp "$t" "$dump"
check "--dump-conf: the file checks" 0 "valid \(schema 1\): 1 device\(s\), 2 pool\(s\), 2 io context\(s\), 2 flow\(s\), 0 ring\(s\), 4 stage\(s\)$" "$B" -l 0-2 --check "$dump"
for want in 'post_api = "wr"' 'duration = 2.5' 'poll = "adaptive"' '{ name = "flow0_tx"; kind = "rdma_tx"; lcore = 2; flow = "flow0"; }' \
	'{ name = "flow0_rx"; kind = "rdma_rx"; lcore = 1; flow = "flow0"; }'; do
	if grep -qF -- "$want" "$dump"; then echo "ok: --dump-conf has $want"; else echo "FAIL: --dump-conf lacks $want"; fails=$((fails + 1)); fi
done
rm -f "$dump"
# The traffic options land in the flow as the file's keys, and the file checks.
dump=$(mktemp --suffix=.conf)
check "--dump-conf: traffic" 0 "^    traffic_class = 98; sl = 3; flow_label = 100; flow_label_spread = true; hop_limit = 17;" \
	"$B" -l 0-1 -- -d rxe0 --tclass 0x62 --sl 3 --flow-label 100 --flow-label-spread --hop-limit 17 --dump-conf
cp "$t" "$dump"
check "--dump-conf: traffic, the file checks" 0 "valid \(schema 1\)" "$B" -l 0-1 --check "$dump"
rm -f "$dump"
check "--dump-conf with -f" 2 "^rdmapipe: --dump-conf: the file is the pipeline already \(-f\)$" "$B" -l 0-1 -- -f "$conf/default.conf" --dump-conf
# What flows through a pipeline's rings is checked before EAL starts: a flow fed by a
# ring sends what it brings, of that size and count, and only with a verb that sends.
relay=$(mktemp --suffix=.conf)
sed 's/{ name = "out"; verb = "send_imm"; size = 256;/{ name = "out"; verb = "send_imm"; size = 128;/' "$conf/relay.conf" >"$relay"
check "fed flow: sizes differ" 2 "^rdmapipe: $relay:21: flows.\[1\].size: flow 'out' sends what its ring brings: 256 B messages \(its size must be that, it is 128\)$" "$B" -l 0-2 --no-huge -m 128 -- -f "$relay"
sed 's/{ name = "out"; verb = "send_imm";/{ name = "out"; verb = "read";/' "$conf/relay.conf" >"$relay"
check "fed flow: a verb that sends nothing" 2 "^rdmapipe: $relay:31: stages.\[3\]: an rdma_tx stage fed by a ring sends the messages it gets: flow 'out' uses read, which sends none$" "$B" -l 0-2 --no-huge -m 128 -- -f "$relay"
sed 's/{ name = "out"; verb = "send_imm"; size = 256; qps = 4; batch = 32;/{ name = "out"; verb = "send_imm"; size = 256; qps = 4; batch = 32; messages = 5;/' "$conf/relay.conf" >"$relay"
check "fed flow: counts differ" 2 "^rdmapipe: $relay:21: flows.\[1\].messages: flow 'out' sends what its ring brings: 40000 messages \(leave messages out, or make it that\)$" "$B" -l 0-2 --no-huge -m 128 -- -f "$relay"
sed 's/{ name = "in"; verb = "send_imm";/{ name = "in"; verb = "write_imm";/' "$conf/relay.conf" >"$relay"
check "rdma_rx handing on a verb without buffers" 2 "^rdmapipe: $relay:29: stages.\[1\]: an rdma_rx stage hands received buffers on: flow 'in' uses write_imm, which fills no receive buffer \(use send or send_imm\)$" "$B" -l 0-2 --no-huge -m 128 -- -f "$relay"
rm -f "$relay"
check "one lcore" 2 "needs 2 lcores" "$B" -l 0 --no-huge -m 128 --no-shconf --no-pci -- -n 1
# The command line's pipeline through the one validator, before any device: a rule of
# the file's keys, refused naming the option that set the key; --dump-conf prints only
# what a run would take.
check "a validator's rule names the option" 2 "^rdmapipe: --sq-depth: send queue depth 100 is below 2 x signal_every \(128\)$" \
	"$B" -l 0-1 --no-huge -m 128 --no-shconf --no-pci --log-level=lib.eal:error -- -S 64 --sq-depth 100 -n 1
check "--dump-conf of a refused pipeline" 2 "^rdmapipe: --sq-depth: send queue depth 100" "$B" -- -S 64 --sq-depth 100 --dump-conf
# A sweep whose largest size needs more than the receiver's 2 GiB.
check "a sweep past 2 GiB" 2 "^rdmapipe: the command line's pipeline \(--dump-conf prints it\): flows\.\[0\]: window x size x qps is 1099511627776 bytes" \
	"$B" -l 0-1 --no-huge -m 128 --no-shconf --no-pci --log-level=lib.eal:error -- -s 64,1G -n 1
if [ -z "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
	# A runtime directory of its own: other tests' EAL (in parallel) use the default one.
	prefix=rpcli$$
	check "no RDMA device" 3 "^rdmapipe: no RDMA device: this kernel has no RDMA support" "$B" $EAL --file-prefix $prefix -- -n 1
	check "no RDMA device: how to get one" 3 "^  No RDMA hardware\? Run on soft-RoCE: tools/softroce -- rdmapipe" "$B" $EAL --file-prefix $prefix -- -n 1
	# ...and leaves no EAL runtime files behind.
	if [ -n "$(ls -A /var/run/dpdk/$prefix 2>/dev/null)" ]; then
		echo "FAIL: EAL files left in /var/run/dpdk/$prefix: $(ls -A /var/run/dpdk/$prefix)"; fails=$((fails + 1))
	fi
	rmdir /var/run/dpdk/$prefix 2>/dev/null
else
	check "unknown device" 3 "^rdmapipe: device 'nosuchdev0' not found" "$B" $EAL -- -d nosuchdev0 -n 1
fi
# Logging through rte_log: a log type per layer, picked out by EAL's --log-level, to
# stderr. Without a device the run ends at opening one (exit 3), after these lines.
prefix=rplog$$
LOGEAL="$EAL --file-prefix $prefix"
check "log type rdmapipe.app at debug" 3 "^rdmapipe: EAL up: 2 lcores, main lcore 0, a pipeline from the command line$" \
	"$B" $LOGEAL --log-level=rdmapipe.app:debug -- -d nosuchdev0 -n 1
check "log types by pattern" 3 "^rdmapipe: \(command line\): flow 'flow0': write_imm, 64 B, 1 QP, RC, batch 32, peer loopback$" \
	"$B" $LOGEAL '--log-level=rdmapipe.*:debug' -- -d nosuchdev0 -n 1
"$B" $LOGEAL -- -d nosuchdev0 -n 1 >"$t.out" 2>"$t.err"
if grep -q "EAL up" "$t.out" "$t.err"; then
	echo "FAIL: debug lines by default:"; cat "$t.err"; fails=$((fails + 1))
elif ! grep -qE "^rdmapipe: (no RDMA device|device 'nosuchdev0' not found)" "$t.err" || grep -q "^rdmapipe:" "$t.out"; then
	echo "FAIL: the error is not on stderr alone: stdout:"; cat "$t.out"; echo "stderr:"; cat "$t.err"; fails=$((fails + 1))
else
	echo "ok: no debug lines by default, the error on stderr"
fi
rmdir /var/run/dpdk/$prefix 2>/dev/null
rm -f "$t" "$t.out" "$t.err"
[ "$fails" -eq 0 ] && echo "cli: all checks passed" && exit 0
echo "cli: $fails check(s) failed"
exit 1
