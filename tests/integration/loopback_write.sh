#!/usr/bin/env bash
# The default loopback pipeline on rxe: every message arrives and verifies, one
# ibv_post_send per chain of 32, nothing lost.
. "$(dirname "$0")/lib.sh"
need_device
out=$(mktemp)

run_rdmapipe "$out" -d "$DEV" -n 20000
expect_eq "exit status" "$rc" 0
expect_eq "messages sent" "$(field "$out" 'messages sent')" 20000
expect_eq "messages received" "$(field "$out" 'messages received')" 20000
expect_eq "messages verified" "$(field "$out" 'messages verified')" 20000
expect_eq "messages completed" "$(field "$out" 'messages completed')" 20000
expect_eq "bytes" "$(field "$out" 'bytes')" $((20000 * 64))
expect_eq "payload errors" "$(field "$out" 'payload errors')" 0
expect_eq "completion errors" "$(field "$out" 'completion errors')" 0
expect_eq "lost messages" "$(field "$out" 'lost messages')" 0
expect_eq "failed QPs" "$(field "$out" 'failed QPs')" 0
expect_eq "unexpected opcodes" "$(field "$out" 'unexpected opcodes')" 0
expect_eq "unknown QPs" "$(field "$out" 'unknown QPs')" 0
expect_grep "$out" "^  srq posts: +[0-9]+ \(0 cut short by an empty receive pool\)$"
# 20000 / 32 = 625 chains, each one ibv_post_send.
expect_eq "send posts" "$(field "$out" 'send posts')" "625 (32.0 WRs per ibv_post_send)"
expect_grep "$out" "^  device: +$DEV port 1, GID index [0-9]+"
expect_grep "$out" "^result: PASS$"

# A window of 48 slots is full most of the time, and the responder credits every 12
# messages: the requester holds a chain the window would cut short until it reopens by
# a whole one, so chains stay 32 WRs, one ibv_post_send each.
run_rdmapipe "$out" -d "$DEV" -n 20000 --slots 48
expect_eq "exit status, small window" "$rc" 0
expect_eq "messages verified, small window" "$(field "$out" 'messages verified')" 20000
expect_eq "send posts, small window" "$(field "$out" 'send posts')" "625 (32.0 WRs per ibv_post_send)"
rm -f "$out"
finish
