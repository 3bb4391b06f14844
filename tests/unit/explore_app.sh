#!/usr/bin/env bash
# rdmapipe-explore end to end on the host, its child a stand-in (fake_rdmapipe.py) with
# planted corners: the search finds and minimises each, writes the output folder, the
# reproducers pass rdmapipe --check; --stop-after ends it at a finding; a hang and a
# crash are findings, not the end; a child that cannot start stops the search; bad space
# files are refused file:line.
#   explore_app.sh EXPLORE RDMAPIPE [search|bare|faults|hosts]
# Parts meson runs side by side (the whole took 37 s, the unit suite's longest, and
# ended it alone): 'faults' is the hang and the crash (each ask of a hung point costs
# point_timeout), 'hosts' the children through a runner whose host stops answering,
# 'bare' the bare-verbs reference, 'search' all the rest; no argument: all.
set -u
. "$(dirname "$0")/../integration/lib.sh"   # await_line (its RDMAPIPE, $1, is unused here)
usage="usage: explore_app.sh rdmapipe-explore rdmapipe [search|bare|faults|hosts]"
X=$(realpath "${1:?$usage}")
R=$(realpath "${2:?$usage}")
part=${3:-all}
case $part in search | bare | faults | hosts | all) ;; *) echo "$usage" >&2; exit 2 ;; esac
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# A copy of its own, so that 'pgrep -f "$FAKE"' sees this test's children only, not
# those of another test run beside it (meson runs the unit suite in parallel).
FAKE=$T/fake_rdmapipe.py
cp "$(dirname "$0")/fake_rdmapipe.py" "$FAKE"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

cat > "$T/space.conf" <<'S'
version = 1;
dimensions = (
  { setting = "size"; values = [64, 1024, 4096, 8192, 16384]; simplest = 64; },
  { setting = "qps"; values = [1, 2, 4, 8]; simplest = 1; },
  { setting = "batch"; values = [1, 2, 4, 8, 32]; simplest = 32; },
  { setting = "inline"; values = [false, true]; simplest = false; }
);
search = { budget = 150; seed = 3; point_seconds = 0.2; stall_timeout = 0.5; point_timeout = 2; };
S

search() {
	# 1. Both planted corners found and minimised to exactly their settings.
	"$X" -q -f "$T/space.conf" -o "$T/a" --rdmapipe "$FAKE" > "$T/a.out" 2>&1
	rc=$?
	[ $rc -eq 1 ] || fail "a search with findings exits 1, not $rc: $(cat "$T/a.out")"
	mfs=$(python3 -c 'import json,sys; print(";".join(sorted(f["kind"]+":"+f["mfs"] for f in json.load(open(sys.argv[1])))))' "$T/a/findings.json")
	[ "$mfs" = "correctness:size >= 8192, qps >= 4;performance:batch <= 2, inline = true" ] || fail "findings: '$mfs'"
	for n in 1 2; do
		for f in reproduce.conf command results.json log mfs.txt; do
			[ -s "$T/a/anomalies/$n/$f" ] || fail "anomalies/$n/$f missing"
		done
		(cd "$T/a/anomalies/$n" && "$R" --check reproduce.conf > /dev/null) || fail "anomalies/$n/reproduce.conf: rdmapipe --check refuses it"
		grep -q 'json = "results.json"' "$T/a/anomalies/$n/reproduce.conf" || fail "anomalies/$n/reproduce.conf writes over the search's evidence"
	done
	lines=$(wc -l < "$T/a/points.jsonl")
	[ "$lines" -ge 20 ] || fail "points.jsonl has $lines lines"
	python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$T/a/points.jsonl" || fail "points.jsonl is not JSON lines"
	grep -q '| 1 | correctness | size >= 8192, qps >= 4 |' "$T/a/report.md" || fail "report.md has no table of findings"
	# The bare-verbs grid (size's 5 values) built and run here, where no RDMA device is:
	# each point its own failure, recorded; the search judges by its neighbours alone.
	[ "$(grep -c '"on":"children","point":{"size":"[0-9]*"},"status":"\(failed\|no answer\)"' "$T/a/bare.jsonl")" = 5 ] ||
		fail "bare.jsonl: not the 5 grid points, each failed: $(cat "$T/a/bare.jsonl")"
	grep -q '^## Bare-verbs reference' "$T/a/report.md" || fail "report.md has no bare-verbs section"

	# 1b. --stop-after 1: the search ends at its first finding, minimised and written as
	# its reproducer, having run the same points as the whole search up to there. Its
	# output folder's name has a quote in it: repro.c is still built and run there.
	S="$T/s'q"
	"$X" -q -f "$T/space.conf" -o "$S" --rdmapipe "$FAKE" --stop-after 1 > "$T/s.out" 2>&1
	rc=$?
	[ $rc -eq 1 ] || fail "--stop-after 1: exit $rc, not 1: $(cat "$T/s.out")"
	n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$S/findings.json")
	[ "$n" = 1 ] || fail "--stop-after 1: $n findings"
	[ -s "$S/anomalies/1/reproduce.conf" ] || fail "--stop-after 1: anomalies/1/reproduce.conf missing"
	if command -v cc > /dev/null; then
		[ -s "$S/anomalies/1/repro.build.out" ] || [ -x "$S/anomalies/1/repro" ] ||
			fail "a folder with a quote: repro.c not built ($(cat "$S/anomalies/1/standalone.txt"))"
		[ -s "$S/anomalies/1/repro.run1.out" ] || fail "a folder with a quote: repro not run ($(cat "$S/anomalies/1/standalone.txt"))"
	fi
	grep -q -- '- stopped after 1 finding (--stop-after)' "$S/report.md" || fail "--stop-after 1: report.md does not say so"
	grep -q -- '(--stop-after: the budget not spent)' "$T/s.out" || fail "--stop-after 1: the summary does not say so"
	ns=$(wc -l < "$S/points.jsonl")
	[ "$ns" -lt "$(wc -l < "$T/a/points.jsonl")" ] || fail "--stop-after 1 ran $ns points, as many as the whole search"
	cmp -s <(python3 -c 'import json,sys; [print(json.loads(l)["point"]) for l in open(sys.argv[1])]' "$S/points.jsonl") \
		<(python3 -c 'import json,sys; [print(json.loads(l)["point"]) for l in open(sys.argv[1])]' "$T/a/points.jsonl" | head -n "$ns") ||
		fail "--stop-after 1: not the same points as the whole search up to its stop"

	# 2. The same seed, the same points.
	"$X" -q -f "$T/space.conf" -o "$T/b" --rdmapipe "$FAKE" > /dev/null 2>&1
	cmp -s <(python3 -c 'import json,sys; [print(json.loads(l)["point"]) for l in open(sys.argv[1])]' "$T/a/points.jsonl") \
		<(python3 -c 'import json,sys; [print(json.loads(l)["point"]) for l in open(sys.argv[1])]' "$T/b/points.jsonl") ||
		fail "seed 3 twice gave different points"

	# 4. A child that cannot start stops the search with its reason (exit 3).
	FAKE_EXIT=3 "$X" -q -f "$T/space.conf" -o "$T/d" --rdmapipe "$FAKE" > "$T/d.out" 2>&1
	rc=$?
	[ $rc -eq 3 ] || fail "a child that cannot start: exit $rc"
	grep -q 'before its first point: EAL: cannot init (fake)' "$T/d.out" || fail "the child's reason is not named: $(cat "$T/d.out")"
	[ "$(wc -l < "$T/d/points.jsonl")" -le 1 ] || fail "a child that cannot start recorded more than one point"

	# 4b. SIGINT: the search stops, the report is written, exit 130, no child left.
	sed 's/budget = 150;/budget = "10m";/' "$T/space.conf" > "$T/long.conf"
	FAKE_DELAY=0.05 "$X" -q -f "$T/long.conf" -o "$T/e" --rdmapipe "$FAKE" > "$T/e.out" 2>&1 &
	pid=$!
	await_line "$T/e/points.jsonl" '"n":5[,}]' "$pid"   # its fifth point
	kill -INT $pid
	wait $pid
	rc=$?
	[ $rc -eq 130 ] || fail "SIGINT: exit $rc"
	grep -q 'interrupted' "$T/e/report.md" 2>/dev/null || fail "SIGINT: report.md does not say the search was interrupted"
	pgrep -f "$FAKE" > /dev/null && fail "SIGINT: a child is left running"

	# 5. Bad space files and options, refused before anything runs.
	bad() {   # NAME EXPECTED-MESSAGE SPACE-TEXT
		printf '%s\n' "$3" > "$T/$1.conf"
		out=$("$X" --check -f "$T/$1.conf" 2>&1)
		rc=$?
		[ $rc -eq 2 ] || fail "$1: exit $rc, not 2"
		grep -qF -- "$2" <<<"$out" || fail "$1: '$out' does not say '$2'"
	}
	bad unknown "$T/unknown.conf:2: dimensions.[0].setting: unknown setting 'sise' (did you mean 'size'?)" \
		'version = 1; dimensions = (
	  { setting = "sise"; values = [64]; simplest = 64; } );'
	bad empty-range "$T/empty-range.conf:2: dimensions.[0].range: an empty range: 64 > 8" \
		'version = 1; dimensions = (
	  { setting = "size"; range = [64, 8]; simplest = 64; } );'
	bad simplest "$T/simplest.conf:2: dimensions.[0].simplest: simplest value 3 is not among the dimension's values" \
		'version = 1; dimensions = (
	  { setting = "qps"; values = [1, 2, 4]; simplest = 3; } );'
	bad no-valid "the simplest point (batch=0) is not a valid pipeline" \
		'version = 1; dimensions = (
	  { setting = "batch"; values = [0, 600]; simplest = 0; } );'
	bad bad-value "$T/bad-value.conf:3: setting 'verb': the value fly makes no valid point" \
		'version = 1; dimensions = (
	  { setting = "size"; values = [8, 64]; simplest = 64; },
	  { setting = "verb"; values = ["send", "fly"]; simplest = "send"; } );'
	bad mixed "$T/mixed.conf:2: dimensions.[0]: values mix numbers with names" \
		'version = 1; dimensions = (
	  { setting = "qps"; values = (1, "two"); simplest = 1; } );'
	bad fixed-too "$T/fixed-too.conf:1: fixed.qps: is a dimension too (line 2)" \
		'version = 1; fixed = { qps = 2; }; dimensions = (
	  { setting = "qps"; values = [1, 2]; simplest = 1; } );'
	bad no-version "$T/no-version.conf:0: (top): version = 1; is required" \
		'dimensions = ( { setting = "qps"; values = [1]; simplest = 1; } );'
	bad bare-flag "$T/bare-flag.conf:3: search.bare_flag: 2 is outside 0.001..1" \
		'version = 1; dimensions = (
	  { setting = "qps"; values = [1, 2]; simplest = 1; } );
	search = { bare_flag = 2; };'
	bad bare-off "$T/bare-off.conf:3: search.bare_flag: bare_flag has no effect with bare_reference = false" \
		'version = 1; dimensions = (
	  { setting = "qps"; values = [1, 2]; simplest = 1; } );
	search = { bare_reference = false; bare_flag = 0.1; };'
	bad bare-bool "$T/bare-bool.conf:3: search.bare_reference: bare_reference is true or false" \
		'version = 1; dimensions = (
	  { setting = "qps"; values = [1, 2]; simplest = 1; } );
	search = { bare_reference = 1; };'
	bad bare-grid "$T/bare-grid.conf:0: (top): bare_reference: the bare-verbs grid has 320 points (verb 5 x size 64), over 256" \
		'version = 1; dimensions = (
	  { setting = "verb"; values = ["write", "write_imm", "send", "send_imm", "read"]; simplest = "write"; },
	  { setting = "size"; range = [1, 64]; scale = "linear"; simplest = 8; } );'
	bad bare-paced "$T/bare-paced.conf:3: search: bare_reference: the simplest rate (1000) paces the bare-verbs grid" \
		'version = 1; dimensions = (
	  { setting = "rate"; values = [0, 1000]; simplest = 1000; } );
	search = { point_seconds = 0.5; };'
	printf '%s\n' 'version = 1; dimensions = ( { setting = "rate"; values = [0, 1000]; simplest = 1000; } );' \
		'search = { bare_reference = false; };' > "$T/bare-off.conf"
	"$X" --check -f "$T/bare-off.conf" > /dev/null 2>&1 || fail "bare_reference = false: a paced simplest point refused"
	out=$("$X" -f "$T/space.conf" -o "$T/a" --rdmapipe "$FAKE" 2>&1)
	[ $? -eq 2 ] && grep -q 'the folder is not empty' <<<"$out" || fail "-o into a used folder: '$out'"
	out=$("$X" -f "$T/space.conf" --budget 5x 2>&1)
	[ $? -eq 2 ] && grep -q -- "--budget: '5x'" <<<"$out" || fail "--budget 5x: '$out'"
	for v in 0 -1 two; do
		out=$("$X" -f "$T/space.conf" --stop-after "$v" 2>&1)
		[ $? -eq 2 ] && grep -q -- "--stop-after: '$v' is not a number of findings" <<<"$out" || fail "--stop-after $v: '$out'"
	done
	for f in explore-default explore-wire; do
		"$X" --check -f "$(dirname "$0")/../../conf/$f.conf" > /dev/null || fail "conf/$f.conf: --check refuses it"
	done
	# A base pipeline's flows take every setting (their pool grows with size); copies of
	# its flow, two devices, an io context's setting.
	conf_dir=$(cd "$(dirname "$0")/../../conf" && pwd)
	printf 'version = 1; pipeline = "%s/two-flows.conf";\ndimensions = (\n%s );\n' "$conf_dir" \
		'{ setting = "size"; values = [64, 4096]; simplest = 64; },
		 { setting = "flows"; values = [1, 2]; simplest = 1; },
		 { setting = "device"; values = ["rxe0", "rxeA>rxeB"]; simplest = "rxe0"; },
		 { setting = "poll"; values = ["busy", "adaptive"]; simplest = "busy"; }' > "$T/base.conf"
	out=$("$X" --check -f "$T/base.conf" 2>&1) && grep -q "valid: 4 dimensions, 16 points" <<<"$out" || fail "a base pipeline: '$out'"
	# (the relay's stages share rings: copies of its flow would not; its own lcores 0-2)
	sed "s|two-flows|relay|; /setting = \"flows\"/d" "$T/base.conf" > "$T/relay.conf"
	out=$("$X" --check -f "$T/relay.conf" 2>&1)
	[ $? -eq 2 ] && grep -q "relay.conf:[0-9]*: io_contexts.\[1\].lcore: lcore 2 is not in the EAL lcore set" <<<"$out" ||
		fail "a base pipeline on lcores the children lack: '$out'"
	"$X" --check -f "$T/relay.conf" -- -l 0-2 --in-memory > /dev/null || fail "relay.conf with -l 0-2: refused"
}

bare() {
	# 6. The bare-verbs reference (issue 49 item 5), its program built and run by a
	# stand-in cc on PATH (no RDMA here): bare.c's bench points answered 20,000/s up to
	# 4096 B and 400,000/s above, where the stand-in child's flat 20,000/s is 0.05x plain
	# verbs and no neighbour is slower than another: a region only the bare reference
	# flags, minimised against each candidate's own size to size >= 8192, its repro.c's
	# reference the grid's point; measured where the children run (through --runner)
	# and again through --repro-on's runner, a column of the report's table. --no-bare:
	# nothing found.
	mkdir -p "$T/bin"
	cat > "$T/bin/cc" <<-'C'
		#!/bin/sh
		# A stand-in cc: "-o OUT SRC.c" makes OUT a script answering as the program would.
		while [ $# -gt 0 ]; do case $1 in -o) out=$2; shift ;; *.c) src=$1 ;; esac; shift; done
		if grep -q '^#define RP_KIND K_BENCH' "$src"; then
			printf '#!/bin/sh\nexec python3 -c "%s" %s\n' \
				'import re,sys; t=open(sys.argv[1]).read().split(\"#define RP_SECONDS\")[0]
		for k,s in enumerate(re.findall(r\"name = .bench.,.*?[.]size = ([0-9]+)\", t)):
		  r=400000 if int(s)>4096 else 20000; print(\"bench %d ok: %d msg/s %.4f Gbit/s %d messages\" % (k,r,r*int(s)*8/1e9,r))' \
				"$src" > "$out"
		else
			printf '#!/bin/sh\necho "ok: stand-in for %s"\n' "$src" > "$out"
		fi
		chmod +x "$out"
	C
	chmod +x "$T/bin/cc"
	for r in run on; do   # the children's runner and --repro-on's: each logs what it runs
		printf '#!/bin/sh\necho "$*" >> "%s"\nexec "$@"\n' "$T/$r.log" > "$T/$r.sh"
		chmod +x "$T/$r.sh"
	done
	cat > "$T/bare.conf" <<-'S'
		version = 1;
		dimensions = (
		  { setting = "size"; values = [64, 4096, 8192, 16384]; simplest = 64; },
		  { setting = "qps"; values = [1, 2]; simplest = 1; }
		);
		search = { strategy = "grid"; budget = 60; point_seconds = 0.2; stall_timeout = 0.5; point_timeout = 2; bare_flag = 0.1; };
	S
	PATH="$T/bin:$PATH" "$X" -f "$T/bare.conf" -o "$T/g" --rdmapipe "$FAKE" --runner "$T/run.sh" --start-timeout 30 \
		--repro-on "other=$T/on.sh" > "$T/g.out" 2>&1
	rc=$?
	[ $rc -eq 1 ] || fail "bare: exit $rc, not 1: $(tail -5 "$T/g.out")"
	# One command through each runner for the whole grid (a VM runner boots a VM a command).
	[ "$(grep -c 'bare.c' "$T/run.log")" = 1 ] && [ "$(grep -c 'bare.c' "$T/on.log")" = 1 ] ||
		fail "bare: the grid is not one command through each runner: $(grep -h bare.c "$T/run.log" "$T/on.log")"
	grep -q "bare-verbs reference: 4 points of 0.2 s" "$T/g.out" || fail "bare: the grid's size and bound not said: $(head -5 "$T/g.out")"
	grep -q "bare-verbs reference: 4 of 4 points measured" "$T/g.out" || fail "bare: the grid not measured: $(cat "$T/g.out")"
	[ "$(grep -c '"on":"children"' "$T/g/bare.jsonl")" = 4 ] && [ "$(grep -c '"on":"other"' "$T/g/bare.jsonl")" = 4 ] ||
		fail "bare.jsonl: not the 4 grid points where the children run and through --repro-on: $(cat "$T/g/bare.jsonl")"
	grep -q '{"on":"children","point":{"size":"8192"},"status":"ran","rate":400000' "$T/g/bare.jsonl" || fail "bare.jsonl: 8192 B's rate"
	got=$(python3 -c 'import json,sys; [print(f["kind"], f["mfs"], "|", f["why"], "|", f["standalone"]) for f in json.load(open(sys.argv[1]))]' "$T/g/findings.json")
	[[ $got == "performance size >= 8192 | 0.05x bare verbs (8192 B: 400,000/s) | only in rdmapipe"* ]] ||
		fail "bare: the findings are not the slow region against plain verbs: '$got'"
	grep -q '^| size | children ([0-9]* s) | other ([0-9]* s) |$' "$T/g/report.md" && grep -q '^| 16384 B | 400,000/s | 400,000/s |$' "$T/g/report.md" ||
		fail "bare: report.md has no table of the bare rates side by side: $(grep -A8 Bare-verbs "$T/g/report.md")"
	grep -q '^#define RP_REFERENCE { .name = "reference", .verb = V_WRITE_IMM, .uc = 0, .size = 8192, .batch = 32,.* .qps = 1, ' "$T/g/anomalies/1/repro.c" &&
		grep -qx '#define RP_PERF_FLAG 0.1' "$T/g/anomalies/1/repro.c" ||
		fail "bare: repro.c's reference is not the bare grid's 8192 B point: $(grep '^#define' "$T/g/anomalies/1/repro.c" 2>&1)"
	"$X" -f "$T/bare.conf" --no-bare --bare-flag 0.2 --check > "$T/nb.out" 2>&1
	[ $? -eq 2 ] && grep -q "^rdmapipe-explore: --bare-flag: no bare-verbs reference to judge by" "$T/nb.out" ||
		fail "--no-bare --bare-flag: not refused: $(cat "$T/nb.out")"
	PATH="$T/bin:$PATH" "$X" -q -f "$T/bare.conf" -o "$T/g0" --rdmapipe "$FAKE" --no-bare > "$T/g0.out" 2>&1
	rc=$?
	[ $rc -eq 0 ] && [ ! -e "$T/g0/bare.jsonl" ] || fail "--no-bare: exit $rc (a flat space has nothing to find), bare.jsonl: $(ls "$T/g0")"
}

faults() {
	# 3. A hang and a crash are findings, each minimised to its planted point; the search
	# goes on in a fresh child. (One point hangs: each ask of it costs point_timeout.)
	FAKE_HANG=1 FAKE_CRASH=1 "$X" -q -f "$T/space.conf" -o "$T/c" --rdmapipe "$FAKE" --strategy grid --budget 1000 > "$T/c.out" 2>&1
	rc=$?
	[ $rc -eq 1 ] || fail "hang and crash: exit $rc: $(tail -3 "$T/c.out")"
	grep -q '"status":"hung"' "$T/c/points.jsonl" || fail "no hung point recorded"
	grep -q '"status":"crashed"' "$T/c/points.jsonl" || fail "no crashed point recorded"
	grep -q 'killed by Segmentation fault' "$T/c/points.jsonl" || fail "the crash's signal is not named"
	grep -q 'correctness size = 1024, qps = 2, batch = 4, inline = false  (hung: no answer within 2 s)' "$T/c.out" ||
		fail "the hang is not minimised to its point: $(cat "$T/c.out")"
	grep -q 'correctness size = 4096, batch = 8  (crashed: killed by Segmentation fault)' "$T/c.out" ||
		fail "the crash is not minimised to its settings: $(cat "$T/c.out")"
	n=$(grep -c '"status":"ran"' "$T/c/points.jsonl")
	[ "$n" -ge 40 ] || fail "only $n points ran around the hang and the crash"
}

hosts() {
	# 4. Children through a runner (--runner, here a script standing for another host),
	# whose host stops answering at one point (no "alive", no answer): a 'host hung'
	# finding, minimised to that point, the runner stopped and started anew, and the
	# search spends its budget. The hw_counters come from the children's answers.
	cat > "$T/host.sh" <<-'H'
		#!/bin/sh
		echo "host.sh: a child on the stand-in host" >&2
		[ -z "$RDMAPIPE_EXPLORE_CONSOLE" ] || echo "host.sh: its console" > "$RDMAPIPE_EXPLORE_CONSOLE"
		exec "$@"
	H
	chmod +x "$T/host.sh"
	cat > "$T/hosts.conf" <<-'S'
		version = 1;
		dimensions = (
		  { setting = "size"; values = [64, 1024, 4096]; simplest = 64; },
		  { setting = "qps"; values = [1, 2, 8]; simplest = 1; }
		);
		search = { budget = 40; seed = 3; point_seconds = 0.2; stall_timeout = 0.5; point_timeout = 4;
		           counters = { out_of_sequence = 0.1; }; };
	S
	FAKE_WEDGE=1 "$X" -q -f "$T/hosts.conf" -o "$T/h" --rdmapipe "$FAKE" --runner "$T/host.sh" --start-timeout 30 \
		--repro-on "other=$T/host.sh" \
		--strategy grid --repeats 2 --need 2 > "$T/h.out" 2>&1
	rc=$?
	[ $rc -eq 1 ] || fail "runner: exit $rc: $(tail -3 "$T/h.out")"
	grep -q '"status":"host hung"' "$T/h/points.jsonl" || fail "runner: no 'host hung' point recorded"
	grep -q "correctness size = 1024, qps = 2  (host hung: no answer within 4 s; nothing from its host for 3 s (no 'alive'): the runner was stopped" \
		"$T/h.out" || fail "runner: the host hang is not a finding minimised to its point: $(cat "$T/h.out")"
	grep -q 'counters    qps >= 8  (out_of_sequence' "$T/h.out" || fail "runner: no counters finding from the answers: $(cat "$T/h.out")"
	started=$(grep -l "host.sh: a child on the stand-in host" "$T"/h/child-*.log | wc -l)
	[ "$started" -ge 3 ] || fail "runner: $started children started through it (the first, and one after each host hang)"
	n=$(grep -c '"status":"ran"' "$T/h/points.jsonl")
	[ "$n" -ge 9 ] || fail "runner: only $n points ran around the host hangs"
	# --repro-on: each finding's repro.c built and run through the other runner too, its
	# verdict labelled with its name (no RDMA device here: its own setup error).
	on=$(python3 -c 'import json,sys; print("|".join(f.get("standalone_on", "-") for f in json.load(open(sys.argv[1]))))' "$T/h/findings.json")
	[[ $on == "other: "*"|other: "* ]] || fail "--repro-on: findings' standalone_on: '$on'"
	[ -s "$T/h/anomalies/1/repro.other.build.out" ] || [ -e "$T/h/anomalies/1/repro.other.run1.out" ] ||
		fail "--repro-on: repro.c not built and run through it: $(ls "$T/h/anomalies/1")"
	grep -q "elsewhere (--repro-on): other: " "$T/h/report.md" || fail "--repro-on: report.md does not say it"
	# Its command, run by hand, goes through the runner as the children did, the host's
	# console kept beside it.
	(cd "$T/h/anomalies/1" && bash ./command > /dev/null 2>&1)
	grep -q "host.sh: its console" "$T/h/anomalies/1/reproduce.console" ||
		fail "anomalies/1/command by hand: no console through the runner: $(cat "$T/h/anomalies/1/command")"
	grep -q "host.sh: its console" "$T"/h/child-1.console || fail "the runner's child had no console of its own"
	# A finding's repro.c is built and run in one command per runner (a VM boots once),
	# and so is the bare-verbs grid at the start.
	nf=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$T/h/findings.json")
	nr=$(grep -c "host.sh: a child on the stand-in host" "$T/h/runner.log")
	[ "$nr" -eq $((nf * 2 + 2)) ] ||
		fail "repro.c: $nr runner commands for $nf findings (want one per finding and runner, and the bare grid's per runner)"
	"$X" -f "$T/hosts.conf" --repro-on 'a b=x' > "$T/ro.out" 2>&1
	[ $? -eq 2 ] && grep -q "^rdmapipe-explore: --repro-on: 'a b=x' is not NAME=CMD" "$T/ro.out" || fail "--repro-on 'a b=x': $(cat "$T/ro.out")"
	"$X" -f "$T/hosts.conf" --repro-on 'k=x' --repro-on 'k=y' > "$T/ro.out" 2>&1
	[ $? -eq 2 ] && grep -q "^rdmapipe-explore: --repro-on: 'k' given twice" "$T/ro.out" || fail "--repro-on twice: $(cat "$T/ro.out")"
}

[ "$part" = all ] || [ "$part" = search ] && search
[ "$part" = all ] || [ "$part" = bare ] && bare
[ "$part" = all ] || [ "$part" = faults ] && faults
[ "$part" = all ] || [ "$part" = hosts ] && hosts
[ $fails -eq 0 ] && echo "explore_app $part: all passed" || echo "explore_app $part: $fails failed"
exit $((fails > 0))
