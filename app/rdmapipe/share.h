/* The QP-sharing run of a pipeline file (pipeline.h, SharePlan): seed 002's experiment,
 * N QPs of RDMA READs shared by T lcores, or split among them, measured in one run. */
#pragma once

#include "pipeline.h"

namespace rp {

/* Called after rte_eal_init. Returns an ExitCode; prints its own errors. */
int run_share(const SharePlan &plan);

} // namespace rp
