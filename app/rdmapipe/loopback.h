/* The loopback run: a writer lcore and a receiver lcore in one process, one RC QP pair
 * on one device. Setup, launch, summary and teardown; main() only parses and exits. */
#pragma once

#include "conf/options.h"

namespace rp {

enum ExitCode {
	kExitOk = 0,
	kExitRunFailed = 1,   // data, sequence or completion errors, stalls
	kExitUsage = 2,       // bad arguments or lcore set
	kExitSetup = 3,       // no usable device, resources could not be created
};

/* Called after rte_eal_init. Returns an ExitCode; prints its own errors. */
int run_loopback(const RunOptions &opts);

/* Set from a signal handler: asks a running loopback to stop. */
void request_stop();

} // namespace rp
