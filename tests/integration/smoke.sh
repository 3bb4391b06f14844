#!/usr/bin/env bash
# The rxe part of tools/test-all --quick, beside verbs.sh (every verb once): a pipeline
# of rings (conf/relay.conf: a flow received on one lcore and relayed through a ring to
# another flow, every payload verified) and one run of two processes over rdma_cm
# across the veth wire. The full suite repeats both in pipelines.sh and remote.sh.
. "$(dirname "$0")/lib.sh"
need_device
scratch_files

sed "s/\"rxe0\"/\"$DEV\"/g" "$(dirname "$0")/../../conf/relay.conf" >"$conf"
EAL_LCORES='--lcores (0-2)@(0-1)'
run_rdmapipe "$out" -f "$conf"
EAL_LCORES=
expect_eq "relay: exit status" "$rc" 0
expect_grep "$out" "^result: PASS$"
expect_grep "$out" "^  flow out: .* sent 40000, completed 40000, received 40000, verified 40000"

port=18600
. "$(dirname "$0")/remote_lib.sh"
pair "two processes" -v send -Q 2 -n 20000
expect_eq "two processes: server verified" "$(field "$sout" 'messages verified')" 20000
expect_eq "two processes: client completed" "$(field "$cout" 'messages completed')" 20000
finish
