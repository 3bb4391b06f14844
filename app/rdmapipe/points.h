/* --points: many pipeline files run by one process, EAL started once (rdmapipe-explore
 * drives it as its child). The protocol, one request a line on stdin:
 *   CONF<TAB>LOG\n    the pipeline file, and the file its output goes to
 * answered on stdout, once the point is over, by exactly one line:
 *   done<TAB>STATUS\n STATUS: what `rdmapipe -f CONF` exits with (0 pass, 1 the run
 *                     failed, 2 a bad file or request line, 3 setup; 128+signal)
 * CONF is loaded, checked and run as -f would (its run.output is its results file);
 * the run's stdout and stderr (summary and log) go to LOG for the time. End of input:
 * EAL down, exit 0. SIGINT, SIGTERM: the current run stops as any run does, its answer
 * is written, and the process exits 128 + the signal. */
#pragma once

#include "conf/options.h"

namespace rp {

/* Called instead of starting EAL when opts.points. Returns the exit status. */
int run_points(int eal_argc, char **argv, const RunOptions &opts);

} // namespace rp
