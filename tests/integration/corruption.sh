#!/usr/bin/env bash
# A corrupted payload is caught on real rxe: the writer flips one byte of message 777
# after filling its pattern; the receiver must name that message and the run must fail.
. "$(dirname "$0")/lib.sh"
need_device
out=$(mktemp)

run_rdmapipe "$out" -d "$DEV" -n 5000 --inject-corruption 777
expect_eq "exit status" "$rc" 1
expect_eq "messages received" "$(field "$out" 'messages received')" 5000
expect_eq "messages verified" "$(field "$out" 'messages verified')" 4999
expect_eq "payload errors" "$(field "$out" 'payload errors')" 1
# 64-byte messages: the flipped byte is at offset 32.
expect_eq "first bad message" "$(field "$out" 'first bad message')" "seq 777, byte 32 differs from the pattern"
expect_grep "$out" "^result: FAIL$"

# Same corruption with verification off: not caught, and the run says so honestly.
run_rdmapipe "$out" -d "$DEV" -n 5000 --inject-corruption 777 --no-verify
expect_eq "exit status, no verify" "$rc" 0
expect_eq "payload errors, no verify" "$(field "$out" 'payload errors')" 0
rm -f "$out"
finish
