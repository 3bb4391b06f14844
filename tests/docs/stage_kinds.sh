#!/usr/bin/env bash
# docs/configuration.md's table of stage kinds is the kinds table's (options_doc
# stage-kinds prints it from lib/stages/kinds.cpp): a kind added, or its rings or
# description changed, without the docs fails here.
set -u
DOC=${1:?usage: stage_kinds.sh PATH/TO/options_doc PATH/TO/configuration.md}
MD=${2:?usage: stage_kinds.sh PATH/TO/options_doc PATH/TO/configuration.md}
want=$("$DOC" stage-kinds)
got=$(awk '/^\| kind \| input \|/ { on = 1 } on && !/^\|/ { exit } on' "$MD")
if [ "$(wc -l <<<"$want")" -lt 9 ]; then
	echo "FAIL: options_doc stage-kinds printed $(wc -l <<<"$want") lines"
	exit 1
fi
if [ "$got" != "$want" ]; then
	echo "FAIL: $MD's stage kinds table differs from the kinds table:"
	diff <(echo "$want") <(echo "$got")
	exit 1
fi
echo "ok: $MD's stage kinds table is the kinds table ($(($(wc -l <<<"$want") - 2)) kinds)"
