/* The loopback run: a writer lcore and a receiver lcore in one process, one RC QP pair
 * on one device. Setup, launch, summary and teardown; main() only parses and exits. */
#pragma once

#include "common.h"
#include "conf/options.h"

namespace rp {

/* Called after rte_eal_init. Returns an ExitCode; prints its own errors. */
int run_loopback(const RunOptions &opts);

} // namespace rp
