#!/usr/bin/env bash
# tools/softroce refuses a bad option before it sets anything up (exit 2, naming the
# option), a CPU model qemu lacks included: not qemu's error once the guest is built;
# and --kernel picks the cached kernel of its series without fetching one.
set -u
sr=${1:?usage: softroce_usage.sh PATH/TO/tools/softroce}
fails=0
# A cache of our own, and apt-get and apt-cache that fail: a check that is broken
# fails here rather than fetching a kernel or touching the shared cache.
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
mkdir -p "$w/bin" "$w/empty"
for a in apt-get apt-cache; do
	printf '#!/bin/sh\necho "FETCHED: %s $*"; exit 1\n' "$a" >"$w/bin/$a"
	chmod +x "$w/bin/$a"
done
# refused WHAT PATTERN ARGS...: softroce ARGS exits 2 and prints PATTERN.
refused() {
	local what=$1 pat=$2 out rc
	shift 2
	out=$(PATH=$w/bin:$PATH "$sr" --mode vm --cache "$w/empty" "$@" -- true 2>&1)
	rc=$?
	if [ $rc -eq 2 ] && grep -qE -- "$pat" <<<"$out"; then
		echo "ok: $what"
	else
		echo "FAIL: $what: exit $rc, output: $out"
		fails=$((fails + 1))
	fi
}
command -v qemu-system-x86_64 >/dev/null || { echo "FAIL: no qemu-system-x86_64 (tools/install-deps installs it)"; exit 1; }
refused "a CPU model qemu lacks" "--cpu-model: qemu has no CPU model 'Nehalemm'" --cpu-model Nehalemm
refused "a CPU model's features on one qemu lacks" "qemu has no CPU model 'nope'" --cpu-model nope,+avx
refused "a CPU model that is no name" "--cpu-model wants a qemu CPU model" --cpu-model 'max; reboot'
refused "no CPUs" "--timeout, --mem or --cpus too small" --cpus 0
refused "a plugin list that is no list" "--dpdk-plugins wants driver names" --dpdk-plugins 'ring,,x'
refused "an unknown option" "unknown option: --nope" --nope
refused "a kernel series we do not fetch" "--kernel takes 6.1 or 6.12, not '5.10'" --kernel 5.10
refused "an empty kernel series" "--kernel takes 6.1 or 6.12, not ''" --kernel ''
refused "a kernel series in host mode" "--kernel chooses the VM's kernel" --mode host --kernel 6.12
refused "a console file in host mode" "--console keeps the VM's console" --mode host --console "$w/c.log"
refused "a console file qemu cannot take" "--console '$w/a,b' contains a comma" --console "$w/a,b"
refused "a console file that cannot be written" "--console: cannot write '$w/no/such/c.log'" --console "$w/no/such/c.log"
refused "--stdin with --shell" "--stdin is for a command; --shell reads the terminal" --stdin --shell

# --kernel picks its series' kernel from a cache that holds both, and the default
# stays 6.1 (the newest folder overall is 6.12). Fake kernels whose virtio, 9p and
# overlay are built in: nothing to fetch, nothing to boot.
for kv in 6.1.0-1-amd64 6.1.0-2-amd64 6.12.1+deb12-amd64; do
	m=$w/cache/kernel-$kv/root/lib/modules/$kv
	mkdir -p "$m"
	: >"$w/cache/kernel-$kv/vmlinuz"
	: >"$w/cache/kernel-$kv/vmlinux.none"
	printf 'kernel/%s.ko\n' virtio_pci 9pnet_virtio 9p overlay >"$m/modules.builtin"
	depmod -b "$w/cache/kernel-$kv/root" "$kv" 2>/dev/null
done
# prepared WHAT KVER ARGS...: softroce --prepare ARGS picks the cached kernel KVER.
prepared() {
	local what=$1 kv=$2 out rc
	shift 2
	out=$(PATH=$w/bin:$PATH "$sr" --cache "$w/cache" "$@" --prepare 2>&1)
	rc=$?
	if [ $rc -eq 0 ] && grep -qF "cache ready: $w/cache/kernel-$kv (kernel $kv)" <<<"$out"; then
		echo "ok: $what"
	else
		echo "FAIL: $what: exit $rc, output: $out"
		fails=$((fails + 1))
	fi
}
prepared "no --kernel: 6.1, as before there was a choice" 6.1.0-2-amd64
prepared "--kernel 6.12 from the cache" 6.12.1+deb12-amd64 --kernel 6.12
prepared "--kernel 6.1 from the cache" 6.1.0-2-amd64 --kernel=6.1
# Each kernel keeps its own initramfs.
for kv in 6.1.0-2-amd64 6.12.1+deb12-amd64; do
	set -- "$w/cache/initramfs-$kv-"*.cpio
	if [ $# -eq 1 ] && [ -f "$1" ]; then
		echo "ok: the initramfs of $kv kept"
	else
		echo "FAIL: initramfs of $kv: $*"
		fails=$((fails + 1))
	fi
done
[ $fails -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
