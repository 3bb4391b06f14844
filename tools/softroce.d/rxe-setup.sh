#!/bin/bash
# Creates or removes the soft-RoCE devices that tools/softroce promises its
# commands. The guest (stage2.sh) and host mode both run this very script so
# the two environments cannot drift apart.
#
#   rxe-setup.sh up [--pair] [--move-local] [--hugepages N] STATE
#   rxe-setup.sh down STATE
#
# up prints the RXE_* environment (NAME=VALUE lines) on stdout, logs on
# stderr, and appends to STATE one undo command per change it made; down
# replays them newest first. Undoing only what was recorded keeps a failed or
# half-done up safe to undo on a host that is not ours to break.
set -euo pipefail

log() { echo "rxe-setup: $*" >&2; }
die() { log "$*"; exit 1; }
undo() { printf '%q ' "$@" >>"$state"; echo >>"$state"; }
# sysctl-like write that records the old value first (procps may be absent).
setproc() {
	local f=/proc/sys/$1 old
	old=$(<"$f")
	[[ $old == "$2" ]] && return
	undo setproc_raw "$f" "$old"
	echo "$2" >"$f"
}
setproc_raw() { echo "$2" >"$1"; }

# Bounded polls: an rxe port goes ACTIVE and gets its IPv4 GID a little after
# its netdev is up; a device that never does is an error, not a hang.
wait_active() {
	local dev=$1 i
	for ((i = 0; i < 100; i++)); do
		[[ $(<"/sys/class/infiniband/$dev/ports/1/state") == *ACTIVE* ]] && return
		sleep 0.1
	done
	die "$dev: port 1 not PORT_ACTIVE after 10 s"
}
# Index of the RoCE v2 GID that carries the device's IPv4 address. Index 0 is
# the link-local IPv6 GID, so never assume it.
roce_v2_ipv4_gid() {
	local p=/sys/class/infiniband/$1/ports/1 i f n
	for ((i = 0; i < 100; i++)); do
		# The table has hundreds of (mostly empty) slots: one grep reads them
		# all, where a shell loop would fork per slot and crawl under TCG.
		while read -r f; do
			n=${f##*/}
			[[ $(<"$p/gid_attrs/types/$n") == "RoCE v2" ]] && { echo "$n"; return; }
		done < <(grep -ls '^0000:0000:0000:0000:0000:ffff:' "$p"/gids/*)
		sleep 0.1
	done
	die "$1: no RoCE v2 IPv4 GID after 10 s"
}
free_name() {
	[[ ! -e /sys/class/net/$1 && ! -e /sys/class/infiniband/$1 ]] ||
		die "$1 already exists (another softroce run, or a clash with this host)"
}
free_net() {
	[[ -z $(ip -4 route show "$1") && -z $(ip -4 addr show to "$1") ]] ||
		die "$1 is already in use on this host; not adding soft-RoCE addresses there"
}
rxe_on() { # rxe_on RXE NETDEV ADDR/LEN
	ip addr add "$3" dev "$2"
	ip link set "$2" up
	rdma link add "$1" type rxe netdev "$2"
	undo rdma link delete "$1"
}

up() {
	local pair=0 move_local=0 hugepages=0
	while (($# > 1)); do
		case $1 in
		--pair) pair=1 ;;
		--move-local) move_local=1 ;;
		--hugepages) hugepages=$2; shift ;;
		*) die "up: unknown option $1" ;;
		esac
		shift
	done
	state=$1
	: >>"$state"

	modprobe -a rdma_rxe dummy veth rdma_ucm
	free_name rxe0; free_name d0; free_net 10.0.0.0/24
	if ((pair)); then
		free_name rxeA; free_name rxeB; free_name vA; free_name vB
		free_net 10.2.0.0/24
	fi

	ip link add d0 type dummy
	undo ip link delete d0
	rxe_on rxe0 d0 10.0.0.1/24

	if ((pair)); then
		# Two "hosts" in one kernel. Network namespaces do not work (rxe's UDP
		# socket and route lookups stay in the initial one), so both veth ends
		# stay here and policy routing makes A->B leave through vA and B->A
		# through vB, instead of short-cutting over lo as local traffic would.
		ip link add vA type veth peer name vB
		undo ip link delete vA
		local i
		for i in all default; do
			setproc "net/ipv4/conf/$i/accept_local" 1
			setproc "net/ipv4/conf/$i/rp_filter" 0
		done
		for i in vA vB; do
			echo 1 >"/proc/sys/net/ipv4/conf/$i/accept_local"
			echo 0 >"/proc/sys/net/ipv4/conf/$i/rp_filter"
		done
		rxe_on rxeA vA 10.2.0.1/24
		rxe_on rxeB vB 10.2.0.2/24
		# Static neighbours: ARP for an address that is local on another
		# interface is not answered.
		ip neigh replace 10.2.0.2 lladdr "$(</sys/class/net/vB/address)" dev vA nud permanent
		ip neigh replace 10.2.0.1 lladdr "$(</sys/class/net/vA/address)" dev vB nud permanent
		ip route add 10.2.0.2/32 dev vA src 10.2.0.1 table 101
		ip route add 10.2.0.1/32 dev vB src 10.2.0.2 table 102
		ip rule add pref 10 iif lo from 10.2.0.1 to 10.2.0.2 lookup 101
		undo ip rule del pref 10 iif lo from 10.2.0.1 to 10.2.0.2 lookup 101
		ip rule add pref 10 iif lo from 10.2.0.2 to 10.2.0.1 lookup 102
		undo ip rule del pref 10 iif lo from 10.2.0.2 to 10.2.0.1 lookup 102
		# The local table, looked up first by default, would route both
		# directions over lo. Moving it below our rules changes how this
		# whole machine routes, hence only on request (always in the VM).
		if ((move_local)) && ip rule show pref 0 | grep -qw local; then
			ip rule add pref 100 lookup local
			undo ip rule del pref 100 lookup local
			ip rule del pref 0 lookup local
			undo ip rule add pref 0 lookup local
		fi
	fi

	if ((hugepages > 0)); then
		local have
		have=$(</proc/sys/vm/nr_hugepages)
		((have >= hugepages)) || setproc vm/nr_hugepages "$hugepages"
		have=$(</proc/sys/vm/nr_hugepages)
		((have >= hugepages)) || log "only $have of $hugepages hugepages could be reserved"
		if ! grep -qs ' /dev/hugepages hugetlbfs ' /proc/mounts; then
			mkdir -p /dev/hugepages
			mount -t hugetlbfs hugetlbfs /dev/hugepages
			undo umount /dev/hugepages
		fi
	fi

	local devs=(rxe0) d
	((pair)) && devs+=(rxeA rxeB)
	for d in "${devs[@]}"; do wait_active "$d"; done

	echo "RXE_LOOP_DEV=rxe0"
	echo "RXE_LOOP_ADDR=10.0.0.1"
	echo "RXE_LOOP_GID=$(roce_v2_ipv4_gid rxe0)"
	if ((pair)); then
		echo "RXE_A_DEV=rxeA"
		echo "RXE_A_ADDR=10.2.0.1"
		echo "RXE_A_GID=$(roce_v2_ipv4_gid rxeA)"
		echo "RXE_B_DEV=rxeB"
		echo "RXE_B_ADDR=10.2.0.2"
		echo "RXE_B_GID=$(roce_v2_ipv4_gid rxeB)"
	fi
}

down() {
	state=$1
	[[ -f $state ]] || return 0
	local cmd
	# Best effort: every recorded change gets its undo, even after a failure.
	while IFS= read -r cmd; do
		eval "$cmd" || log "undo failed: $cmd"
	done < <(tac "$state")
	: >"$state"
}

case ${1-} in
up | down) "$@" ;;
*) die "usage: $0 up [--pair] [--move-local] [--hugepages N] STATE | down STATE" ;;
esac
