#!/bin/bash
# The soft-lockup point run 3 (RUNS) times in one guest of the soft-RoCE VM, by rdmapipe
# (docs/repro/wire-soft-lockup.conf) or by its standalone program (repro.c here), each run
# bounded by timeout -k 5 120 and followed by the guest's dmesg; one line a run.
# From the repository's root, OUT a new folder:
#   docs/findings/wire-soft-lockup/run.sh rdmapipe|repro 6.1|6.12 OUT
set -u
what=${1:?rdmapipe or repro}; kernel=${2:?6.1 or 6.12}; out=$(realpath -m "${3:?an output folder}")
repo=$(cd "$(dirname "$0")/../../.." && pwd)
mkdir -p "$out"
case $what in
rdmapipe) run="$repo/build/app/rdmapipe/rdmapipe -l 0-1 --no-huge -m 1024 --no-shconf --no-pci --log-level=lib.eal:error -- --stall-timeout 5 -f $repo/docs/repro/wire-soft-lockup.conf" ;;
repro) cc -std=c11 -O2 -Wall -Wextra -o "$out/repro" "$repo/docs/findings/wire-soft-lockup/repro.c" -libverbs || exit 3
	run="$out/repro" ;;
*) echo "run.sh: $what is neither rdmapipe nor repro" >&2; exit 2 ;;
esac
cat > "$out/guest.sh" <<G
for i in \$(seq -s ' ' 1 ${RUNS:-3}); do
  t0=\$(date +%s.%N)
  timeout -k 5 120 $run > $out/run\$i.out 2>&1
  rc=\$?
  dmesg > $out/dmesg\$i.txt
  echo "run \$i: rc=\$rc \$(echo "\$(date +%s.%N) - \$t0" | bc) s: \$(grep -E '^ok|^result|failed' $out/run\$i.out | tr '\n' ' ')"
done
G
cd "$repo" && tools/softroce --kernel "$kernel" --timeout 1000 --share "$out" --console "$out/console.log" \
	--dpdk-plugins mempool_ring -- bash "$out/guest.sh"
