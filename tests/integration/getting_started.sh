#!/usr/bin/env bash
# docs/getting-started.md's commands that need RDMA (```sh rxe, two-hosts and mpirun
# blocks), run as the doc shows them with the VM's names put in (as the doc says):
# any command that fails or does not print a line the doc shows fails the test.
. "$(dirname "$0")/lib.sh"
need_device
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$(dirname "$RDMAPIPE")/../.." && pwd)
kinds=rxe
maps=(--map "rxe0=$DEV")
if [ -n "${RXE_A_DEV:-}" ] && [ -n "${RXE_B_DEV:-}" ]; then
	kinds+=,two-hosts
	maps+=(--map "rxeA=$RXE_A_DEV" --map "rxeB=$RXE_B_DEV" --map "10.2.0.1=$RXE_A_ADDR" --map "10.2.0.2=$RXE_B_ADDR")
else
	part_skipped "the two-hosts blocks: no rxeA/rxeB pair (run under tools/softroce)"
fi
if command -v mpirun >/dev/null && ldd "$RDMAPIPE" | grep -q libmpi; then
	kinds+=,mpirun
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
else
	part_skipped "the mpirun blocks: no mpirun, or $RDMAPIPE built without MPI"
fi
[ "$(nproc)" -lt 3 ] && maps+=(--map "-l 0-2=--lcores '(0-2)@(0-1)'")
python3 "$src/tests/docs/doc_commands.py" "$src/docs/getting-started.md" "$kinds" \
	--source "$src" --build "$build" "${maps[@]}" || fails=$((fails + 1))
finish
