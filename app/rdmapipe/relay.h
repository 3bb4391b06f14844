/* The relay run of a pipeline file (pipeline.h, RelayPlan): two loopback flows and a
 * verify stage between them, on the lcores the file gives, each lcore running its
 * stages in one loop and its roles sharing its io context. */
#pragma once

#include "pipeline.h"

namespace rp {

/* Called after rte_eal_init. Returns an ExitCode; prints its own errors. */
int run_relay(const RelayPlan &plan);

} // namespace rp
