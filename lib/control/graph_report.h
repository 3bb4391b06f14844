/* The control plane's report of a built pipeline (lib/pipeline/graph): what the console,
 * the stats lines and telemetry see of it while it runs, and once its lcores are done
 * the summary it prints and the results it fills. Main lcore only. */
#pragma once

#include "conf/config.h"
#include "control/report_writer.h"
#include "control/results.h"
#include "control/stats.h"
#include "pipeline/graph.h"
#include "verbs/async_events.h"

#include <string>
#include <vector>

namespace rp {

/* The view of g, a pipeline of c, for the console, the stats lines and telemetry. */
RunView graph_view(const PipelineConf &c, const Graph &g, const std::string &what);

/* The flows a sampler reads (one per flow; a flow with lanes, one per lane), in the
 * results' order. */
void graph_sampled_flows(const Graph &g, Sampler *s);

/* One step of a size sweep, for the table after the last. */
struct SweepRow {
	std::string sizes;
	double mmsgs = 0, gbps = 0;
	double median_us = -1;   // ping-pong only
	bool pass = false;
	bool ran = false;
};

/* Writes to out the summary of a run of g whose lcores are done, fills *res for the results
 * files (and *row, if given, for a size sweep's table). Returns whether it passed:
 * every message sent, delivered and verified, no error, nothing left behind. */
bool graph_summary(Report &out, const PipelineConf &c, const Graph &g,
		   const std::vector<const AsyncEventWatch *> &async, const RunView &view, const Sampler &sampler,
		   SweepRow *row, Results *res);

} // namespace rp
