#!/usr/bin/env bash
# The man page against the binary: every option 'rdmapipe --help' prints is documented
# in docs/rdmapipe.1 (so the page cannot go stale silently), and the page renders
# without groff warnings.
set -u
B=${1:?usage: man.sh PATH/TO/rdmapipe PATH/TO/rdmapipe.1}
PAGE=${2:?usage: man.sh PATH/TO/rdmapipe PATH/TO/rdmapipe.1}
fails=0
help=$("$B" --help) || { echo "FAIL: rdmapipe --help exited $?"; exit 1; }
# The page as text, hyphens plain (roff writes them \-).
text=$(sed 's/\\-/-/g; s/\\&//g' "$PAGE")
opts=$(grep -oE -- '(^|[ ,(])--[a-z][a-z-]*[a-z]|(^|[ ,])-[a-zA-Z]\b' <<<"$help" | sed 's/^[ ,(]//' | sort -u)
n=0
for o in $opts; do
	n=$((n + 1))
	if ! grep -qE -- "(^|[^a-z-])$o([^a-z-]|$)" <<<"$text"; then
		echo "FAIL: $o is in --help but not in the man page"
		fails=$((fails + 1))
	fi
done
[ "$n" -gt 60 ] || { echo "FAIL: only $n options found in --help: the extraction broke"; fails=$((fails + 1)); }
echo "checked $n options of --help against the page"
# Every exit status the binary documents is in EXIT STATUS.
for s in 0 1 2 3 130; do
	sed -n '/^\.SH EXIT STATUS/,/^\.SH FILES/p' "$PAGE" | grep -qE "^\.B(R)? $s" ||
		{ echo "FAIL: exit status $s is not under EXIT STATUS"; fails=$((fails + 1)); }
done
warn=$(groff -man -Tutf8 -ww -z "$PAGE" 2>&1)
if [ -n "$warn" ]; then
	echo "FAIL: groff warns:"; echo "$warn"; fails=$((fails + 1))
fi
[ "$fails" -eq 0 ] && echo "man: all checks passed" && exit 0
echo "man: $fails check(s) failed"
exit 1
