/* Running a pipeline through the builder (lib/pipeline/graph): open the device, build,
 * launch every lcore's loop with the control plane around it, then one summary and the
 * results files for whatever the pipeline was. */
#pragma once

#include "conf/config.h"
#include "conf/options.h"

namespace rp {

/* Called after rte_eal_init, for any validated pipeline. Returns an ExitCode; prints
 * its own errors. */
int run_graph(const PipelineConf &c, const RunOptions &cli);

} // namespace rp
