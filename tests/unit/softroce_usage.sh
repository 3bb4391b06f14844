#!/usr/bin/env bash
# tools/softroce refuses a bad option before it sets anything up (exit 2, naming the
# option), a CPU model qemu lacks included: not qemu's error once the guest is built.
set -u
sr=${1:?usage: softroce_usage.sh PATH/TO/tools/softroce}
fails=0
# refused WHAT PATTERN ARGS...: softroce ARGS exits 2 and prints PATTERN.
refused() {
	local what=$1 pat=$2 out rc
	shift 2
	out=$("$sr" --mode vm "$@" -- true 2>&1)
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
[ $fails -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
