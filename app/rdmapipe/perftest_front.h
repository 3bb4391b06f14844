/* The perftest front end (docs/perftest.md): `rdmapipe-perftest TEST [flags] [host]`, or
 * rdmapipe under a test's name (ib_write_bw, ...), translated into rdmapipe's arguments
 * (conf/perftest.h) and run as any command line is; its table printed as perftest's. */
#pragma once

#include "conf/options.h"
#include "control/results.h"

#include <string>

namespace rp {

struct Device;

/* The test this invocation is ("" : rdmapipe itself; "?": rdmapipe-perftest naming none). */
std::string perftest_invoked(int argc, char **argv);

/* Runs test: argv translated, then run_args (main's own path) with the arguments
 * "argv[0] EAL... -- rdmapipe's..." and the report's settings. Returns the exit status. */
int perftest_main(int argc, char **argv, const std::string &test,
		  int (*run_args)(int argc, char **argv, const PerftestReportConf *pt));

/* pt with what the run will use where the perftest flags did not say (its header's
 * TX depth, CQ moderation, post list). */
PerftestReportConf perftest_settled(PerftestReportConf pt, const RunOptions &o);

/* After each run (a size of a sweep): the header before the first, then its row. */
void perftest_step(const RunOptions &cli, const Results &res, const Device &dev);

/* After the last: the closing line and --out_json's file. Returns rc, or the file's
 * failure. */
int perftest_finish(const RunOptions &cli, int rc);

} // namespace rp
