/* The pieces of a built pipeline's report that its files share (lib/control only):
 * what each flow and the whole run came to (graph_tally.cpp), the words for an lcore
 * or a flow (graph_view.cpp), the per-flow lines (graph_report.cpp), the totals and
 * the verdict (graph_summary.cpp) and the results files' contents (graph_results.cpp).
 * Each flow shape is tallied, viewed and reported by its row's hooks (shape_report.h). */
#pragma once

#include "control/report_writer.h"
#include "control/results.h"
#include "control/stats.h"
#include "engine/counters.h"
#include "pipeline/graph.h"

#include <cstdint>
#include <string>
#include <vector>

namespace rp {

/* A lane's messages that checked out: its read results and atomic return values; a
 * plain write's, all it completed once the flow's rdma_rx stage found the far end's
 * memory as the lanes' counts say it must be. */
inline uint64_t lane_verified(const GraphFlow &f, const Requester &q)
{
	const ResponderCounters &v = f.responder.c;
	if (f.params.verb != Verb::write)
		return q.c.verified;
	const bool memory_ok = f.rx_stage && f.rx_stage->done.load() && f.rx_stage->rc == 0 && v.payload_errors == 0 &&
			       (v.window_slots_checked > 0 || !f.params.verify);
	return memory_ok ? q.c.completed : 0;
}

/* What each flow delivered and how much of it checked out. What "verified" means
 * depends on the verb: the responder checks what it receives (its header, and its
 * payload unless a verify stage downstream does); the requester checks read results
 * and atomic return values; plain writes are acknowledged, then checked by the
 * window's final state. */
struct FlowTally {
	uint64_t sent = 0, completed = 0, delivered = 0, verified = 0, failed_qps = 0, errors = 0, data_errors = 0;
	bool ok = false;
	bool unobserved = false;   // a two-host server of a one-sided verb: nothing arrives that it sees
};

/* The run's figures over all its flows, for the summary and the results. */
struct Totals {
	std::vector<FlowTally> t;   // per flow
	FlowTally all;
	RequesterCounters q;        // merged over the flows
	ResponderCounters v;
	uint64_t start = UINT64_MAX, end = 0, bytes = 0, wrs = 0, held = 0, srq_posts = 0, rq_posts = 0, shortfalls = 0, lost = 0;
	bool pass = true, two_sided = false, writes = false, atomics = false, same = false;
	size_t npingpong = 0;
	uint32_t qps = 0;
	double secs = 0;
};

Totals totals_of(const Graph &g);

std::string lcore_stages(const GraphLcore &l);   // "gen,tx"
std::string lcore_roles(const GraphLcore &l);    // "requester+responder", or its stages' kinds
std::string ends_of(const GraphFlow &f);         // "lcore 1 -> lcore 2", or to (from) another host
std::string connected_of(const GraphFlow &f);    // how its QP pairs were connected
std::string flow_failure(const GraphFlow &f);    // why it failed, as it said first ("" if it did not)

/* The summary's head (devices, the shape the flows share, posting and polling), its
 * line per flow and per stage, the first bad message, a ping-pong's latency. */
void print_header(Report &out, const PipelineConf &c, const Graph &g, const Totals &x);
void print_flows(Report &out, const Graph &g, const Totals &x);
void print_first_bad(Report &out, const Graph &g);
void print_pingpong(Report &out, const GraphFlow &f, bool named);

/* The results of a finished run: its flows, lcores and stages, this host's role, the
 * sampled series (stop_signal: the signal that ended it early, or 0). */
void graph_results(const Graph &g, const Totals &x, const RunView &view, const Sampler &sampler, int stop_signal,
		   Results *res);

/* An lcore's CPU time per message of the run (all flows; 0 when none moved). */
inline double cpu_us_per_msg(const GraphLcore &l, const Totals &x)
{
	const uint64_t n = x.all.delivered > x.all.completed ? x.all.delivered : x.all.completed;
	return n ? l.cpu_s * 1e6 / static_cast<double>(n) : 0;
}

inline double us(uint64_t ns)
{
	return static_cast<double>(ns) / 1000.0;
}

} // namespace rp
