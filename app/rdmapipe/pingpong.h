/* The ping-pong latency run (--pingpong): a pinging lcore and an echoing lcore in one
 * process, one RC QP each on their own SharedIOContext, on one device. */
#pragma once

#include "common.h"
#include "conf/options.h"

namespace rp {

/* Called after rte_eal_init. Returns an ExitCode; prints its own errors. */
int run_pingpong(const RunOptions &opts);

} // namespace rp
