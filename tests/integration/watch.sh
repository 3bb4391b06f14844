#!/usr/bin/env bash
# Watching a run on rxe: --stats-period prints a line per flow every period, then the
# summary; a run that goes on until stopped (-t 0) answers DPDK telemetry's
# /rdmapipe/... (queried with dpdk-telemetry.py) and serves --metrics to a real
# Prometheus server scraping it every second (its HTTP API answers rate(),
# histogram_quantile(), a hw_counter and the build's info; promtool finds nothing to say
# of a scrape), then SIGTERM ends it with its summary, results and exit 0; the console
# (-i), driven through a pseudo-terminal, shows stats, changes a flow's rate and batch,
# pauses and resumes, refuses bad input with a hint, and quit ends the run with its
# summary.
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

# Prometheus's answers about the running instance (its HTTP API, from one Python): it
# waits, bounded, until the rate of completed messages is above 0 for both flows (two
# scrapes of them, the first some 6 s after the server started), then asks for the
# p99 of the completion latency, a port's hw_counter and the build's info; and
# promtool checks one scrape of the endpoint.
prometheus_checks() {
	curl -sf http://127.0.0.1:19464/metrics >"$prom_dir/scrape" || { echo "FAIL: no scrape from --metrics"; fails=$((fails + 1)); }
	if promtool check metrics <"$prom_dir/scrape" >"$prom_dir/lint" 2>&1; then
		echo "ok: promtool check metrics: nothing to say"
	else
		echo "FAIL: promtool check metrics:"; cat "$prom_dir/lint"; fails=$((fails + 1))
	fi
	python3 - "$DEV" <<-'PY' && echo "ok: Prometheus scraped the run" || { echo "FAIL: Prometheus's answers"; cat "$prom_dir/log"; fails=$((fails + 1)); }
		import json, sys, time, urllib.parse, urllib.request
		dev = sys.argv[1]
		def q(expr):
		    url = 'http://127.0.0.1:19090/api/v1/query?' + urllib.parse.urlencode({'query': expr})
		    r = json.load(urllib.request.urlopen(url, timeout=10))
		    assert r['status'] == 'success', r
		    return {s['metric'].get('flow', ''): float(s['value'][1]) for s in r['data']['result']}
		end = time.monotonic() + 90
		while True:
		    try:
		        rate = q('rate(rdmapipe_flow_messages_completed_total[5s])')
		    except OSError:   # not listening yet
		        rate = {}
		    if len(rate) == 2 and all(v > 0 for v in rate.values()):
		        break
		    assert time.monotonic() < end, f'90 s and no rate of both flows: {rate}'
		    time.sleep(0.5)
		print('rate of completed messages:', rate)
		verified = q('rate(rdmapipe_flow_messages_verified_total[5s])')   # at the responder, every payload checked
		assert len(verified) == 2 and all(v > 0 for v in verified.values()), verified
		assert q('sum(rdmapipe_flow_receive_errors_total)') == {'': 0.0}
		p99 = q('histogram_quantile(0.99, rate(rdmapipe_flow_completion_latency_seconds_bucket[5s]))')
		print('p99 completion latency (s):', p99)
		assert len(p99) == 2 and all(0 < v < 1 for v in p99.values()), p99
		pkts = q(f'rdmapipe_port_sent_pkts_total{{device="{dev}",port="1"}}')
		assert pkts and list(pkts.values())[0] > 0, pkts
		build = q('rdmapipe_build_info{version!="",dpdk!="",rdma_core!=""}')
		assert list(build.values()) == [1.0], build
	PY
}

# The service unit's command line (app/rdmapipe/rdmapipe@.service's ExecStart, as
# systemd would run it for rdmapipe@wire) on a pipeline that goes on until stopped:
# a flow from rxeA to rxeB over the wire, scraped at :19465. netem's delay on the wire
# makes Prometheus fire RdmapipeLatencyHigh (rules.yml, the test's thresholds) for it,
# and the alert resolves once the delay is gone; every query of the dashboard and
# every rule's expression is accepted by the server; then SIGTERM, as systemctl stop
# sends, ends the run: summary, results, exit 0.
service_run_alerts() {
	local conf=$prom_dir/wire.conf sjson=$prom_dir/wire.json sout=$prom_dir/wire.out cmd spid
	cat >"$conf" <<-EOF
		version = 1;
		devices = ( { name = "$RXE_A_DEV"; }, { name = "$RXE_B_DEV"; } );
		io_contexts = ( { lcore = 0; device = "$RXE_A_DEV"; }, { lcore = 1; device = "$RXE_B_DEV"; } );
		flows = ( { name = "wire"; verb = "write_imm"; size = 64; qps = 1; rate = 2000; } );
		stages = ( { name = "tx"; kind = "rdma_tx"; lcore = 0; flow = "wire"; },
		           { name = "rx"; kind = "rdma_rx"; lcore = 1; flow = "wire"; } );
		run = { duration = 0; metrics = "127.0.0.1:19465"; output = { json = "$sjson"; }; };
	EOF
	cmd=$(sed -n 's/^ExecStart=//p' "$TESTDIR/../../app/rdmapipe/rdmapipe@.service")
	cmd=${cmd//\/etc\/rdmapipe\/%i.conf/$conf}
	cmd=${cmd//%i/wire}
	cmd=${cmd/\/usr\/bin\/rdmapipe/$RDMAPIPE}
	cmd=${cmd/\$RDMAPIPE_EAL/$(eal_args)}
	echo "the service's command line: $cmd"
	# shellcheck disable=SC2086
	run_bg "$sout" timeout -k 5 600 $cmd
	spid=$bg_pid
	python3 - "$TESTDIR/../../docs/grafana/rdmapipe.json" "$prom_dir/rules.yml" <<-'PY' &&
		import json, subprocess, sys, time, urllib.error, urllib.parse, urllib.request
		def get(path, **args):
		    url = 'http://127.0.0.1:19090/api/v1/' + path + ('?' + urllib.parse.urlencode(args) if args else '')
		    try:
		        r = json.load(urllib.request.urlopen(url, timeout=10))
		    except urllib.error.HTTPError as e:
		        raise AssertionError(f'{args}: {e}: {e.read().decode()}')
		    assert r['status'] == 'success', r
		    return r['data']
		def p99():
		    d = get('query', query='rdmapipe:flow_completion_latency_seconds:p99_1m{instance="127.0.0.1:19465"}')
		    return [float(s['value'][1]) for s in d['result']]
		def firing():
		    return [a for a in get('alerts')['alerts'] if a['labels']['alertname'] == 'RdmapipeLatencyHigh'
		            and a['labels'].get('instance') == '127.0.0.1:19465' and a['state'] == 'firing']
		def until(what, cond, secs=90):
		    end = time.monotonic() + secs
		    while not cond():
		        assert time.monotonic() < end, f'{secs} s and not {what}: p99 {p99()}'
		        time.sleep(0.5)
		    print(f'ok: {what}: p99 {p99()}')
		until('the wire flow scraped', lambda: p99() != [])
		assert not firing(), firing()
		subprocess.run(['tc', 'qdisc', 'add', 'dev', 'vA', 'root', 'netem', 'delay', '40ms'], check=True)
		try:
		    until('RdmapipeLatencyHigh firing under 40 ms of netem delay', lambda: firing() != [])
		finally:
		    subprocess.run(['tc', 'qdisc', 'del', 'dev', 'vA', 'root'], check=True)
		until('RdmapipeLatencyHigh resolved without the delay', lambda: firing() == [])
		exprs = [t['expr'].replace('$instance', '.+') for p in json.load(open(sys.argv[1]))['panels'] for t in p['targets']]
		lines = open(sys.argv[2]).read().split('\n')   # each rule's expr, a folded one (>) joined
		for i, l in enumerate(lines):
		    if l.strip().startswith('expr:'):
		        e, ind, k = l.split('expr:', 1)[1].strip(), len(l) - len(l.lstrip()), i + 1
		        if e == '>':
		            e = ''
		            while k < len(lines) and len(lines[k]) - len(lines[k].lstrip()) > ind:
		                e, k = e + ' ' + lines[k].strip(), k + 1
		        exprs.append(e)
		for e in exprs:
		    get('query', query=e)
		print(f'ok: Prometheus accepts the {len(exprs)} queries of the dashboard and its rules')
	PY
		echo "ok: the alert fired under delay and resolved" || { echo "FAIL: the alert under netem delay"; tail -n 20 "$prom_dir/log"; fails=$((fails + 1)); }
	kill -TERM $spid
	wait $spid
	expect_eq "the service's run, ended by SIGTERM: exit status" "$?" 0
	expect_grep "$sout" "^  run: +went on until stopped, ended by SIGTERM"
	expect_grep "$sout" "^result: PASS$"
	json_check "$sjson" "assert r['run']['result'] == 'PASS' and r['flows'][0]['messages_verified'] > 0, r['run']" "the service's run: its results say PASS"
}

# Telemetry from a running instance: its own runtime directory, so the socket is known.
TEL=${DPDK_TELEMETRY:-dpdk-telemetry.py}
if ! command -v "$TEL" >/dev/null; then
	echo "FAIL: $TEL not found (Debian package dpdk-dev)"; fails=$((fails + 1))
else
	prefix=rptel$$
	# Prometheus first: it scrapes its first target some 6 s after it starts, which
	# overlaps the run's setup.
	prom_dir=$(mktemp -d)
	prom_up=
	if command -v prometheus >/dev/null && command -v promtool >/dev/null; then
		# docs/prometheus/rules.yml for a test: windows of 5 s, 1 s "for"s, and a p99
		# threshold of 25 ms (rxe under TCG is slow: its p99 is a few ms unloaded) that
		# netem's delay on the wire crosses.
		sed -e 's/\[1m\]/[5s]/g; s/\[5m\]/[5s]/g; s/for: [0-9]*[ms]$/for: 1s/; s/> 0.0005$/> 0.025/' \
			"$TESTDIR/../../docs/prometheus/rules.yml" >"$prom_dir/rules.yml"
		grep -q '> 0.025$' "$prom_dir/rules.yml" || { echo "FAIL: no p99 threshold of 0.0005 in docs/prometheus/rules.yml"; fails=$((fails + 1)); }
		cat >"$prom_dir/prom.yml" <<-EOF
			global: {scrape_interval: 1s, evaluation_interval: 1s}
			rule_files: [$prom_dir/rules.yml]
			scrape_configs:
			  - job_name: rdmapipe
			    static_configs: [{targets: ['127.0.0.1:19464', '127.0.0.1:19465']}]
		EOF
		prometheus --config.file="$prom_dir/prom.yml" --storage.tsdb.path="$prom_dir/data" \
			--web.listen-address=127.0.0.1:19090 >"$prom_dir/log" 2>&1 &
		prom_up=$!
		on_exit "kill $prom_up 2>/dev/null; rm -rf $prom_dir"
	else
		echo "FAIL: prometheus or promtool not found (Debian package prometheus)"; fails=$((fails + 1))
	fi
	json=$(mktemp --suffix=.json)
	# A run that goes on until the test stops it (-t 0; SIGTERM once every question
	# below has its answer): the checks wait for what they need, never for a run of
	# fixed length to end (an 8 s run once ended before a busy guest had answered; under
	# load a Python start alone takes seconds there). The timeout only bounds a test gone
	# wrong.
	# shellcheck disable=SC2046
	run_bg "$out" timeout -k 5 660 "$RDMAPIPE" $(eal_args | sed 's/--in-memory//') --file-prefix $prefix -- -d "$DEV" -t 0 -Q 1,1 \
		--rate 20000 --metrics 127.0.0.1:19464 --output "$json"
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
		[ -n "$prom_up" ] && prometheus_checks
	fi
	# To timeout, which passes it to rdmapipe and then to its process group: rdmapipe
	# gets SIGTERM twice at once, one end (a second one a second later would kill it).
	kill -TERM $pid
	wait $pid
	rc=$?
	echo "--- telemetry replies"; cat "$tel"
	echo "--- the run, until stopped by SIGTERM"; cat "$out"
	expect_eq "a run until stopped, ended by SIGTERM: exit status" "$rc" 0
	expect_grep "$out" "^  run: +went on until stopped, ended by SIGTERM"
	expect_grep "$out" "^result: PASS$"
	json_check "$json" "assert r['run']['result'] == 'PASS', r['run']" "until stopped: its results say PASS"
	rm -f "$json"
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
	[ -n "$prom_up" ] && wire_ready && service_run_alerts
fi

# UC made reliable in software, as the metrics show it while it runs: ACKs sent by the
# receiver and taken by the sender, retransmissions of what --inject-loss left out, and
# the port's MTU; scraped (no Prometheus needed) until each has moved, then SIGTERM.
# shellcheck disable=SC2046
run_bg "$out" timeout -k 5 300 "$RDMAPIPE" $(eal_args) -- -d "$DEV" -t 0 --transport uc -Q 2 --inject-loss 0.02 \
	--rate 20000 --metrics 127.0.0.1:19466
pid=$bg_pid
if await_line "$out" "^rdmapipe: running" $pid 120; then
	python3 - "$DEV" <<-'PY' && echo "ok: reliable UC's counters in the metrics" || { echo "FAIL: reliable UC's metrics"; fails=$((fails + 1)); }
		import re, sys, time, urllib.request
		dev = sys.argv[1]
		def value(text, name, **labels):
		    for line in text.splitlines():
		        m = re.match(name + r'\{(.*)\} (\S+)$', line)
		        if m and all(f'{k}="{v}"' in m.group(1) for k, v in labels.items()):
		            return float(m.group(2))
		    return None
		end = time.monotonic() + 90
		while True:
		    t = urllib.request.urlopen('http://127.0.0.1:19466/metrics', timeout=10).read().decode()
		    got = {'acks sent': value(t, 'rdmapipe_flow_acks_total', direction='sent'),
		           'acks received': value(t, 'rdmapipe_flow_acks_total', direction='received'),
		           'fast retransmissions': value(t, 'rdmapipe_flow_retransmissions_total', reason='fast'),
		           'out of order': value(t, 'rdmapipe_flow_out_of_order_total', transport='uc')}
		    if all(v for v in got.values()):
		        break
		    assert time.monotonic() < end, f'90 s and not all moved: {got}'
		    time.sleep(0.3)
		print('reliable UC:', got)
		assert value(t, 'rdmapipe_flow_qp_restarts_total') is not None and value(t, 'rdmapipe_flow_duplicates_total') is not None, t
		mtu = value(t, 'rdmapipe_port_active_mtu_bytes', device=dev, port='1')
		assert mtu in (256, 512, 1024, 2048, 4096), t
		assert value(t, 'rdmapipe_port_max_mtu_bytes', device=dev, port='1') >= mtu, t
	PY
fi
kill -TERM $pid
wait $pid
expect_eq "reliable UC until stopped, ended by SIGTERM: exit status" "$?" 0
expect_grep "$out" "^result: PASS$"

# Per-QP counters (--metrics-qp): rxe keeps none, so the kernel binds no counter to a
# QP (it answers ENOMEM), and the run is refused before any traffic, naming the QP.
run_rdmapipe "$out" -d "$DEV" -n 1000 --metrics 127.0.0.1:19467 --metrics-qp
expect_eq "--metrics-qp on rxe: exit status" "$rc" 3
expect_grep "$out" "^rdmapipe: run\.metrics_qp \(--metrics-qp\): flow 'flow0' requester QP 0: $DEV port 1 QP [0-9]+: the kernel bound no counter to it \(rdma statistic qp bind: Cannot allocate memory: the driver has no per-QP counters"
expect_no_grep "$out" "^(summary:|rdmapipe: running)"

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
