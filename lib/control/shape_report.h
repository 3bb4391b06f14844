/* The report's side of the flow shapes' rows (pipeline/flow_shape.h): for each shape,
 * what its flow came to and how the summary, the results, the stats lines and the
 * console show it. One row a shape, in FlowShape's order, chosen by the flow's row
 * (f.form): the report's files call a flow's hooks and never ask its shape. The hooks
 * live in the files of what they make (graph_tally, graph_report, graph_summary,
 * graph_view, graph_results); shape_report.cpp gathers them. */
#pragma once

#include "control/graph_parts.h"
#include "control/graph_report.h"

#include <string>

namespace rp {

struct ShapeReport {
	FlowShape shape;
	/* Its flow is a ping-pong: a run all of whose flows are is reported as one (its
	 * mode, its head line, its error counters named ping and echo). */
	bool pingpong = false;
	FlowTally (*tally)(const GraphFlow &f, const Graph &g);
	void (*merge)(Totals *x, const GraphFlow &f);               // its counters into the run's
	uint64_t (*wrs)(const GraphFlow &f, const FlowTally &t);    // the WRs it posted
	bool (*first_bad)(Report &out, const GraphFlow &f, const std::string &who);
	std::string (*ends)(const GraphFlow &f);                    // where it goes, for its line
	void (*detail)(Report &out, const GraphFlow &f, bool several);   // under its line
	void (*failures)(Report &out, const GraphFlow &f);          // a run of this one flow: why its roles failed
	void (*reliability)(Report &out, const GraphFlow &f, const std::string &n);
	/* Its chains' completion latency (a requester here), or a ping-pong's half round
	 * trips (where the pings are): nullptr when it has none of that kind. */
	const Histogram *(*completion_latency)(const GraphFlow &f);
	const Histogram *(*half_rtt)(const GraphFlow &f);
	void (*view)(const GraphFlow &f, RunView *v);
	void (*sampled)(const GraphFlow &f, Sampler *s);
	void (*results)(const GraphFlow &f, const FlowTally &t, Results *res);
};

/* f's row: the one place that maps a flow's shape to its report. */
const ShapeReport &shape_report(const GraphFlow &f);

/* The hooks, by the file they are in. graph_tally.cpp: */
FlowTally tally_lanes(const GraphFlow &f, const Graph &g);
FlowTally tally_pingpong(const GraphFlow &f, const Graph &g);
FlowTally tally_remote(const GraphFlow &f, const Graph &g);
FlowTally tally_loopback(const GraphFlow &f, const Graph &g);
void merge_lanes(Totals *x, const GraphFlow &f);
void merge_pingpong(Totals *x, const GraphFlow &f);
void merge_ends(Totals *x, const GraphFlow &f);
uint64_t wrs_pingpong(const GraphFlow &f, const FlowTally &t);
uint64_t wrs_ends(const GraphFlow &f, const FlowTally &t);
/* graph_report.cpp: */
bool first_bad_pingpong(Report &out, const GraphFlow &f, const std::string &who);
bool first_bad_lanes(Report &out, const GraphFlow &f, const std::string &who);
bool first_bad_ends(Report &out, const GraphFlow &f, const std::string &who);
std::string lanes_ends(const GraphFlow &f);
void detail_lanes(Report &out, const GraphFlow &f, bool several);
void detail_pingpong(Report &out, const GraphFlow &f, bool several);
void detail_ends(Report &out, const GraphFlow &f, bool several);
/* graph_summary.cpp: */
void failures_pingpong(Report &out, const GraphFlow &f);
void failures_ends(Report &out, const GraphFlow &f);
void print_pingpong_reliability(Report &out, const GraphFlow &f, const std::string &n);
void print_ends_reliability(Report &out, const GraphFlow &f, const std::string &n);
const Histogram *ends_latency(const GraphFlow &f);
const Histogram *pingpong_half_rtt(const GraphFlow &f);
/* graph_view.cpp: */
void view_lanes(const GraphFlow &f, RunView *v);
void view_pingpong(const GraphFlow &f, RunView *v);
void view_ends(const GraphFlow &f, RunView *v);
void sampled_lanes(const GraphFlow &f, Sampler *s);
void sampled_pingpong(const GraphFlow &f, Sampler *s);
void sampled_ends(const GraphFlow &f, Sampler *s);
/* graph_results.cpp: */
void results_lanes(const GraphFlow &f, const FlowTally &t, Results *res);
void results_pingpong(const GraphFlow &f, const FlowTally &t, Results *res);
void results_ends(const GraphFlow &f, const FlowTally &t, Results *res);

} // namespace rp
