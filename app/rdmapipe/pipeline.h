/* Running a pipeline file (-f). In this build a pipeline runs when it has the shape of
 * the built-in runs: loopback flows, each with one rdma_tx stage and one rdma_rx stage
 * (the rate run: flows sharing the two lcores' contexts) or one echo stage (ping-pong).
 * Everything else in the schema (rings, gen, verify and sink stages, remote peers,
 * rates) is validated by --check but refused here with an error that
 * says so, before EAL starts. */
#pragma once

#include "conf/config.h"
#include "conf/options.h"

#include <string>

namespace rp {

/* Fills *o (whose test hooks and -q are kept) from the pipeline. Returns 0, or -1
 * with *err = "FILE:LINE: PATH: why it cannot run". */
int pipeline_to_options(const PipelineConf &c, RunOptions *o, std::string *err);

} // namespace rp
