#!/usr/bin/env bash
# The bash completion (app/rdmapipe/rdmapipe.bash) in a non-interactive bash, with
# bash-completion's helpers when installed: options after "--" come from the binary's
# --help, verbs after -v, .conf files and directories after -f, fixed choices after
# --cq-api, EAL options before "--".
set -u
B=${1:?usage: completion.sh PATH/TO/rdmapipe PATH/TO/rdmapipe.bash}
COMP=$(realpath "${2:?usage: completion.sh PATH/TO/rdmapipe PATH/TO/rdmapipe.bash}")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/bin" "$dir/cwd/sub"
ln -s "$(cd "$(dirname "$B")" && pwd)/$(basename "$B")" "$dir/bin/rdmapipe"
ln -s rdmapipe "$dir/bin/rdmapipe-perftest"
touch "$dir/cwd/a.conf" "$dir/cwd/b.txt"
fails=0
for helpers in with without; do
	out=$(cd "$dir/cwd" && PATH="$dir/bin:$PATH" HELPERS=$helpers COMP="$COMP" bash --norc --noprofile <<'SH'
[ "$HELPERS" = with ] && [ -f /usr/share/bash-completion/bash_completion ] && . /usr/share/bash-completion/bash_completion
. "$COMP"
complete_line() {   # the words of a command line, the last one being completed
	COMP_WORDS=("$@")
	COMP_CWORD=$(($# - 1))
	COMP_LINE="$*"
	COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	_rdmapipe rdmapipe "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
	printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' '
	echo
}
echo "ve|$(complete_line rdmapipe -- --ve)"
echo "verb|$(complete_line rdmapipe -l 0-1 -- -v wr)"
echo "file|$(complete_line rdmapipe -- -f '')"
echo "check|$(complete_line rdmapipe --che)"
echo "checkfile|$(complete_line rdmapipe -l 0-1 --check a)"
echo "cqapi|$(complete_line rdmapipe -- --cq-api '')"
echo "eal|$(complete_line rdmapipe --in)"
echo "inject|$(complete_line rdmapipe -- --inject-r)"
perftest_line() {   # rdmapipe-perftest's: its tests, then perftest's flags from its --help
	COMP_WORDS=("$@")
	COMP_CWORD=$(($# - 1))
	COMPREPLY=()
	_rdmapipe_perftest
	printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' '
	echo
}
echo "pttest|$(perftest_line rdmapipe-perftest ib_send_l)"
echo "ptflag|$(perftest_line rdmapipe-perftest ib_send_bw --report_)"
echo "ptconn|$(perftest_line rdmapipe-perftest ib_send_bw -c '')"
SH
)
	expect() {   # key wanted-line
		local got
		got=$(sed -n "s/^$1|//p" <<<"$out")
		if [ "$got" != "$2" ]; then
			echo "FAIL: $helpers helpers: $1: got '$got', want '$2'"
			fails=$((fails + 1))
		else
			echo "ok: $helpers helpers: $1: $got"
		fi
	}
	expect ve "--verb --version "
	expect verb "write write_imm "
	expect file "a.conf sub "
	expect check "--check "
	expect checkfile "a.conf "
	expect cqapi "classic ex "
	expect eal "--in-memory "
	expect inject "--inject-rnr "
	expect pttest "ib_send_lat "
	expect ptflag "--report_gbits "
	expect ptconn "RC UC "
done
[ "$fails" -eq 0 ] && echo "completion: all checks passed" && exit 0
echo "completion: $fails check(s) failed"
exit 1
