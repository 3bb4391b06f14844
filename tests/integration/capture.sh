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

# read_pcap FILE: one tshark pass over FILE (a start costs seconds in the guest), every
# field the checks below want, one record a line in FILE.fields: frame number, BTH
# opcode, UDP destination port, destination QP, PSN, captured length, length on the wire.
read_pcap() {
	tshark -r "$1" -T fields -E separator=, -e frame.number -e infiniband.bth.opcode -e udp.dstport \
		-e infiniband.bth.destqp -e infiniband.bth.psn -e frame.cap_len -e frame.len >"$1.fields" 2>/dev/null
}
# col FILE N...: those columns of FILE's records (read_pcap), space-separated.
col() { local f=$1; shift; awk -F, -v c="$*" 'BEGIN { n = split(c, k, " ") } { l = $k[1]; for (i = 2; i <= n; i++) l = l " " $k[i]; print l }' "$f.fields"; }

# check_psns FILE QPS TOTAL: TOTAL records over QPS destination QPs, each QP's PSNs
# 0..n-1 once each (every record its own message, none lost or repeated).
check_psns() {
	local f=$1 got
	got=$(col "$f" 4 5 | sort | uniq -c |
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
read_pcap "$dir/rx.pcap"
expect_eq "rx.pcap: records" "$(col "$dir/rx.pcap" 1 | wc -l)" 4000
expect_eq "rx.pcap: opcodes" "$(col "$dir/rx.pcap" 2 | sort -u | tr '\n' ' ')" "5 "
# Every record a RoCE v2 packet tshark's InfiniBand dissector takes (its BTH and ICRC
# decoded). What it then guesses a payload holds from its first bytes (an EtherType,
# SMC) is no error of ours: the ICRCs are checked by the unit test (test_pcap_writer).
expect_eq "rx.pcap: records decoded as RoCE v2" "$(col "$dir/rx.pcap" 2 3 | grep -c '^5 4791$')" 4000
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
read_pcap "$dir/tx.pcap"
expect_eq "tx.pcap: records" "$(col "$dir/tx.pcap" 1 | wc -l)" 3000
expect_eq "tx.pcap: opcodes" "$(col "$dir/tx.pcap" 2 | sort -u | tr '\n' ' ')" "4 "
# A gen's messages have not gone over a QP yet: the flow's first QP names them all.
check_psns "$dir/tx.pcap" 1 3000
expect_eq "tx.pcap: records cut to the snaplen (captured/on the wire)" \
	"$(col "$dir/tx.pcap" 6 7 | sort -u | tr '\n' ' ')" "$((14 + 20 + 8 + 12 + 64)) $((14 + 20 + 8 + 12 + 512 + 4)) "

# A file that cannot be written: refused at start, named, nothing sent.
sed -i "s#$dir/tx.pcap#$dir/none/tx.pcap#" "$conf"
run_rdmapipe "$out" -f "$conf"
expect_eq "unwritable file: exit status" "$rc" 3
expect_grep "$out" "stages.\[1\]: capture file $dir/none/tx.pcap: No such file or directory"
expect_no_grep "$out" "^result:"
finish
