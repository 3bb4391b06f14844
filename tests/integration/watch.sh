#!/usr/bin/env bash
# Watching a run on rxe: --stats-period prints a line per flow every period, then the
# summary; DPDK telemetry answers /rdmapipe/... from a running instance (queried with
# dpdk-telemetry.py); the console (-i), driven through a pseudo-terminal, shows stats,
# changes a flow's rate and batch, pauses and resumes, refuses bad input with a hint,
# and quit ends the run with its summary.
. "$(dirname "$0")/lib.sh"
need_device
export TESTDIR
TESTDIR=$(cd "$(dirname "$0")" && pwd)   # pty_console.py
out=$(mktemp)

# --stats-period: lines while it runs, progress towards the count, then the summary.
# Paced, so that the run lasts 2 s (4 periods) on a guest of any speed.
run_rdmapipe "$out" -d "$DEV" -n 30000 --rate 15000 -Q 1,2 --stats-period 0.5
expect_eq "stats-period: exit status" "$rc" 0
lines=$(grep -c "^stats at [0-9.]* s:$" "$out")
[ "$lines" -ge 2 ] && echo "ok: $lines stats blocks" || { echo "FAIL: $lines stats blocks (want 2 or more)"; fails=$((fails + 1)); }
expect_grep "$out" "^  flow1 +[0-9.]+ Mmsg/s +[0-9.]+ Gbit/s  outstanding [0-9]+  errors 0  [0-9]+ of 30000 \([0-9.]+%\)$"
expect_grep "$out" "^result: PASS$"
# The port's own counters over the run (rxe counts packets, RNR NAKs, retries, ...).
expect_grep "$out" "^  port counters: +.*sent_pkts [0-9]+"
# A stats block comes before the summary, none after it.
awk '/^summary:/ { s = 1 } /^stats at/ && s { bad = 1 } END { exit bad }' "$out" && echo "ok: stats lines end before the summary" ||
	{ echo "FAIL: a stats line after the summary"; fails=$((fails + 1)); }

# The relay and QP sharing print their stats lines too: both relayed flows, a flow per lane.
conf_dir=$(cd "$(dirname "$0")/../../conf" && pwd)
c=$(mktemp --suffix=.conf)
sed "s/\"rxe0\"/\"$DEV\"/g" "$conf_dir/relay.conf" >"$c"
EAL_LCORES='--lcores (0-2)@(0-1)'
run_rdmapipe "$out" -f "$c" --stats-period 0.5
EAL_LCORES=
expect_eq "relay with stats lines: exit status" "$rc" 0
expect_grep "$out" "^  in +[0-9.]+ Mmsg/s .* of 40000 \([0-9.]+%\)$"
expect_grep "$out" "^  out +[0-9.]+ Mmsg/s .* of 40000 \([0-9.]+%\)$"
sed "s/\"rxe0\"/\"$DEV\"/g; s/messages = 40000;/messages = 200000;/" "$conf_dir/qp-share.conf" >"$c"
run_rdmapipe "$out" -f "$c" --stats-period 0.5
expect_eq "QP sharing with stats lines: exit status" "$rc" 0
expect_grep "$out" "^  shared@lcore1 +[0-9.]+ Mmsg/s .* of 100000 \([0-9.]+%\)$"
rm -f "$c"

# Telemetry from a running instance: its own runtime directory, so the socket is known.
TEL=${DPDK_TELEMETRY:-dpdk-telemetry.py}
if ! command -v "$TEL" >/dev/null; then
	echo "FAIL: $TEL not found (Debian package dpdk-dev)"; fails=$((fails + 1))
else
	prefix=rptel$$
	# A run that lasts until the test stops it (SIGINT, once every question below has
	# its answer): the checks wait for what they need, never for a run of fixed length
	# to end (an 8 s run once ended before a busy guest had answered; under load a
	# Python start alone takes seconds there). -t 600 and the timeout only bound a test
	# gone wrong.
	# shellcheck disable=SC2046
	run_bg "$out" timeout -k 5 660 "$RDMAPIPE" $(eal_args | sed 's/--in-memory//') --file-prefix $prefix -- -d "$DEV" -t 600 -Q 1,1 \
		--rate 20000
	pid=$bg_pid
	tel=$(mktemp)
	# EAL's init, the telemetry socket among it, is done once the run says it runs.
	if await_line "$out" "^rdmapipe: running" $pid 120; then
		# One connection, as dpdk-telemetry.py makes (the same socket and messages),
		# kept for every question: /rdmapipe/stats and /stages until both flows have
		# completed messages, published by their stages, and the run is half a second
		# old, then every endpoint once.
		python3 - "/var/run/dpdk/$prefix/dpdk_telemetry.v2" >"$tel" 2>&1 <<'PY' && echo "ok: telemetry answers with both flows running" ||
import json, socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
hello = json.loads(s.recv(1024))
def ask(q):
    s.send(q.encode())
    return json.loads(s.recv(hello['max_output_len']))
end = time.monotonic() + 60
while True:
    st = ask('/rdmapipe/stats')['/rdmapipe/stats']
    # A busy lcore publishes its stages' counters every 1024 loop iterations (lcore_loop):
    # at 20000 msg/s in batches of 32, a second or more after the first messages.
    sg = ask('/rdmapipe/stages')['/rdmapipe/stages']
    if (float(st['elapsed_s']) > 0.5 and all(st.get(f, {}).get('completed', 0) > 0 for f in ('flow0', 'flow1'))
            and all(sg.get(f'{f}_tx', {}).get('calls', 0) > 0 for f in ('flow0', 'flow1'))):
        break
    assert time.monotonic() < end, f'60 s and the flows are not both running: {st} {sg}'
    time.sleep(0.2)
for q in ('/rdmapipe/stats', '/rdmapipe/stats,flow0', '/rdmapipe/flows', '/rdmapipe/lcores', '/rdmapipe/config', '/rdmapipe/stages'):
    print(json.dumps(ask(q)))
PY
			{ echo "FAIL: telemetry did not answer with both flows running:"; cat "$tel"; fails=$((fails + 1)); }
		# dpdk-telemetry.py itself, as docs/console.md shows it (a new connection).
		echo /rdmapipe/config | timeout 60 "$TEL" -f $prefix >"$tel.py" 2>&1
		expect_grep "$tel.py" '^\{"/rdmapipe/config": \{.*"device"'
		rm -f "$tel.py"
	fi
	# To timeout, which passes it to rdmapipe and then to its process group: rdmapipe
	# gets SIGINT twice at once, one stop (a second one a second later would end it).
	kill -INT $pid
	wait $pid
	rc=$?
	echo "--- telemetry replies"; cat "$tel"
	echo "--- the run, stopped by SIGINT"; cat "$out"
	expect_eq "telemetry run, stopped by SIGINT: exit status" "$rc" 130
	expect_grep "$out" "^result: INTERRUPTED$"
	expect_eq "telemetry run: payload errors" "$(field "$out" 'payload errors')" 0
	python3 - "$tel" <<'PY' && echo "ok: telemetry replies" || { echo "FAIL: telemetry replies"; fails=$((fails + 1)); }
import json, sys
replies = {}
for line in open(sys.argv[1]):
    line = line.strip()
    if line.startswith('{'):
        d = json.loads(line)
        for k, v in d.items():
            replies.setdefault(k, []).append(v)
stats = replies['/rdmapipe/stats']
assert float(stats[0]['elapsed_s']) > 0.5, stats
for f in ('flow0', 'flow1'):
    assert stats[0][f]['sent'] > 0 and stats[0][f]['completed'] > 0, stats
    assert float(stats[0][f]['msg_per_s']) > 0
assert set(stats[1]) == {'elapsed_s', 'flow0'}, stats[1]        # /rdmapipe/stats,flow0
flows = replies['/rdmapipe/flows'][0]
assert flows['flow0']['qps'] == 1 and flows['flow1']['rate_limit_msg_per_s'] == 20000, flows
lc = replies['/rdmapipe/lcores'][0]
roles = sorted(v['role'] for k, v in lc.items() if k.startswith('lcore'))
assert roles == ['requester', 'responder'], lc
# Each flow's send pool, named as telemetry allows (write_imm receives need no pool).
assert lc['flow0_send_buffers_in_use'] >= 0 and lc['flow1_send_buffers_in_use'] >= 0, lc
assert replies['/rdmapipe/config'][0]['device'], replies['/rdmapipe/config']
stages = replies['/rdmapipe/stages'][0]
assert set(stages) == {'flow0_tx', 'flow0_rx', 'flow1_tx', 'flow1_rx'}, stages
assert stages['flow0_tx']['kind'] == 'rdma_tx' and stages['flow0_tx']['calls'] > 0 and stages['flow0_tx']['objects'] > 0, stages
assert 'busy_cycles' not in stages['flow0_tx'], stages   # counted only with --stage-cycles
PY
	rm -f "$tel"
	rmdir "/var/run/dpdk/$prefix" 2>/dev/null
fi

# The console through a pseudo-terminal: three lcores (the console takes the main one;
# on the VM's 2 CPUs, mapped onto both).
python3 - "$RDMAPIPE" "$DEV" "$(eal_args | sed 's/-l 0-1/--lcores (0-2)@(0-1)/')" <<'PY' && echo "ok: console" || { echo "FAIL: console"; fails=$((fails + 1)); }
import os, re, sys, time
sys.path.insert(0, os.environ['TESTDIR'])
from pty_console import Console
binary, dev, eal = sys.argv[1], sys.argv[2], sys.argv[3].split()
c = Console([binary] + eal + ['--', '-i', '-d', dev, '-t', '60', '-Q', '1,1', '--rate', '50000'])
read_until, cmd = c.read_until, c.cmd
read_until(r'rdmapipe console: help lists the commands')
read_until(r'rdmapipe> ')
sent = lambda s: int(re.search(r'sent (\d+)', s).group(1))
c.poll('show stats flow flow1', r'since start\)', lambda s: sent(s) > 0)
cmd('show stats', r'flow1 +[0-9.]+ Mmsg/s')
cmd('set rate flow0 2000', r'flow flow0: at most 2000 msg/s')
cmd('show flows', r'flow0 +RDMA_WRITE_WITH_IMM, 64 B, 1 QP, batch 32, signal every 32, for the run.s duration, rate limit 2000 msg/s')
cmd('set batch flow1 8', r'flow flow1: chains of at most 8 WRs')
cmd('set rate flow0 fast', r"set rate: 'fast' is not a rate")
cmd('set batch flow1 4096', r'set batch: 4096 is outside 1..32')
# Line editing as typed at a terminal (docs/console.md's keys): the edited line runs.
cmd('set rate flow0 9\x15set rate flow0 2500', r'flow flow0: at most 2500 msg/s')       # C-u
cmd('set rate flow0 2500\x172600', r'flow flow0: at most 2600 msg/s')                   # C-w
cmd('rate flow0 270\x01set \x050', r'flow flow0: at most 2700 msg/s')                  # C-a, C-e
cmd('\x1b[A\x172800', r'flow flow0: at most 2800 msg/s')                               # up: the last line
cmd('\x1b[A\x1b[A', r'flow flow0: at most 2700 msg/s')                                 # up twice
cmd('show stats flow flow0', r'rate limit 2700 msg/s')
cmd('launch the missiles', r"unknown command or arguments: 'launch the missiles' \(help lists")
cmd('stop', r'stopped: the senders post nothing new')
# Stopped: once a burst under way has gone, nothing new is posted for a whole second.
s2 = c.held('show stats flow flow1', r'since start\)', sent)   # stopped: nothing new was posted
cmd('start', r'started: the senders post again')
c.poll('show stats flow flow1', r'since start\)', lambda s: sent(s) > sent(s2), timeout=10)
cmd('show stats all', r'counters since the start: .*sent_pkts \d+')
cmd('show qps', r'qp_num')
cmd('show pools', r'buffers of 64 B')
cmd('show stages', r'flow1_rx +rdma_rx +lcore 1 +calls [1-9][0-9]* +objects [1-9][0-9]*')
c.type('quit')
tail = read_until(r'result: (PASS|FAIL)', timeout=30)
print(tail)
assert 'result: PASS' in tail, tail
assert c.exit_status() == 0
PY

# The console on a run whose responder sleeps (a plain write's: passive, on the run's
# bell): quit ends the 60 s run at once, the sleeping lcore woken by it.
python3 - "$RDMAPIPE" "$DEV" "$(eal_args | sed 's/-l 0-1/--lcores (0-2)@(0-1)/')" <<'PY' && echo "ok: console on a passive responder" || { echo "FAIL: console on a passive responder"; fails=$((fails + 1)); }
import os, re, sys, time
sys.path.insert(0, os.environ['TESTDIR'])
from pty_console import Console
binary, dev, eal = sys.argv[1], sys.argv[2], sys.argv[3].split()
c = Console([binary] + eal + ['--', '-i', '-d', dev, '-v', 'write', '-t', '60'])
c.read_until(r'rdmapipe> ')
c.poll('show stats flow flow0', r'since start\)', lambda s: int(re.search(r'sent (\d+)', s).group(1)) > 0)
t0 = time.monotonic()
c.type('quit')
tail = c.read_until(r'result: (PASS|FAIL)', timeout=30)
print(tail)
assert 'result: PASS' in tail, tail
assert re.search(r'passive: slept [0-9]+ times? until its end', tail), tail
assert time.monotonic() - t0 < 30
assert c.exit_status() == 0
PY

# The console on a pipeline of rings (conf/relay.conf as a 60 s run): quit ends the 60 s
# flow, and the relayed flow, fed from it with no count of its own, sends what is left
# until its input ends; everything sent is verified. The stages keep lcores 0-2, so
# the console's main lcore is a fourth.
c=$(mktemp --suffix=.conf)
sed "s/\"rxe0\"/\"$DEV\"/g; s/messages = 40000;/duration = 60;/" "$conf_dir/relay.conf" >"$c"
python3 - "$RDMAPIPE" "$c" "$(eal_args | sed 's/-l 0-1/--lcores (0-3)@(0-1) --main-lcore 3/')" <<'PY' && echo "ok: console on a relay" || { echo "FAIL: console on a relay"; fails=$((fails + 1)); }
import os, re, sys, time
sys.path.insert(0, os.environ['TESTDIR'])
from pty_console import Console
binary, conf, eal = sys.argv[1], sys.argv[2], sys.argv[3].split()
c = Console([binary] + eal + ['--', '-i', '-f', conf])
read_until = c.read_until
read_until(r'rdmapipe> ')
c.poll('show stages', r'verify +verify +lcore 0 +calls [0-9]+ +objects [0-9]+',
       lambda s: re.search(r'verify +verify +lcore 0 +calls [1-9][0-9]* +objects [1-9][0-9]*', s))
c.type('quit')
tail = read_until(r'result: (PASS|FAIL)', timeout=60)
print(tail)
assert 'result: PASS' in tail, tail
m = re.search(r'flow out: .* sent (\d+), completed (\d+), received (\d+), verified (\d+) \(sends what its ring brings\)', tail)
assert m and int(m.group(1)) > 0 and len(set(m.groups())) == 1, tail
assert c.exit_status() == 0
PY
rm -f "$c" "$out"
finish
