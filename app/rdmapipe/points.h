/* --points: many pipelines run by one process, EAL started once (rdmapipe-explore
 * drives it as its child, the integration tests too). The protocol, one request a line
 * on stdin, fields between single tabs:
 *   CONF<TAB>LOG\n              the pipeline file, and the file its output goes to
 *   --<TAB>LOG<TAB>ARG...\n     rdmapipe's own arguments, as after "--" on a command
 *                               line (-d rxe0 -v send -n 1000, or -f FILE and more)
 * answered on stdout, once the point is over, by exactly one line:
 *   done<TAB>STATUS[<TAB>COUNTER=DELTA]...\n
 *     STATUS: what `rdmapipe -f CONF` (or `rdmapipe EAL -- ARG...`) exits with (0 pass,
 *     1 the run failed, 2 a bad file, argument or request line, 3 setup; 128+signal);
 *     then the hw_counters of the point's devices (the file's, or -d's) that moved
 *     during it, DEV.COUNTER when it names several
 * and, once EAL is up, then every second while a point runs, by
 *   alive\n           the process (and its host) still answers
 * CONF is loaded, checked and run as -f would (its run.output is its results file);
 * the arguments as the command line's, a request's options its own (none carried over;
 * --points, --dump-conf, -i, --help and --version refused); the run's stdout and
 * stderr (summary and log) go to LOG for the time. End of input:
 * EAL down, exit 0. SIGINT, SIGTERM: the current run stops as any run does, its answer
 * is written, and the process exits 128 + the signal. */
#pragma once

#include "conf/options.h"

namespace rp {

/* Called instead of starting EAL when opts.points. Returns the exit status. */
int run_points(int eal_argc, char **argv, const RunOptions &opts);

} // namespace rp
