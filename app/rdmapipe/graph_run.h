/* Running a pipeline through the builder (lib/pipeline/graph): open the device, build,
 * launch every lcore's loop with the control plane around it, then one summary and the
 * results files for whatever the pipeline was. */
#pragma once

#include "conf/config.h"
#include "conf/options.h"

#include <functional>
#include <string>
#include <vector>

namespace rp {

/* Called after rte_eal_init, for any validated pipeline. Returns an ExitCode; prints
 * its own errors. texts (if any) gets each step's results as JSON (a job's rank sends
 * them to rank 0); listening (if any) runs in each step once its servers listen,
 * before its clients connect (Graph::listening). */
/* Reads `file` (its stages checked against the lcores EAL will have), applies the
 * command line's part (apply_cli) and checks it all before anything starts: what flows
 * through it (each step of a size sweep) and, for a job, every rank's plan. Returns
 * kExitOk, or kExitUsage with the reason logged. */
int load_pipeline(const LcoreSet &lcores, const std::string &file, const RunOptions &cli, PipelineConf *conf);

int run_graph(const PipelineConf &c, const RunOptions &cli, std::vector<std::string> *texts = nullptr,
	      const std::function<int(std::string *)> &listening = {});

/* After rte_eal_init: the pipeline a file gave (cli.config_file set: conf), or the
 * command line's own, placed on the lcores EAL gave, run by run_graph. */
int run_pipeline(PipelineConf conf, const RunOptions &cli);

} // namespace rp
