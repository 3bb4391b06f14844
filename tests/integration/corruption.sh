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
expect_eq "first bad message" "$(field "$out" 'first bad message')" "QP 0 seq 777, byte 32 differs from the pattern"
expect_grep "$out" "^result: FAIL$"

# Same corruption with verification off: not caught, and the run says so honestly.
run_rdmapipe "$out" -d "$DEV" -n 5000 --inject-corruption 777 --no-verify
expect_eq "exit status, no verify" "$rc" 0
expect_eq "payload errors, no verify" "$(field "$out" 'payload errors')" 0

# The same through SEND into SRQ buffers: caught in the receive buffer.
run_rdmapipe "$out" -d "$DEV" -v send -n 3000 --inject-corruption 100
expect_eq "exit status, send" "$rc" 1
expect_eq "payload errors, send" "$(field "$out" 'payload errors')" 1
expect_eq "first bad message, send" "$(field "$out" 'first bad message')" "QP 0 seq 100, byte 32 differs from the pattern"

# Plain RDMA_WRITE has no receive to check at: the window's final state catches the
# damage when the corrupted message is the last one written to its slot.
run_rdmapipe "$out" -d "$DEV" -v write -n 1000 --slots 1024 --inject-corruption 500
expect_eq "exit status, write" "$rc" 1
expect_eq "payload errors, write" "$(field "$out" 'payload errors')" 1
expect_eq "first bad message, write" "$(field "$out" 'first bad message')" "QP 0 seq 500, byte 32 differs from the pattern"
rm -f "$out"
finish
