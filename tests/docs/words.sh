# Sourced by the completion tests (options_table.sh, explore_docs.sh) in the bash that
# completes. words WORD...: the words sorted as sort(1) sorts them (strcoll), a space
# after each, in bash itself: a sort and a tr started per completion were most of those
# tests' time.
words() {
	local -a r=()
	local w i
	for w in "$@"; do
		i=${#r[@]}
		while ((i > 0)) && [[ ${r[i - 1]} > $w ]]; do r[i]=${r[i - 1]}; i=$((i - 1)); done
		r[i]=$w
	done
	printf '%s ' "${r[@]}"
}
