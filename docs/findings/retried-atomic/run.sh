#!/bin/bash
# docs/findings/retried-atomic.md: rdmapipe and the standalone programs on the finding's
# atomics in one guest of the soft-RoCE VM, RUNS (3) runs each, bounded by timeout -k 5
# 120, one line a run (exit code, the result lines, the ports' hw_counter deltas):
#   wire   no fence, rxeA -> rxeB with netem dropping LOSS (2%) each way: the requester
#          retries thousands of times a run (repro-wire.c, docs/repro/retried-atomic-wire.conf)
#   fence  the finding's point on rxe0 (repro.c, docs/repro/retried-atomic.conf)
# From the repository's root (build/ built), OUT a new folder:
#   docs/findings/retried-atomic/run.sh 6.1|6.12 OUT [wire] [fence]
set -u
kernel=${1:?6.1 or 6.12}; out=$(realpath -m "${2:?an output folder}"); shift 2
cases=${*:-wire fence}
repo=$(cd "$(dirname "$0")/../../.." && pwd)
src=$repo/docs/findings/retried-atomic
mkdir -p "$out"
for p in repro repro-wire; do
	cc -std=c11 -O2 -Wall -Wextra -o "$out/$p" "$src/$p.c" -libverbs || exit 3
done
cat > "$out/guest.sh" <<G
set -u
rp="${RDMAPIPE:-$repo/build/app/rdmapipe/rdmapipe} -l 0-1 --no-huge -m 1024 --no-shconf --no-pci --log-level=lib.eal:error -- --stall-timeout 5 -f"
snap() { for f in /sys/class/infiniband/*/ports/1/hw_counters/*; do echo "\$(echo \$f | cut -d/ -f5).\$(basename \$f) \$(cat \$f)"; done; }
delta() { join <(sort "\$1") <(sort "\$2") | awk '\$3 != \$2 { printf "%s+%d ", \$1, \$3 - \$2 }'; }
one() {
	local l=\$1; shift
	snap > $out/before; t0=\$(date +%s.%N)
	timeout -k 5 120 "\$@" > $out/\$l.out 2>&1; rc=\$?
	snap > $out/after
	printf '%s: rc=%s %.1f s | %s| %s\n' "\$l" \$rc "\$(echo "\$(date +%s.%N) - \$t0" | bc)" \\
		"\$(grep -E '^(ok|data|stall|completion|error|setup|result)|payload errors|first bad|requester failed' $out/\$l.out | tr -s ' ' | tr '\n' ' ')" \\
		"\$(delta $out/before $out/after)"
}
echo "== \$(date -u +%FT%TZ) kernel \$(uname -r)"
for c in $cases; do
	case \$c in
	wire) tc qdisc add dev vA root netem loss ${LOSS:-2%}; tc qdisc add dev vB root netem loss ${LOSS:-2%}
	      for i in \$(seq 1 ${RUNS:-3}); do one wire-repro-\$i $out/repro-wire; one wire-rdmapipe-\$i \$rp $repo/docs/repro/retried-atomic-wire.conf; done
	      tc qdisc del dev vA root; tc qdisc del dev vB root ;;
	fence) for i in \$(seq 1 ${RUNS:-3}); do one fence-repro-\$i $out/repro; one fence-rdmapipe-\$i \$rp $repo/docs/repro/retried-atomic.conf; done ;;
	esac
done
echo "== dmesg:"; dmesg | grep -iE 'rxe|lockup|hung|warn|bug' | tail -n 15
G
cd "$repo" && tools/softroce --kernel "$kernel" --timeout 1500 --share "$out" --dpdk-plugins mempool_ring -- bash "$out/guest.sh" | tee "$out/runs-$kernel.txt"
