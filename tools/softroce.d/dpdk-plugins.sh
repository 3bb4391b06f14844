#!/bin/bash
# dpdk-plugins.sh KEEP CMD...: runs CMD with DPDK's driver plugin folders (pmds-*)
# holding only the plugins KEEP names (comma-separated driver names, e.g. mempool_ring;
# "none": no plugin), each folder replaced by a read-only tmpfs with copies of those
# (tools/softroce --dpdk-plugins). Needs a mount namespace of its own: the guest is
# one; on a host, softroce runs this under unshare -m.
set -u
keep=$1
shift
[[ $keep =~ ^[a-z0-9_,]+$ ]] || { echo "dpdk-plugins.sh: bad list '$keep'" >&2; exit 125; }
IFS=, read -r -a names <<<"$keep"
for d in /usr/lib/*/dpdk/pmds-*; do
	[ -d "$d" ] || continue
	stage=$(mktemp -d /dev/shm/dpdk-plugins.XXXXXX) || exit 125
	for n in "${names[@]}"; do
		[ "$n" = none ] && continue
		files=("$d"/librte_"$n".so*)
		[ -e "${files[0]}" ] || { echo "dpdk-plugins.sh: no plugin '$n' in $d" >&2; exit 125; }
		cp -a "${files[@]}" "$stage/" || exit 125
	done
	{ mount -t tmpfs -o size=64m,mode=0755 dpdk-plugins "$d" && cp -a "$stage"/. "$d"/ &&
		mount -o remount,ro "$d"; } || { echo "dpdk-plugins.sh: cannot replace $d" >&2; exit 125; }
	rm -rf "$stage"
done
exec "$@"
