#!/usr/bin/env bash
# RoCE traffic parameters on the wire: a client on rxeA and a server on rxeB (rdma_cm,
# across the veth wire) with --tclass, --flow-label and --flow-label-spread; tcpdump
# captures vA, and every packet of their data QPs must carry the IP TOS byte (DSCP and
# ECN) asked for, and the QPs' UDP source ports must be exactly those their flow
# labels map to, one per QP, both ways (the server's ACKs too). Then the same without
# them (TOS 0), a loopback flow connected directly with its own GID index and class,
# and the refusals: what the kernel or rxe does not keep (a hop limit on RoCE, an SL
# on rxe), a GID index the device has not, a GID index through rdma_cm.
. "$(dirname "$0")/lib.sh"
port=18900
. "$(dirname "$0")/remote_lib.sh"
need_device
wire_ready || finish
command -v tcpdump >/dev/null || skip_or_fail "tcpdump is missing (tools/install-deps installs it)"
command -v tshark >/dev/null || skip_or_fail "tshark is missing (tools/install-deps installs it)"
cap=$(mktemp -d)
on_exit 'rm -rf "$cap"'

# capture_start FILE: tcpdump on vA (both directions) into FILE, once it listens.
capture_start() {
	run_bg "$1.log" tcpdump -i vA -nn -U -w "$1" 'udp port 4791'
	tpid=$bg_pid
	await "tcpdump listening on vA" "$1.log" has_line "$1.log" "listening on vA"
}
capture_stop() { kill -INT "$tpid"; wait "$tpid"; }
# read_pcap FILE: "src dscp ecn ttl sport" of each data-QP packet (BTH dest QP not 1:
# not rdma_cm's MADs), into FILE.rows: one tshark pass a capture (a start costs seconds
# in the guest). rows FILE SRC: the "dscp ecn ttl sport" of those SRC sent.
read_pcap() {
	tshark -r "$1" -d udp.port==4791,infiniband -Y "infiniband.bth.destqp != 1" -T fields \
		-E separator=" " -e ip.src -e ip.dsfield.dscp -e ip.dsfield.ecn -e ip.ttl -e udp.srcport 2>/dev/null >"$1.rows"
}
rows() { awk -v src="$2" '$1 == src { print $2, $3, $4, $5 }' "$1.rows"; }
# sport_of LABEL: the UDP source port a flow label maps to (rdma_flow_label_to_udp_sport).
sport_of() { echo $(((($1 & 0x3fff) ^ ($1 >> 14)) | 0xc000)); }

# Class 0x62 (DSCP 24, ECN 2 = ECT(0)), labels 100..103 on 4 QPs.
traffic=(--tclass 0x62 --flow-label 100 --flow-label-spread)
capture_start "$cap/set.pcap"
pair "traffic set" -v write_imm -Q 4 -n 4000 "${traffic[@]}"
capture_stop
read_pcap "$cap/set.pcap"
expect_eq "traffic set: server verified" "$(field "$sout" 'messages verified')" 4000
expect_grep "$cout" "^  connected: +RC, rdma_cm from .*; traffic_class 0x62, flow_label 100 \+ QP index$"
want_ports=$(for l in 100 101 102 103; do sport_of $l; done | sort -n | tr '\n' ' ')
for end in "$A_ADDR client" "$B_ADDR server"; do
	read -r addr who <<<"$end"
	rows "$cap/set.pcap" "$addr" >"$cap/rows"
	n=$(wc -l <"$cap/rows")
	[ "$n" -ge 100 ] && echo "ok: $who: $n data packets captured" || { echo "FAIL: $who: $n data packets captured"; fails=$((fails + 1)); }
	expect_eq "$who: DSCP ECN TTL of every packet" "$(cut -d' ' -f1-3 "$cap/rows" | sort -u | tr '\n' ' ')" "24 2 64 "
	expect_eq "$who: UDP source ports (labels 100..103)" "$(cut -d' ' -f4 "$cap/rows" | sort -nu | tr '\n' ' ')" "$want_ports"
done

# A job: two ranks under mpirun, rank 0 on rxeA and rank 1 on rxeB, each sending to
# the other with the flow's class and labels from the file (rdma_cm, as jobs connect).
if command -v mpirun >/dev/null && ldd "$RDMAPIPE" | grep -q libmpi; then
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	cat >"$cap/job.conf" <<CONF
version = 1;
devices = ( { name = "$A"; } );
io_contexts = ( { lcore = 0; device = "$A"; } );
flows = ( { name = "f"; verb = "write_imm"; size = 256; qps = 2; messages = 2000;
            traffic_class = 0x8a; flow_label = 300; flow_label_spread = true; } );
stages = ( { name = "tx"; kind = "rdma_tx"; flow = "f"; lcore = 0; },
           { name = "rx"; kind = "rdma_rx"; flow = "f"; lcore = 0; } );
pattern = { kind = "pairs"; devices = ["$A", "$B"]; };
CONF
	capture_start "$cap/job.pcap"
	timeout -k 5 300 mpirun --oversubscribe -np 2 "$RDMAPIPE" --lcores '0@(0,1)' --no-huge -m 192 --no-pci \
		--log-level=lib.eal:error -- -f "$cap/job.conf" >"$cap/job.out" 2>&1
	rc=$?
	capture_stop
	cat "$cap/job.out"
	expect_eq "job: mpirun exit" "$rc" 0
	expect_grep "$cap/job.out" "^job result: PASS$"
	read_pcap "$cap/job.pcap"
	job_ports=$(for l in 300 301; do sport_of $l; done | sort -n | tr '\n' ' ')
	for addr in "$A_ADDR" "$B_ADDR"; do
		rows "$cap/job.pcap" "$addr" >"$cap/rows"
		expect_eq "job, from $addr: DSCP ECN TTL" "$(cut -d' ' -f1-3 "$cap/rows" | sort -u | tr '\n' ' ')" "34 2 64 "
		expect_eq "job, from $addr: UDP source ports (labels 300, 301)" "$(cut -d' ' -f4 "$cap/rows" | sort -nu | tr '\n' ' ')" "$job_ports"
	done
else
	part_skipped "traffic in a job: no mpirun, or $RDMAPIPE built without MPI"
fi

# Left out: TOS 0, and still a port per QP (rdma_cm's label per connection).
capture_start "$cap/default.pcap"
pair "traffic default" -v write_imm -Q 4 -n 4000
capture_stop
read_pcap "$cap/default.pcap"
rows "$cap/default.pcap" "$A_ADDR" >"$cap/rows"
expect_eq "default: DSCP ECN TTL" "$(cut -d' ' -f1-3 "$cap/rows" | sort -u | tr '\n' ' ')" "0 0 64 "
nports=$(cut -d' ' -f4 "$cap/rows" | sort -u | wc -l)
[ "$nports" -ge 2 ] && echo "ok: default: $nports UDP source ports for 4 QPs" || { echo "FAIL: default: $nports UDP source ports for 4 QPs"; fails=$((fails + 1)); }

# Directly connected (no rdma_cm), in one process: the same settings take, here with a
# GID index given by the flow (the device's RoCE v2 IPv4 one, picked from sysfs).
# rxe's table has 1,024 entries: read with builtins, stopping at the first (a cat and a
# grep an entry cost 50 s in the guest).
gid_idx=
for f in /sys/class/infiniband/"$DEV"/ports/1/gid_attrs/types/*; do
	i=${f##*/} t= g=
	read -r t 2>/dev/null <"$f"
	read -r g 2>/dev/null <"/sys/class/infiniband/$DEV/ports/1/gids/$i"
	[ "$t" = "RoCE v2" ] && [[ $g == 0000:0000:0000:0000:0000:ffff:* ]] && { gid_idx=$i; break; }
done
if [ -z "$gid_idx" ]; then   # the rest names a GID index: nothing to run without one
	echo "FAIL: $DEV port 1 has no RoCE v2 IPv4-mapped GID (gid_attrs/types, gids)"
	fails=$((fails + 1))
	finish
fi
scratch_files
cat >"$conf" <<CONF
version = 1;
devices = ( { name = "$DEV"; } );
pools = ( { name = "p"; elt_size = 256; count = 4096; } );
flows = ( { name = "f"; verb = "send"; size = 256; qps = 3; messages = 3000; pool = "p";
            traffic_class = 0x62; flow_label = 7; flow_label_spread = true; gid_index = $gid_idx; } );
stages = ( { name = "tx"; kind = "rdma_tx"; lcore = 0; flow = "f"; },
           { name = "rx"; kind = "rdma_rx"; lcore = 1; flow = "f"; } );
run = { connect = "direct"; };
CONF
run_rdmapipe "$out" -f "$conf"
expect_eq "direct, gid_index $gid_idx: exit status" "$rc" 0
expect_eq "direct: verified" "$(field "$out" 'messages verified')" 3000
# What does not take is refused at start, naming it: RoCE's hop limit is the IP
# route's (the kernel replaces the QP's), and rxe keeps no service level.
run_rdmapipe "$out" -d "$DEV" -n 100 --hop-limit 17
expect_eq "--hop-limit on RoCE: exit status" "$rc" 3
expect_grep "$out" "hop_limit 17 did not take: its address vector holds 64 \(on RoCE the kernel takes the IP route's hop limit"
run_rdmapipe "$out" -d "$DEV" -n 100 --sl 3 --connect direct
expect_eq "--sl on rxe: exit status" "$rc" 3
expect_grep "$out" "sl 3 did not take: its address vector holds 0"
# A GID index the device has not: refused at start, naming it and the valid ones.
sed -i "s/gid_index = $gid_idx;/gid_index = 200;/" "$conf"
run_rdmapipe "$out" -f "$conf"
expect_eq "gid_index 200: exit status" "$rc" 3
expect_grep "$out" "gid_index: $DEV port 1: GID index 200 holds no valid GID \(valid: [0-9, ]+\)"
# Through rdma_cm the GID is the address's: refused before anything starts.
sed -i 's/run = { connect = "direct"; };/run = { connect = "cm"; };/' "$conf"
run_rdmapipe "$out" -f "$conf"
expect_eq "gid_index through rdma_cm: exit status" "$rc" 2
expect_grep "$out" "flows.\[0\].gid_index: flow 'f' connects through rdma_cm, whose GID is its IP address's"

finish
