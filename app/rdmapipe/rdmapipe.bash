# bash completion for rdmapipe(1): EAL options before "--", rdmapipe's after it (read
# from 'rdmapipe --help', so the list follows the binary), verbs after -v, pipeline
# files after -f and --check, RDMA devices after -d, the fixed choices of --post-api,
# --cq-api, --recv-queue, --poll, --transport, --reliability and --connect, and rdmapipe's log types
# after --log-level=. Works with bash-completion's helpers or without them.
# tests/docs/options_table.sh checks the choices and files offered here against the
# options table (lib/conf/options_table.cpp).

_rdmapipe_opts()
{
	# Cached per binary: --help runs once per shell.
	if [[ ${_rdmapipe_opts_of-} != "$1" ]]; then
		_rdmapipe_opts_cache=$("$1" --help 2>/dev/null |
			grep -oE -- '(^|[ ,])--?[a-zA-Z][a-z-]*' | sed 's/^[ ,]//' | sort -u | tr '\n' ' ')
		_rdmapipe_opts_of=$1
	fi
	printf '%s' "$_rdmapipe_opts_cache"
}

_rdmapipe_files()   # pipeline files and directories
{
	local IFS=$'\n'
	compopt -o filenames 2>/dev/null
	COMPREPLY=($(compgen -d -- "$1") $(compgen -f -X '!*.conf' -- "$1"))
}

_rdmapipe()
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
	local i app=0
	for ((i = 1; i < cword; i++)); do
		[[ ${words[i]} == -- ]] && app=1 && break
	done

	case $prev in
	-v | --verb)
		COMPREPLY=($(compgen -W 'send send_imm write write_imm read fetch_add cmp_swap' -- "$cur"))
		return ;;
	-f | --config | --check)
		_rdmapipe_files "$cur"
		return ;;
	-d | --device)
		COMPREPLY=($(compgen -W "$(ls /sys/class/infiniband 2>/dev/null)" -- "$cur"))
		return ;;
	--post-api) COMPREPLY=($(compgen -W 'classic wr' -- "$cur")); return ;;
	--cq-api) COMPREPLY=($(compgen -W 'classic ex' -- "$cur")); return ;;
	--recv-queue) COMPREPLY=($(compgen -W 'srq qp' -- "$cur")); return ;;
	--poll) COMPREPLY=($(compgen -W 'busy adaptive' -- "$cur")); return ;;
	--transport) COMPREPLY=($(compgen -W 'rc uc' -- "$cur")); return ;;
	--reliability) COMPREPLY=($(compgen -W 'software none' -- "$cur")); return ;;
	--connect) COMPREPLY=($(compgen -W 'cm direct' -- "$cur")); return ;;
	--output | --csv)
		compopt -o filenames 2>/dev/null
		COMPREPLY=($(compgen -f -- "$cur"))
		return ;;
	esac

	if [[ $app -eq 1 ]]; then
		[[ $cur == -* ]] && COMPREPLY=($(compgen -W "$(_rdmapipe_opts "${words[0]}")" -- "$cur"))
		return
	fi
	# Before "--": EAL's common options and our own that come there.
	if [[ $cur == --log-level=* ]]; then
		local types='rdmapipe.conf rdmapipe.verbs rdmapipe.engine rdmapipe.pipeline rdmapipe.control rdmapipe.app rdmapipe.*'
		local t lv=() v=${cur#--log-level=}
		for t in $types; do
			lv+=("$t:debug" "$t:info" "$t:notice" "$t:warning" "$t:error")
		done
		COMPREPLY=($(compgen -W "${lv[*]}" -- "$v"))
		return
	fi
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W '-l -c --lcores --main-lcore -m --in-memory --no-huge --no-pci --file-prefix
			--log-level= --syslog --huge-dir --socket-mem --check --eal-help --help --version --' -- "$cur"))
		[[ ${COMPREPLY-} == *= ]] && compopt -o nospace 2>/dev/null
	fi
}
complete -F _rdmapipe rdmapipe

# rdmapipe-perftest TEST [perftest flags] [host] (docs/perftest.md): the tests first,
# then the front end's flags (read from its --help), devices after -d, the choices of
# -c and -A.
_rdmapipe_perftest()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
	if ((COMP_CWORD == 1)); then
		COMPREPLY=($(compgen -W "ib_write_bw ib_write_lat ib_read_bw ib_read_lat ib_send_bw ib_send_lat ib_atomic_bw ib_atomic_lat" -- "$cur"))
		return
	fi
	# (if, not case: tests/docs/options_table.sh reads the case arms as rdmapipe's options)
	if [[ $prev == -d || $prev == --ib-dev ]]; then
		COMPREPLY=($(compgen -W "$(ls /sys/class/infiniband 2>/dev/null)" -- "$cur"))
	elif [[ $prev == -c || $prev == --connection ]]; then
		COMPREPLY=($(compgen -W "RC UC" -- "$cur"))
	elif [[ $prev == -A || $prev == --atomic_type ]]; then
		COMPREPLY=($(compgen -W "CMP_AND_SWAP FETCH_AND_ADD" -- "$cur"))
	elif [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$("${COMP_WORDS[0]}" --help 2>/dev/null |
			grep -oE -- '^  -[A-Za-z], --[A-Za-z0-9_-]+|^  --[A-Za-z0-9_-]+' | grep -oE -- '--?[A-Za-z0-9_-]+' | sort -u)" -- "$cur"))
	fi
}
complete -F _rdmapipe_perftest rdmapipe-perftest
