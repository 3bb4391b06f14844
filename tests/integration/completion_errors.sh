#!/usr/bin/env bash
# A wrong rkey on one QP of four: rxe answers with a remote access error, which is
# named and counted; only that QP stops, the other three deliver everything, the
# process stays up to print its summary, and the exit status says the run failed.
. "$(dirname "$0")/lib.sh"
need_device
out=$(mktemp)

for verb in write_imm read fetch_add; do
	run_rdmapipe "$out" -d "$DEV" -v "$verb" -n 4000 -Q 4 --inject-bad-rkey 2
	expect_eq "$verb: exit status" "$rc" 1
	expect_eq "$verb: failed QPs" "$(field "$out" 'failed QPs')" 1
	expect_grep "$out" "^  requester completion errors: 1 x remote access error$"
	expect_grep "$out" "^  requester first error:  remote access error"
	# QPs 0, 1 and 3 sent and verified their 1000 each.
	expect_eq "$verb: verified" "$(field "$out" 'messages verified' | cut -d' ' -f1)" 3000
	expect_grep "$out" "^result: FAIL$"
done
rm -f "$out"
finish
