#!/usr/bin/env bash
# doc_commands.py fails what it must: a command that fails, a #> line not printed, a
# background block that never prints its first line, a kind with no block; and
# passes a document whose commands do what it shows.
set -u
RUN=${1:?usage: doc_commands.sh PATH/TO/doc_commands.py SOURCE BUILD}
SRC=${2:?} BUILD=${3:?}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fails=0
doc() {   # KINDS: run $d/doc.md's blocks of KINDS; sets $rc and $out
	out=$(python3 "$RUN" "$d/doc.md" "$1" --source "$SRC" --build "$BUILD" --map rxe9=loop0 2>&1)
	rc=$?
}
expect() {   # WHAT RC PATTERN: the last doc's exit and a line of its output
	if [ "$rc" = "$2" ] && grep -qE -- "$3" <<<"$out"; then echo "ok: $1"; else
		echo "FAIL: $1 (exit $rc, want $2 and /$3/):"; echo "$out"; fails=$((fails + 1)); fi
}
fence='```'
cat >"$d/doc.md" <<EOF
${fence}sh
echo "rate 12.5 Mmsg/s on rxe9"
#> rate ... Mmsg/s on loop0
${fence}
${fence}sh
echo one
#> two
${fence}
${fence}sh
false
echo after
${fence}
${fence}sh rxe bg
echo ready; sleep 0.2; echo done
#> ready
#> done
${fence}
${fence}sh rxe
echo client
#> client
${fence}
${fence}sh mpirun bg
exit 0
#> never
${fence}
EOF
doc host
expect "a #> line with ... and a --map'd name" 1 '^ok: line 1: echo "rate 12.5'
expect "a #> line not printed" 1 '^FAIL: line 5: echo one: no line "two"'
expect "a command that fails" 1 '^FAIL: line 9: false: exit 1'
expect "the counts" 1 '^doc commands: 1 passed, 2 failed$'
doc rxe
expect "a background block and the next" 0 '^ok: line 13: echo ready'
doc mpirun
expect "a background block that ends before its first line" 1 '^FAIL: line 22: exit 0: no "never"'
doc two-hosts
expect "a kind with no block" 1 'has no ```sh two-hosts block'
[ "$fails" = 0 ] && echo "doc_commands: all checks passed" || exit 1
