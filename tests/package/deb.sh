#!/usr/bin/env bash
# The Debian package: dpkg-buildpackage -b -us -uc on a clean copy of the tree (what
# git tracks, and new files it does not ignore), its Depends computed by
# dh_shlibdeps, its contents, then installed with dpkg --root into an empty root and
# run from there: --version, and --check on an installed example pipeline.
set -u
src=${1:?usage: deb.sh SOURCE_DIR}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

mkdir "$work/src"
(cd "$src" && git ls-files -co --exclude-standard -z | tar --null -T - -c) | tar -x -C "$work/src" ||
	{ echo "FAIL: cannot copy the tree"; exit 1; }
t0=$SECONDS
# What is checked here is the packaging (the build through debian/rules, each file
# compiled alone as a distribution builds it, Depends, the files and where they go, the
# binaries run from an empty root), the same with any compiler and optimisation:
# DEB_BUILD_OPTIONS=noopt (Debian's own option: -O0), clang, no debug info. Each file
# alone took 118 s of compiling with gcc -O0 -g1 here, 76 s with clang -O0 -g0. The
# optimised code is what build/ and build-san/ test (the integration suite, the
# sanitizers). A release build takes debian/rules' compiler and flags as they are.
if ! (cd "$work/src" && CC=clang CXX=clang++ DEB_BUILD_OPTIONS="parallel=$(nproc) noopt" \
	DEB_CFLAGS_APPEND=-g0 DEB_CXXFLAGS_APPEND=-g0 \
	dpkg-buildpackage -b -us -uc >"$work/build.log" 2>&1); then
	echo "FAIL: dpkg-buildpackage -b -us -uc; the end of its log:"
	tail -n 60 "$work/build.log"
	exit 1
fi
echo "ok: dpkg-buildpackage -b -us -uc in $((SECONDS - t0)) s"
deb=$(ls "$work"/rdmapipe_*.deb 2>/dev/null | head -n 1)
[ -n "$deb" ] || { echo "FAIL: no rdmapipe_*.deb next to the tree"; ls "$work"; exit 1; }
echo "package: $(basename "$deb")"

# Depends: the shared libraries dh_shlibdeps found, not a hand-written list.
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
for lib in libibverbs1 librdmacm1 'libconfig\+\+9v5' libopenmpi3 librte-eal23 librte-mempool23 librte-mempool-ring23 librte-ring23 librte-telemetry23 libpcap0.8 libc6; do
	grep -qE "(^|, )$lib( |,|$)" <<<"$depends" || fail "Depends lacks $lib"
done

contents=$(dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|')
for f in /usr/bin/rdmapipe /usr/share/man/man1/rdmapipe.1.gz /usr/share/bash-completion/completions/rdmapipe \
	/usr/bin/rdmapipe-explore /usr/share/man/man1/rdmapipe-explore.1.gz /usr/share/bash-completion/completions/rdmapipe-explore \
	/usr/libexec/rdmapipe/plot-explore /usr/share/doc/rdmapipe/explore.md \
	/usr/lib/systemd/system/rdmapipe@.service /usr/share/doc/rdmapipe/metrics.md \
	/usr/share/doc/rdmapipe/prometheus/rules.yml /usr/share/doc/rdmapipe/grafana/rdmapipe.json \
	/usr/share/rdmapipe/results.schema.json /usr/share/rdmapipe/job-results.schema.json /usr/share/doc/rdmapipe/README.md /usr/share/doc/rdmapipe/configuration.md \
	/usr/share/doc/rdmapipe/copyright; do
	grep -qxE -- "$f(\.gz)?" <<<"$contents" || fail "the package lacks $f"   # dh_compress gzips large docs
done
for c in "$src"/conf/*.conf; do
	grep -qx -- "/usr/share/rdmapipe/conf/$(basename "$c")" <<<"$contents" || fail "the package lacks conf/$(basename "$c")"
done

# An empty root with a dpkg database. --force-depends: the root has none of the
# libraries the package depends on; the binary then runs with this host's.
root=$work/root
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" "$root/var/lib/dpkg/triggers"
touch "$root/var/lib/dpkg/status" "$root/var/lib/dpkg/available"
if ! dpkg --root="$root" --force-depends --force-not-root -i "$deb" >"$work/install.log" 2>&1; then
	echo "FAIL: dpkg --root -i:"; cat "$work/install.log"; exit 1
fi
dpkg --root="$root" -s rdmapipe 2>/dev/null | grep -q "^Status: install ok installed" || fail "dpkg --root does not list rdmapipe as installed"
echo "ok: installed into $root"

out=$("$root/usr/bin/rdmapipe" --version 2>&1) || fail "rdmapipe --version exited $?"
echo "$out"
grep -qE "^rdmapipe $(dpkg-deb -f "$deb" Version | sed 's/-[^-]*$//; s/\./\\./g')$" <<<"$out" || fail "--version does not print the package's version"
grep -qE "^DPDK [0-9]+\.[0-9]+" <<<"$out" || fail "--version does not print DPDK's version"
grep -qE "^rdma-core [0-9]+" <<<"$out" || fail "--version does not print rdma-core's version"
out=$("$root/usr/bin/rdmapipe" -l 0-1 --check "$root/usr/share/rdmapipe/conf/default.conf" 2>&1) ||
	fail "--check on the installed default.conf exited $?: $out"
grep -q "default.conf: valid (schema 1)" <<<"$out" || fail "--check: $out"
echo "$out" | head -n 1
page=$root/usr/share/man/man1/rdmapipe.1.gz
if [ -s "$page" ] && zcat "$page" | grep -q '^\.TH RDMAPIPE 1'; then
	echo "ok: the man page is gzipped and starts as rdmapipe(1)"
else
	fail "the installed man page is missing or not rdmapipe(1)"
fi
bash -n "$root/usr/share/bash-completion/completions/rdmapipe" || fail "the installed completion does not parse"
# The service, as installed, its command the root's (the root has no systemd of its
# own for --root): systemd-analyze has nothing to say.
sed "s|^ExecStart=/usr/bin/rdmapipe |ExecStart=$root/usr/bin/rdmapipe |" "$root/usr/lib/systemd/system/rdmapipe@.service" \
	>"$work/rdmapipe@.service"
if grep -q "^ExecStart=$root/usr/bin/rdmapipe " "$work/rdmapipe@.service" &&
	out=$(systemd-analyze verify --man=no "$work/rdmapipe@.service" 2>&1) && [ -z "$out" ]; then
	echo "ok: systemd-analyze verify: the installed rdmapipe@.service"
else
	fail "systemd-analyze verify of the installed rdmapipe@.service: $out"
fi
out=$("$root/usr/bin/rdmapipe-explore" --check -f "$root/usr/share/rdmapipe/conf/explore-default.conf" 2>&1) ||
	fail "rdmapipe-explore --check on the installed explore-default.conf exited $?: $out"
echo "$out" | cut -c1-100

[ "$fails" -eq 0 ] && echo "deb: all checks passed" && exit 0
echo "deb: $fails check(s) failed"
exit 1
