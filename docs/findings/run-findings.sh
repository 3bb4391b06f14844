#!/bin/bash
# Runs the standalone reproducers of docs/findings/*/repro.c, 3 runs each, each bounded
# by timeout -k 5 60; one line per run (exit code, the program's line, hw_counter deltas).
# Usage (inside tools/softroce, OUT a folder shared with the host):
#   tools/softroce [--kernel 6.12] --share OUT --env FINDINGS_OUT=OUT -- bash docs/findings/run-findings.sh [NAME...]
# (default: the first three); its record in OUT/findings-run-KERNEL[-$FINDINGS_TAG].txt.
# "line at" = when the program wrote its last output (the output file's mtime), from its start.
set -u
src=$(cd "$(dirname "$0")" && pwd)
out=${FINDINGS_OUT:-.}/findings-run-$(uname -r)${FINDINGS_TAG:+-$FINDINGS_TAG}.txt
bin=$(mktemp -d)
dev=${RXE_LOOP_DEV:-rxe0}
hc=/sys/class/infiniband/$dev/ports/1/hw_counters
exec > >(tee "$out") 2>&1
echo "== $(date -u +%FT%TZ) kernel $(uname -r): $(cat /proc/version)"
echo "== device $dev: $(ibv_devinfo -d "$dev" 2>/dev/null | grep -E 'active_mtu|state' | tr -s ' \t' ' ' | tr '\n' ';')"
snap() { for f in "$hc"/*; do echo "$(basename "$f") $(cat "$f")"; done; }
delta() { join <(sort "$1") <(sort "$2") | awk '$3 != $2 { printf "%s+%d ", $1, $3 - $2 }'; }
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(fenced-read-stall multi-packet-retransmission retried-atomic)
for name in "${names[@]}"; do
	if ! cc -std=c11 -O2 -Wall -Wextra -o "$bin/$name" "$src/$name/repro.c" -libverbs; then
		echo "$name: compile failed"; continue
	fi
	for run in 1 2 3; do
		snap > "$bin/before"
		t0=$(date +%s.%N)
		timeout -k 5 60 "$bin/$name" > "$bin/out" 2>&1
		rc=$?
		line=$(tail -n 3 "$bin/out" | tr '\n' ' ')
		t1=$(date +%s.%N)
		snap > "$bin/after"
		tl=$(stat -c %.9Y "$bin/out")
		printf '%s run %d: rc=%s (%.1f s, line at %.1f s) | %s | counters: %s\n' "$name" "$run" "$rc" "$(echo "$t1 - $t0" | bc)" "$(echo "$tl - $t0" | bc)" \
			"$line" "$(delta "$bin/before" "$bin/after")"
	done
done
echo "== dmesg (rxe, lockup, warnings):"
dmesg | grep -iE 'rxe|lockup|hung|warn|bug|rcu' | tail -n 30
echo "== done $(date -u +%FT%TZ)"
