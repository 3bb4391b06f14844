/* Pipeline files the builder (lib/pipeline/graph) does not run yet, lowered to the run
 * kind that still runs them: one half of a two-host flow (listen, or peer). Every pipeline of loopback flows goes
 * through the builder instead (graph_runs). What none of them runs is refused here,
 * before EAL starts, with an error that names the setting and says so. */
#pragma once

#include "conf/config.h"
#include "conf/options.h"

#include <string>
#include <vector>

namespace rp {

/* Fills *o (whose test hooks and -q are kept) from the pipeline. Returns 0, or -1
 * with *err = "FILE:LINE: PATH: why it cannot run". */
int pipeline_to_options(const PipelineConf &c, RunOptions *o, std::string *err);

} // namespace rp
