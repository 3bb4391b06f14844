#!/usr/bin/env bash
# A wrong rkey on one QP of four: rxe answers with a remote access error, which is
# named and counted; only that QP stops, the other three deliver everything, the
# process stays up to print its summary, and the exit status says the run failed.
. "$(dirname "$0")/lib.sh"
need_device
out=$(mktemp)

# write through the extended CQ API too: its error completions carry the status and
# qp_num the dispatch needs.
for case in "write_imm" "read" "fetch_add" "write --cq-api ex"; do
	verb=${case%% *}
	# shellcheck disable=SC2086
	run_rdmapipe "$out" -d "$DEV" -v $case -n 4000 -Q 4 --inject-bad-rkey 2
	expect_eq "$verb: exit status" "$rc" 1
	expect_eq "$verb: failed QPs" "$(field "$out" 'failed QPs')" 1
	expect_grep "$out" "^  requester completion errors: 1 x remote access error$"
	expect_grep "$out" "^  requester first error:  remote access error"
	# QPs 0, 1 and 3 sent and verified their 1000 each.
	expect_eq "$verb: verified" "$(field "$out" 'messages verified' | cut -d' ' -f1)" 3000
	expect_grep "$out" "^result: FAIL$"
	# The failed QP's memory is not judged: only the completion error counts.
	expect_eq "$verb: payload errors" "$(field "$out" 'payload errors')" 0
	# Every outstanding WR of the failed QP comes back flushed (32: one chain).
	expect_grep "$out" "^  requester completion errors: [0-9]+ x Work Request Flushed Error$"
	# The flush of the failed QP's outstanding WRs fits the shared CQ: no overflow.
	if grep -q "async event: .*CQ error" "$out"; then
		echo "FAIL: $verb: the shared CQ overflowed (CQ error event)"
		fails=$((fails + 1))
	else
		echo "ok: $verb: no CQ error event"
	fi
done
rm -f "$out"
finish
