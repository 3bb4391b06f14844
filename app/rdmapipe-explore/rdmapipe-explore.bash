# bash completion for rdmapipe-explore(1): its options before "--", the EAL options
# of each child rdmapipe after it; space files (.conf) and directories after -f and
# --space, files after --rdmapipe, directories after -o and --out, the strategies after
# --strategy, the plant kinds after --plant (also in the --opt=value form). Works with
# bash-completion's helpers or without them.
# tests/docs/explore_docs.sh checks that every option 'rdmapipe-explore --help' prints
# is offered here.

_rdmapipe_explore()
{
	local cur prev words cword
	if declare -F _init_completion >/dev/null; then
		_init_completion -n = || return
	else
		cur=${COMP_WORDS[COMP_CWORD]}
		prev=${COMP_WORDS[COMP_CWORD - 1]}
		words=("${COMP_WORDS[@]}")
		cword=$COMP_CWORD
	fi
	local i child=0
	for ((i = 1; i < cword; i++)); do
		[[ ${words[i]} == -- ]] && child=1 && break
	done

	if [[ $child -eq 1 ]]; then
		# After "--": EAL's common options, given to each child rdmapipe.
		[[ $cur == -* ]] && COMPREPLY=($(compgen -W '-l -c --lcores --main-lcore -m --in-memory --no-huge --no-shconf
			--no-pci --file-prefix --log-level --syslog --huge-dir --socket-mem' -- "$cur"))
		return
	fi

	# --opt=value: complete the value as after "--opt value" (one word with the
	# helpers' -n =; without them bash splits it at "=").
	local eq=
	if [[ $cur == --?*=* ]]; then
		prev=${cur%%=*}
		cur=${cur#*=}
		eq=1
	elif [[ $cur == = && $prev == --?* ]]; then
		cur=
		eq=1
	elif [[ $prev == = ]] && ((cword >= 2)); then
		prev=${words[cword - 2]}
		eq=1
	fi
	case $prev in
	-f | --space)   # space files and directories
		local IFS=$'\n'
		compopt -o filenames 2>/dev/null
		COMPREPLY=($(compgen -d -- "$cur") $(compgen -f -X '!*.conf' -- "$cur"))
		return ;;
	--rdmapipe)
		local IFS=$'\n'
		compopt -o filenames 2>/dev/null
		COMPREPLY=($(compgen -f -- "$cur"))
		return ;;
	-o | --out)
		local IFS=$'\n'
		compopt -o filenames 2>/dev/null
		COMPREPLY=($(compgen -d -- "$cur"))
		return ;;
	--strategy)
		COMPREPLY=($(compgen -W 'anneal random grid' -- "$cur"))
		return ;;
	--plant)   # KIND:CONDITIONS, e.g. corrupt:size>=8192,qps>=4
		[[ $cur != *:* ]] && COMPREPLY=($(compgen -W 'corrupt: slow:' -- "$cur")) &&
			compopt -o nospace 2>/dev/null
		return ;;
	--budget | --seed | --repeats | --need | --perf-flag | --bare-flag | --stop-after | --start-timeout)   # a number
		return ;;
	--runner | --repro-on)   # a shell command (NAME=CMD)
		COMPREPLY=($(compgen -c -- "$cur"))
		return ;;
	esac
	[[ -n $eq ]] && return

	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W '-f --space --check --budget --seed --strategy --stop-after -o --out --rdmapipe
			--runner --start-timeout --repro-on --plant --repeats --need --perf-flag --bare-flag --no-bare -q --quiet -h --help --version --' -- "$cur"))
	fi
}
complete -F _rdmapipe_explore rdmapipe-explore
