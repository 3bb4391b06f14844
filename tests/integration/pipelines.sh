#!/usr/bin/env bash
# Every pipeline in conf/ runs as it is on rxe, with its data verified; a pipeline
# with stages this build does not run yet is refused before EAL starts (exit 2).
. "$(dirname "$0")/lib.sh"
need_device
out=$(mktemp)
conf_dir=$(cd "$(dirname "$0")/../../conf" && pwd)

for f in "$conf_dir"/*.conf; do
	name=$(basename "$f")
	# Two-host pipelines need both halves: remote.sh runs them.
	grep -qE '^[^#]*(listen = |peer = "[^l])' "$f" && continue
	# The examples name rxe0: point them at this machine's device.
	conf=$f
	if [ "$DEV" != rxe0 ]; then
		conf=$(mktemp --suffix=.conf)
		sed "s/\"rxe0\"/\"$DEV\"/g" "$f" >"$conf"
	fi
	run_rdmapipe "$out" -f "$conf"
	expect_eq "$name: exit status" "$rc" 0
	expect_grep "$out" "^result: PASS$"
	if grep -qE "^  mode: +ping-pong" "$out"; then
		got=$(field "$out" 'echoes verified') want=$(field "$out" 'iterations')
	else
		got=$(field "$out" 'messages verified' | cut -d' ' -f1) want=$(field "$out" 'messages sent')
	fi
	# Both counts must be there, and above zero: an empty match proves nothing.
	[ -n "$want" ] && [ "${want:-0}" -gt 0 ] || want="(missing)"
	expect_eq "$name: verified = sent" "$got" "$want"
	[ "$conf" != "$f" ] && rm -f "$conf"
done

bad=$(mktemp --suffix=.conf)
sed 's/rings = ( );/rings = ( { name = "r"; size = 64; } );/; s/{ name = "rx"; kind = "rdma_rx"; lcore = 0; flow = "bw"; }/{ name = "rx"; kind = "rdma_rx"; lcore = 0; flow = "bw"; output = "r"; },\n  { name = "vf"; kind = "verify"; lcore = 0; input = "r"; }/' \
	"$conf_dir/default.conf" >"$bad"
run_rdmapipe "$out" -f "$bad"
expect_eq "verify stage: exit status" "$rc" 2
expect_grep "$out" "^rdmapipe: $bad:[0-9]+: stages.\[2\]: a verify stage does not run yet in this build"
rm -f "$bad" "$out"
finish
