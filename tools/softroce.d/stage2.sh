#!/bin/bash
# Guest PID 1 after switch_root (tools/softroce copies this file into the
# per-run folder, /run/softroce here). Sets up the rxe devices, runs the
# caller's command with its output on ttyS1 (the caller's stdout) and writes
# the command's exit status into the per-run folder: qemu's own exit status
# says nothing about the guest. Logs go to the console (ttyS0, a host file).
set -uo pipefail
run=/run/softroce
status=
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin

# Any process but us and kernel threads (which have no command line)? Plain
# reads, no forks: each fork costs tens of ms under TCG.
stragglers() {
	local p c
	for p in /proc/[0-9]*; do
		[[ ${p#/proc/} == 1 ]] && continue
		c=
		read -r -d '' c <"$p/cmdline" 2>/dev/null
		[[ -n $c ]] && return 0
	done
	return 1
}

# finish [REASON]: with a reason, no status is written and the host reports
# REASON as softroce's own failure rather than as the command's status.
finish() {
	# Stragglers (a perftest server left behind) keep ttyS1 open; once they
	# are gone, closing fd 3 is the port's last close, which waits for the
	# UART to drain, so no output is lost to the power-off.
	if stragglers; then
		kill -TERM -1 2>/dev/null
		sleep 0.2
		kill -KILL -1 2>/dev/null
		sleep 0.1
	fi
	exec 3>&-
	if (($#)); then
		echo "stage2: $1"
		echo "$1" >$run/error
	else
		echo "$status" >$run/status.tmp && mv $run/status.tmp $run/status
	fi
	sync
	busybox poweroff -f
	exit 1 # not reached; if it were, the kernel panics and qemu exits
}

# shellcheck source=/dev/null
. $run/config || finish "cannot read $run/config" # SR_CWD SR_SHELL SR_HUGEPAGES SR_ROWS SR_COLS SR_PLUGINS SR_STDIN SR_ENV SR_CMD
echo softroce >/proc/sys/kernel/hostname
ip link set lo up

# The VM is ours to reshape, so the pair and the local-table move are always on.
state=/run/rxe-setup.state
rxe_env=$("$run/rxe-setup.sh" up --pair --move-local --hugepages "$SR_HUGEPAGES" "$state") ||
	finish "setting up the rxe devices failed"
mapfile -t rxe_env <<<"$rxe_env"
env=("${SR_ENV[@]}" "${rxe_env[@]}" "${SR_ENV_USER[@]}")
echo "stage2: devices ready: ${rxe_env[*]}"

# The host's matplotlib font list (tools/softroce copies it when the host has one).
[[ -d $run/matplotlib ]] && mkdir -p /root/.cache && cp -r $run/matplotlib /root/.cache/
cd "$SR_CWD" || finish "cannot cd to $SR_CWD in the guest"
# Held open to the end: a serial tty forgets its window size at its last
# close, and that last close is also what waits for the output to drain.
exec 3<>/dev/ttyS1
# --dpdk-plugins: the guest is a mount namespace of its own.
hide=()
[[ -n $SR_PLUGINS ]] && hide=(bash "$run/dpdk-plugins.sh" "$SR_PLUGINS")
if ((SR_SHELL)); then
	# A login-like session on ttyS1: job control needs it as controlling tty.
	stty sane rows "$SR_ROWS" cols "$SR_COLS" <&3
	setsid -w -c "${hide[@]}" env -i "${env[@]}" bash -i <&3 >&3 2>&3 3>&-
	status=$?
else
	# raw: bytes reach the caller exactly as written (no \n -> \r\n).
	stty raw -echo <&3
	# --stdin: the caller's bytes reach the command as sent (raw: no echo, no editing).
	if ((SR_STDIN)); then exec 4<&3; else exec 4</dev/null; fi
	"${hide[@]}" env -i "${env[@]}" "${SR_CMD[@]}" <&4 >&3 2>&3 3>&- 4<&-
	status=$?
fi
echo "stage2: command exited with status $status"
finish
