/* Pipeline files the builder (lib/pipeline/graph) does not run yet, lowered to the run
 * kinds that still run them: one half of a two-host flow (listen, or peer), seed 002's
 * QP sharing. Every pipeline of loopback flows goes
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

/* Seed 002's QP-sharing experiment: one loopback flow of N QPs of RDMA READs whose
 * rdma_tx stages are on T lcores (lanes). share_qps: every lane posts to every QP and
 * polls their one send CQ, handing the other lanes' completions over through rings;
 * else lane t owns QPs t, t + T, ... with a send CQ of its own. The far ends are
 * passive: a READ needs nothing from the responder's CPU. */
struct SharePlan {
	RunOptions o;                  // the flow: qps = N, messages over all lanes
	std::vector<unsigned> lanes;   // the rdma_tx stages' lcores
	bool shared = false;
	std::string name;
};

/* 1 when c has that shape (a flow with two or more rdma_tx stages): then *p is filled,
 * or -1 with *err when it cannot run. 0: it is not. */
int pipeline_to_share(const PipelineConf &c, const RunOptions &cli, SharePlan *p, std::string *err);

} // namespace rp
