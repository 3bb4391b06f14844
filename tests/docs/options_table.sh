#!/usr/bin/env bash
# The man page and the bash completion against the options table (options_doc prints
# it): the page's OPTIONS headers are the table's rows (name, letter, argument) and
# main's own two; the completion offers every option, the table's fixed choices after
# each that has them, files after those taking a FILE, and no words after the others.
set -u
here=$(cd "$(dirname "$0")" && pwd)
usage='usage: options_table.sh PATH/TO/options_doc PATH/TO/rdmapipe PATH/TO/rdmapipe.bash PATH/TO/rdmapipe.1'
DOC=${1:?$usage}
B=${2:?$usage}
COMP=$(realpath "${3:?$usage}")
PAGE=${4:?$usage}
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# Man page: the line after each .TP of OPTIONS. --check and --eal-help are main's,
# taken before EAL's arguments, not the table's.
page=$(awk '/^\.SH OPTIONS/ { on = 1; next } /^\.SH/ { on = 0 } on && prev == ".TP" { print } { prev = $0 }' "$PAGE" | sort)
want=$({ "$DOC" man && printf '%s\n' '.BI \-\-check " FILE"' '.B \-\-eal\-help'; } | sort)
[ "$(wc -l <<<"$want")" -gt 50 ] || fail "options_doc man printed only $(wc -l <<<"$want") lines"
while IFS= read -r l; do fail "the man page's OPTIONS has no header '$l' (from the options table)"; done \
	< <(comm -23 <(echo "$want") <(echo "$page"))
while IFS= read -r l; do fail "the man page's OPTIONS header '$l' is no row of the options table"; done \
	< <(comm -13 <(echo "$want") <(echo "$page"))

# Completion: the options named in its 'case $prev' arms are the table's (or --check).
table=$("$DOC" complete)
words=$(awk '{ for (i = 1; i <= NF && $i ~ /^-/; i++) print $i }' <<<"$table" | sort -u)
for o in $(sed -n '/case \$prev in/,/esac/p' "$COMP" | grep -oE '^[[:space:]]*-[-a-zA-Z]+( \| -[-a-zA-Z]+)*\)' |
	tr -d ')|'); do
	[ "$o" = --check ] || grep -qxF -- "$o" <<<"$words" || fail "rdmapipe.bash completes after $o, no option of the table"
done

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/bin" "$dir/cwd"
ln -s "$(cd "$(dirname "$B")" && pwd)/$(basename "$B")" "$dir/bin/rdmapipe"
touch "$dir/cwd/a.conf"
n=0
for helpers in with without; do
	# Each line of the table: its words, then what completes its argument; one line out
	# per check, "word|what|COMPREPLY".
	out=$(cd "$dir/cwd" && PATH="$dir/bin:$PATH" HELPERS=$helpers COMP="$COMP" WORDS="$here/words.sh" TABLE="$table" bash --norc --noprofile <<'SH'
[ "$HELPERS" = with ] && [ -f /usr/share/bash-completion/bash_completion ] && . /usr/share/bash-completion/bash_completion
. "$COMP"
. "$WORDS"
complete_line() {
	COMP_WORDS=("$@")
	COMP_CWORD=$(($# - 1))
	COMP_LINE="$*"
	COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	_rdmapipe rdmapipe "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
	[ ${#COMPREPLY[@]} -eq 0 ] || words "${COMPREPLY[@]}"
}
all=" $(_rdmapipe_opts rdmapipe) "
while read -r -a row; do
	i=0
	while [[ ${row[i]} == -* ]]; do i=$((i + 1)); done
	what=${row[i]}
	want=
	[ ${#row[@]} -le $((i + 1)) ] || want=$(words "${row[@]:i+1}")
	for w in "${row[@]:0:i}"; do
		[[ $all == *" $w "* ]] && echo "$w|offered|yes" || echo "$w|offered|no"
		[ "$w" = --device ] || [ "$w" = -d ] && continue   # the host's RDMA devices
		echo "$w|$what:$want|$(complete_line rdmapipe -- "$w" '')"
	done
done <<<"$TABLE"
SH
)
	while IFS='|' read -r w what got; do
		n=$((n + 1))
		case $what in
		offered) [ "$got" = yes ] || fail "$helpers helpers: $w is not among the options offered after --" ;;
		choices:*) [ "$got" = "${what#choices:}" ] || fail "$helpers helpers: after $w: got '$got', want '${what#choices:}'" ;;
		files:*) [[ " $got" == *" a.conf "* ]] || fail "$helpers helpers: after $w: got '$got', want files (a.conf)" ;;
		*) [ -z "$got" ] || fail "$helpers helpers: after $w ($what): got '$got', want nothing" ;;
		esac
	done <<<"$out"
done
[ "$n" -gt 200 ] || fail "only $n completion checks ran: the table's reading broke"
echo "checked $(wc -l <<<"$want") man headers and $n completions against the options table"
[ "$fails" -eq 0 ] && echo "options_table: all checks passed" && exit 0
echo "options_table: $fails check(s) failed"
exit 1
