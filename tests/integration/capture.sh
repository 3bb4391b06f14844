#!/usr/bin/env bash
# The capture stage: a pipeline's messages written as RoCE v2 packets of a pcap file,
# which tshark reads back: one record per message verified, of the flow's opcode, on
# the QP each went over with its sequence there as PSN. After rdma_rx (what arrived)
# and before rdma_tx (what is about to be sent, cut to its snaplen); a file that cannot
# be written is refused before anything runs, named.
. "$(dirname "$0")/lib.sh"
need_device
scratch_files
dir=$(mktemp -d)
on_exit 'rm -rf "$dir"'
command -v tshark >/dev/null || skip_or_fail "tshark is missing (tools/install-deps installs it)"

# tshark's fields of every record of $1, one line each.
fields() { tshark -r "$1" -T fields -E separator=" " "${@:2}" 2>/dev/null; }

# check_psns FILE QPS TOTAL: TOTAL records over QPS destination QPs, each QP's PSNs
# 0..n-1 once each (every record its own message, none lost or repeated).
check_psns() {
	local f=$1 got
	got=$(fields "$f" -e infiniband.bth.destqp -e infiniband.bth.psn | sort | uniq -c |
		awk '$1 != 1 {dup++} {n[$2]++; t++; if ($3 + 0 > max[$2] + 0) max[$2] = $3 + 0}
		     END {for (q in n) if (n[q] != max[q] + 1) gap++; printf "%d QPs, %d records, %d repeated, %d with gaps\n", length(n), t, dup, gap}')
	expect_eq "$f: QPs and PSNs" "$got" "$2 QPs, $3 records, 0 repeated, 0 with gaps"
}

# Received SEND_WITH_IMMs over 2 QPs, captured whole between rdma_rx and verify.
cat >"$conf" <<CONF
version = 1;
devices = ( { name = "$DEV"; } );
io_contexts = ( { lcore = 1; device = "$DEV"; }, { lcore = 0; device = "$DEV"; } );
flows = ( { name = "f"; verb = "send_imm"; size = 256; qps = 2; messages = 4000; } );
rings = ( { name = "got"; size = 256; }, { name = "seen"; size = 256; } );
stages = (
  { name = "tx"; kind = "rdma_tx"; lcore = 1; flow = "f"; },
  { name = "rx"; kind = "rdma_rx"; lcore = 0; flow = "f"; output = "got"; },
  { name = "cap"; kind = "capture"; lcore = 0; input = "got"; output = "seen"; file = "$dir/rx.pcap"; snaplen = 256; },
  { name = "v"; kind = "verify"; lcore = 0; input = "seen"; }
);
CONF
run_rdmapipe "$out" -f "$conf"
expect_eq "after rdma_rx: exit status" "$rc" 0
expect_grep "$out" "^result: PASS$"
expect_eq "after rdma_rx: verified" "$(field "$out" 'messages verified')" 4000
expect_grep "$out" "^  stage cap: +capture on lcore 0: 4000 messages .*4000 records to $dir/rx.pcap; "
expect_eq "rx.pcap: records" "$(fields "$dir/rx.pcap" -e frame.number | wc -l)" 4000
expect_eq "rx.pcap: opcodes" "$(fields "$dir/rx.pcap" -e infiniband.bth.opcode | sort -u | tr '\n' ' ')" "5 "
# Every record a RoCE v2 packet tshark's InfiniBand dissector takes (its BTH and ICRC
# decoded). What it then guesses a payload holds from its first bytes (an EtherType,
# SMC) is no error of ours: the ICRCs are checked by the unit test (test_pcap_writer).
expect_eq "rx.pcap: records decoded as RoCE v2" "$(fields "$dir/rx.pcap" -e infiniband.bth.opcode -e udp.dstport | grep -c '^5 4791$')" 4000
check_psns "$dir/rx.pcap" 2 4000

# Made by a gen, captured before rdma_tx sends them, cut to 64 bytes of payload.
cat >"$conf" <<CONF
version = 1;
devices = ( { name = "$DEV"; } );
pools = ( { name = "p"; elt_size = 512; count = 4096; } );
io_contexts = ( { lcore = 1; device = "$DEV"; }, { lcore = 0; device = "$DEV"; } );
flows = ( { name = "f"; verb = "send"; size = 512; qps = 2; messages = 3000; pool = "p"; } );
rings = ( { name = "made"; size = 256; }, { name = "seen"; size = 256; }, { name = "got"; size = 256; } );
stages = (
  { name = "g"; kind = "gen"; lcore = 0; flow = "f"; output = "made"; },
  { name = "cap"; kind = "capture"; lcore = 0; input = "made"; output = "seen"; file = "$dir/tx.pcap"; snaplen = 64; },
  { name = "tx"; kind = "rdma_tx"; lcore = 1; flow = "f"; input = "seen"; },
  { name = "rx"; kind = "rdma_rx"; lcore = 0; flow = "f"; output = "got"; },
  { name = "v"; kind = "verify"; lcore = 1; input = "got"; }
);
CONF
run_rdmapipe "$out" -f "$conf"
expect_eq "before rdma_tx: exit status" "$rc" 0
expect_grep "$out" "^result: PASS$"
expect_eq "before rdma_tx: verified" "$(field "$out" 'messages verified')" 3000
expect_eq "tx.pcap: records" "$(fields "$dir/tx.pcap" -e frame.number | wc -l)" 3000
expect_eq "tx.pcap: opcodes" "$(fields "$dir/tx.pcap" -e infiniband.bth.opcode | sort -u | tr '\n' ' ')" "4 "
# A gen's messages have not gone over a QP yet: the flow's first QP names them all.
check_psns "$dir/tx.pcap" 1 3000
expect_eq "tx.pcap: records cut to the snaplen (captured/on the wire)" \
	"$(fields "$dir/tx.pcap" -e frame.cap_len -e frame.len | sort -u | tr '\n' ' ')" "$((14 + 20 + 8 + 12 + 64)) $((14 + 20 + 8 + 12 + 512 + 4)) "

# A file that cannot be written: refused at start, named, nothing sent.
sed -i "s#$dir/tx.pcap#$dir/none/tx.pcap#" "$conf"
run_rdmapipe "$out" -f "$conf"
expect_eq "unwritable file: exit status" "$rc" 3
expect_grep "$out" "stages.\[1\]: capture file $dir/none/tx.pcap: No such file or directory"
expect_no_grep "$out" "^result:"
finish
