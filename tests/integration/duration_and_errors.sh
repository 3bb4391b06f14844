#!/usr/bin/env bash
# A time-bounded run ends by itself with everything verified; setup errors on a
# machine with devices are named and exit 3; bad arguments exit 2.
. "$(dirname "$0")/lib.sh"
need_device
out=$(mktemp)

run_rdmapipe "$out" -d "$DEV" -t 1.5
expect_eq "exit status, duration" "$rc" 0
sent=$(field "$out" 'messages sent')
expect_eq "verified = sent" "$(field "$out" 'messages verified')" "$sent"
if [ "${sent:-0}" -gt 100 ]; then echo "ok: $sent messages in 1.5 s"; else echo "FAIL: only '$sent' messages"; fails=$((fails + 1)); fi

run_rdmapipe "$out" -d nosuchdev0 -n 10
expect_eq "exit status, unknown device" "$rc" 3
expect_grep "$out" "rdmapipe: device 'nosuchdev0' not found \(present: .*$DEV"

run_rdmapipe "$out" -d "$DEV" -p 9 -n 10
expect_eq "exit status, bad port" "$rc" 3
expect_grep "$out" "rdmapipe: $DEV: port 9 does not exist \(ports 1..1\)"

run_rdmapipe "$out" -d "$DEV" -g 200 -n 10
expect_eq "exit status, bad GID index" "$rc" 3
expect_grep "$out" "^rdmapipe: $DEV port 1: GID index 200 holds no valid GID \\(valid: 0, 1"
rm -f "$out"
finish
