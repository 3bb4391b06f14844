#!/usr/bin/env bash
# rdmapipe-explore's man page and bash completion against its --help, as man.sh and
# completion.sh check rdmapipe's: every option 'rdmapipe-explore --help' prints is
# documented in the page and offered by the completion (before "--", or after it for
# the children's EAL options the help names), every option the page's OPTIONS and the
# completion offer is in --help (nothing stale), the exit statuses are under EXIT
# STATUS, the page renders without groff warnings, and the completion gives space files
# after -f, directories after -o and the strategies after --strategy, with
# bash-completion's helpers and without them. No RDMA needed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
usage="usage: explore_docs.sh PATH/TO/rdmapipe-explore PATH/TO/rdmapipe-explore.1 PATH/TO/rdmapipe-explore.bash"
B=${1:?$usage}
PAGE=${2:?$usage}
COMP=$(realpath "${3:?$usage}")
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
help=$("$B" --help) || { echo "FAIL: rdmapipe-explore --help exited $?"; exit 1; }
# The options --help names: "-f, --space FILE", "--repeats N, --need M", "(-l 0-1 ...)".
opts=$(grep -oE -- '(^|[ ,(])--[a-z][a-z-]*[a-z]|(^|[ ,(])-[a-zA-Z]\b' <<<"$help" | sed 's/^[ ,(]//' | sort -u)
n=$(wc -w <<<"$opts")
[ "$n" -ge 15 ] || fail "only $n options found in --help: the extraction broke"
echo "checked $n options of --help: $(tr '\n' ' ' <<<"$opts")"

# The options the page documents: its .TP headers under OPTIONS.
documented=$(awk '/^\.SH OPTIONS/ { on = 1; next } /^\.SH/ { on = 0 } on && prev == ".TP" { print } { prev = $0 }' "$PAGE" |
	sed 's/\\-/-/g; s/\\f[BIRP]//g' | grep -oE -- '(^|[ ,"])--?[a-zA-Z][a-z-]*' | sed 's/^[ ,"]//' | sort -u)
[ "$(wc -w <<<"$documented")" -ge 15 ] || fail "only $(wc -w <<<"$documented") options found under OPTIONS: the extraction broke"
# The page, as text with plain hyphens (roff writes them \-).
text=$(sed 's/\\-/-/g; s/\\&//g; s/\\f[BIRP]//g' "$PAGE")
# EAL's options (the children's, after "--"): the help may name them, the page need only
# mention them.
eal=" -l -c --lcores --main-lcore -m --in-memory --no-huge --no-pci --file-prefix --no-shconf --log-level --syslog --huge-dir --socket-mem "
for o in $opts; do
	grep -qxF -- "$o" <<<"$documented" && continue
	if [[ $eal == *" $o "* ]]; then
		grep -qE -- "(^|[^a-z-])$o([^a-z-]|$)" <<<"$text" || fail "$o (EAL's) is in --help but not in the man page"
	else
		fail "$o is in --help but not under the man page's OPTIONS"
	fi
done
for o in $documented; do
	grep -qxF -- "$o" <<<"$opts" || fail "the man page documents $o, which --help does not name"
done
for s in 0 1 2 3 130; do
	sed -n '/^\.SH EXIT STATUS/,/^\.SH [^E]/p' "$PAGE" | grep -qE "^\.B(R)? $s( |$)" ||
		fail "exit status $s is not under EXIT STATUS"
done
warn=$(groff -man -Tutf8 -ww -z "$PAGE" 2>&1)
[ -z "$warn" ] || fail "groff warns: $warn"

# The completion, in a non-interactive bash.
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/cwd/sub"
touch "$dir/cwd/a.conf" "$dir/cwd/b.txt"
for helpers in with without; do
	out=$(cd "$dir/cwd" && HELPERS=$helpers COMP="$COMP" WORDS="$here/words.sh" OPTS="$opts" bash --norc --noprofile <<'SH'
[ "$HELPERS" = with ] && [ -f /usr/share/bash-completion/bash_completion ] && . /usr/share/bash-completion/bash_completion
. "$COMP"
. "$WORDS"
complete_line() {   # the words of a command line, the last one being completed
	COMP_WORDS=("$@")
	COMP_CWORD=$(($# - 1))
	COMP_LINE="$*"
	COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	_rdmapipe_explore rdmapipe-explore "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
	words "${COMPREPLY[@]}"
	echo
}
for o in $OPTS; do   # each option of --help, completed from itself, before "--" or after
	before=" $(complete_line rdmapipe-explore "$o")"
	after=" $(complete_line rdmapipe-explore -- "$o")"
	[[ $before == *" $o "* ]] && echo "opt|$o|before" && continue
	[[ $after == *" $o "* ]] && echo "opt|$o|after" && continue
	echo "opt|$o|missing"
done
echo "all|$(complete_line rdmapipe-explore -)"
echo "space|$(complete_line rdmapipe-explore -f '')"
echo "spacelong|$(complete_line rdmapipe-explore -q --space a)"
echo "out|$(complete_line rdmapipe-explore -o '')"
echo "strategy|$(complete_line rdmapipe-explore --strategy '')"
echo "strategyeq|$(complete_line rdmapipe-explore --strategy=r)"
echo "perf|$(complete_line rdmapipe-explore --perf)"
echo "budget|$(complete_line rdmapipe-explore --budget '')"
echo "eal|$(complete_line rdmapipe-explore -f a.conf -- --in)"
SH
)
	for o in $opts; do
		where=$(grep -F -- "opt|$o|" <<<"$out" | cut -d'|' -f3)
		[ "$where" = before ] || [ "$where" = after ] ||
			fail "$helpers helpers: $o is in --help but the completion does not offer it ($where)"
	done
	# Every option offered before "--" is in --help (nothing stale).
	for o in $(sed -n 's/^all|//p' <<<"$out"); do
		[ "$o" = -- ] || grep -qxF -- "$o" <<<"$opts" ||
			fail "$helpers helpers: the completion offers $o, which --help does not name"
	done
	expect() {   # key wanted-line
		local got
		got=$(sed -n "s/^$1|//p" <<<"$out")
		if [ "$got" != "$2" ]; then
			fail "$helpers helpers: $1: got '$got', want '$2'"
		else
			echo "ok: $helpers helpers: $1: $got"
		fi
	}
	expect space "a.conf sub "
	expect spacelong "a.conf "
	expect out "sub "
	expect strategy "anneal grid random "
	expect strategyeq "random "
	expect perf "--perf-flag "
	expect budget " "
	expect eal "--in-memory "
done
[ "$fails" -eq 0 ] && echo "explore_docs: all checks passed" && exit 0
echo "explore_docs: $fails check(s) failed"
exit 1
